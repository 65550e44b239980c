"""Profiles: the emulator played as a *different* service that still follows the interface.

The emulator is genlab's reading of the interface. A real service chooses otherwise wherever
the interface says "not shown", and sits behind proxies, CDNs and signed URLs. A profile wraps
the emulator's ASGI app (its internals untouched) and changes what a client sees there:

``error-shapes``  a failed task's ``error`` in other shapes: ``{type, detail}``, a numeric
                  ``code`` with a null ``message``, a plain string, ``{reason}``.
``cdn``           media on a second origin (its own port): signed links that expire
                  (``link_ttl``), answered with a redirect, then bytes typed
                  ``application/octet-stream`` at a URL without an extension.
``proxy``         a proxy in front: some requests get an HTML 502 page without reaching the
                  service; some submits are processed, then answered with an HTML 504 page.
``eventual``      a task answers 404 for ``not_found_for`` seconds after its submit.
``prefix``        the API lives under ``/api`` (base URL ``http://host:port/api``).
``odd-ids``       task ids with ``/``, ``?``, ``#``, ``%`` and spaces in them.
``newer``         a service a step ahead of genlab's catalog: it takes the field
                  ``camera_motion`` and the model ``video-next`` (served like video-a).
``different``     all of the above at once (the proxy's failures at low rates).

Run one with ``genlab serve --profile different`` or :func:`start_profile`. Tests also steer
a running profile through :class:`Controls` (force the next failures, read what the media host
saw).

Example (it serves on local ports)::

    with start_profile("different", api_key="k", time_scale=0.02) as service:
        client = genlab.Client(service.base_url, "k")
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from starlette.types import Receive, Scope, Send

from genlab.emulator._profile_asgi import (
    call,
    generic_type,
    inner,
    origin_port,
    page,
    port_of,
    read_body,
    respond,
    to_json,
)
from genlab.emulator._server import EmulatorApp

NEW_FIELDS = ("camera_motion",)
"""Fields the ``newer`` profile takes that genlab's catalog does not declare."""
NEW_MODELS = {"video-next": "video-a"}
"""Models the ``newer`` profile serves that the catalog does not know (served like the value)."""
ERROR_SHAPES: dict[str, Callable[[str], Any]] = {
    "type-detail": lambda reason: {"type": "generation_error", "detail": reason},
    "numeric-code": lambda reason: {"code": 5003, "message": None, "reason": reason},
    "string": lambda reason: reason,
    "reason-only": lambda reason: {"reason": reason},
}
"""How the ``error-shapes`` profile writes a failed task's error, given its reason text."""


@dataclass(frozen=True)
class Profile:
    """What a profile changes. Every field defaults to the emulator's own behaviour."""

    name: str
    summary: str
    error_shapes: bool = False
    media_host: bool = False
    link_ttl: float = 300.0
    html_errors: float = 0.0
    lost_answers: float = 0.0
    not_found_for: float = 0.0
    path_prefix: str = ""
    odd_ids: bool = False
    newer: bool = False


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("emulator", "genlab's emulator as it is"),
        Profile("error-shapes", "failed tasks' errors in other shapes", error_shapes=True),
        Profile("cdn", "media on a second origin: redirects, expiring signed links",
                media_host=True),
        Profile("proxy", "HTML 502 pages before, and 504 pages after, the service",
                html_errors=0.1, lost_answers=0.05),
        Profile("eventual", "tasks answer 404 for a second after their submit",
                not_found_for=1.0),
        Profile("prefix", "the API under /api", path_prefix="/api"),
        Profile("odd-ids", "task ids with / ? # % and spaces", odd_ids=True),
        Profile("newer", "a field and a model genlab's catalog does not know yet", newer=True),
        Profile("different", "all of the above", error_shapes=True, media_host=True,
                html_errors=0.02, lost_answers=0.01, not_found_for=1.0, path_prefix="/api",
                odd_ids=True, newer=True),
    )
}
"""Every named profile."""


def get_profile(name: str) -> Profile:
    """The profile called ``name``; a ValueError listing the names otherwise.

    Example:
        >>> get_profile("cdn").media_host
        True
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"no profile {name!r}; choose one of: {', '.join(PROFILES)}"
        ) from None


@dataclass
class Controls:
    """A running profile's knobs and observations (tests set and read them)."""

    link_ttl: float
    next_html_errors: int = 0  # API requests answered with a 502 page, never forwarded
    next_lost_answers: int = 0  # submits processed, then answered with a 504 page
    next_unreadable: int = 0  # task queries answered 200 with a page that is no record
    error_shape: str | None = None  # None: the shapes in turn
    media_requests: int = 0
    media_with_key: int = 0  # media requests that carried an Authorization header
    record_reads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, name: str) -> bool:
        """True (and one fewer left) when a forced failure ``name`` is pending."""
        with self.lock:
            left: int = getattr(self, name)
            if left > 0:
                setattr(self, name, left - 1)
            return left > 0


class ProfileApp:
    """The emulator's app as a profile plays it (see the module docstring).

    Args:
        app: the emulator app (from :func:`~genlab.emulator.create_app`).
        profile: what to change.
        media_origin: ``http://host:port`` of the second listener, for ``media_host``.
        seed: makes the random failures repeatable.
    """

    def __init__(
        self, app: EmulatorApp, profile: Profile, *, media_origin: str | None = None,
        seed: int | None = None,
    ) -> None:
        if profile.media_host and media_origin is None:
            raise ValueError(f"profile {profile.name!r} needs a media_origin (a second port)")
        self.app, self.profile, self.media_origin = app, profile, media_origin
        self.emulator = app.emulator
        self.controls = Controls(link_ttl=profile.link_ttl)
        self._random = random.Random(seed)
        self._secret = secrets.token_bytes(16)
        self._public: dict[str, str] = {}  # emulator id -> the id clients see
        self._real: dict[str, str] = {}  # the id clients see -> emulator id
        self._born: dict[str, float] = {}
        self._models: dict[str, str] = {}  # emulator id -> the model clients asked for
        self._shapes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.media_origin and origin_port(scope) == port_of(self.media_origin):
            await self._media(scope, receive, send)
            return
        path, prefix = scope["path"], self.profile.path_prefix
        if prefix:
            if not path.startswith(prefix + "/"):
                await page(send, 404, "Not Found")  # the web server's page, not the API's
                return
            path = path[len(prefix):]
        if path.startswith("/media/"):
            if self.media_origin:
                await page(send, 404, "Not Found")  # media live on the CDN only
            else:
                await self.app(inner(scope, path, prefix), receive, send)
            return
        parts = path.split("/")
        if scope["method"] == "POST" and len(parts) == 4 and parts[3] == "generate":
            await self._submit(scope, receive, send, path)
        elif scope["method"] == "GET" and len(parts) >= 5 and parts[3] == "tasks":
            await self._query(scope, receive, send, path)
        else:
            await self.app(inner(scope, path, prefix), receive, send)

    # --- the API -------------------------------------------------------------------------

    def _roll(self, forced: str, rate: float) -> bool:
        return self.controls.take(forced) or (rate > 0 and self._random.random() < rate)

    async def _submit(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        if self._roll("next_html_errors", self.profile.html_errors):
            await page(send, 502, "Bad Gateway")
            return
        body = await read_body(receive)
        asked_model = None
        if self.profile.newer:
            try:
                data = json.loads(body)
            except ValueError:
                data = None
            if isinstance(data, dict):
                for name in NEW_FIELDS:
                    data.pop(name, None)
                asked_model = data.get("model")
                if asked_model in NEW_MODELS:
                    data["model"] = NEW_MODELS[asked_model]
                body = json.dumps(data).encode()
        status, headers, answer = await call(self.app, inner(scope, path, ""), body)
        data = to_json(answer)
        if status == 200 and isinstance(data, dict) and isinstance(data.get("task_id"), str):
            real = data["task_id"]
            self._born[real] = time.monotonic()
            if isinstance(asked_model, str) and asked_model in NEW_MODELS:
                self._models[real] = asked_model
            if self._roll("next_lost_answers", self.profile.lost_answers):
                await page(send, 504, "Gateway Timeout")  # processed, billed, answer lost
                return
            data = self._outgoing(data)
            answer = json.dumps(data).encode()
        await respond(send, status, headers, answer)

    async def _query(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        # The id is one percent-encoded segment: read it from the raw path, since the decoded
        # one has lost which "/" belonged to the id.
        raw = (scope.get("raw_path") or path.encode()).decode("latin-1")
        _, _, segment = raw.rpartition("/tasks/")
        public = unquote(segment)
        real = self._real.get(public, public)
        kind_path = path.split("/tasks/", 1)[0]
        if self._roll("next_html_errors", self.profile.html_errors):
            await page(send, 502, "Bad Gateway")
            return
        born = self._born.get(real)
        if born is not None and time.monotonic() - born < self.profile.not_found_for:
            body = {"error": {"code": "NOT_FOUND", "message": f"no task {public!r}",
                              "status": 404, "request_id": "req-profile"}}
            await respond(send, 404, [], json.dumps(body).encode())
            return
        if self.controls.take("next_unreadable"):
            await page(send, 200, "Please sign in to continue")
            return
        inner_path = f"{kind_path}/tasks/{quote(real, safe='')}"
        prefix = self.profile.path_prefix
        status, headers, answer = await call(self.app, inner(scope, inner_path, prefix), b"")
        data = to_json(answer)
        if status == 200 and isinstance(data, dict):
            with self.controls.lock:
                self.controls.record_reads += 1
            answer = json.dumps(self._outgoing(data)).encode()
        await respond(send, status, headers, answer)

    def _outgoing(self, data: dict[str, Any]) -> dict[str, Any]:
        """A task object or record as this profile's service writes it."""
        real = data.get("task_id")
        if isinstance(real, str):
            if real in self._models:
                data["model"] = self._models[real]
            if self.profile.odd_ids:
                data["task_id"] = self._odd_id(real)
        if self.profile.error_shapes and data.get("error") is not None:
            error = data["error"]
            reason = error.get("message") if isinstance(error, dict) else str(error)
            shape = self.controls.error_shape
            if shape is None:
                names = list(ERROR_SHAPES)
                shape, self._shapes = names[self._shapes % len(names)], self._shapes + 1
            data["error"] = ERROR_SHAPES[shape](reason or "the generator failed")
        if self.media_origin:
            for item in [*(data.get("videos") or []), *(data.get("images") or [])]:
                for key in ("url", "cover_url", "last_frame_url"):
                    if isinstance(item.get(key), str):
                        item[key] = self._signed(item[key])
        return data

    def _odd_id(self, real: str) -> str:
        public = self._public.get(real)
        if public is None:
            public = f"jobs/{real[-6:]}?v=2#take 1%"
            self._public[real], self._real[public] = public, real
        return public

    # --- the media host --------------------------------------------------------------------

    def _signature(self, target: str, expires: str) -> str:
        mac = hmac.new(self._secret, f"{target}|{expires}".encode(), hashlib.sha256)
        return mac.hexdigest()[:32]

    def _signed(self, url: str) -> str:
        _, marker, target = url.partition("/media/")
        if not marker:
            return url
        expires = f"{time.time() + self.controls.link_ttl:.3f}"
        token = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
        sig = self._signature(target, expires)
        return f"{self.media_origin}/cdn/{token}?expires={expires}&signature={sig}"

    async def _media(self, scope: Scope, receive: Receive, send: Send) -> None:
        with self.controls.lock:
            self.controls.media_requests += 1
            keyed = any(name.lower() == b"authorization" for name, _ in scope["headers"])
            self.controls.media_with_key += keyed
        if keyed:  # a media host has no business with the API key
            await page(send, 400, "This host takes no Authorization header")
            return
        path = scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if path.startswith("/cdn/"):
            token = path[len("/cdn/"):]
            try:
                target = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            except ValueError:
                await page(send, 404, "Not Found")
                return
            expires = (query.get("expires") or [""])[0]
            signature = (query.get("signature") or [""])[0]
            if not hmac.compare_digest(signature, self._signature(target, expires)):
                await page(send, 403, "AccessDenied: bad signature")
                return
            if float(expires) < time.time():
                await page(send, 403, "AccessDenied: Request has expired")
                return
            blob = f"/blob/{quote(target)}?expires={expires}&signature={signature}"
            await respond(send, 302, [(b"location", blob.encode())], b"")
            return
        if path.startswith("/blob/"):
            await self.app(inner(scope, "/media/" + path[len("/blob/"):], ""), receive,
                           generic_type(send))
            return
        await page(send, 404, "Not Found")
