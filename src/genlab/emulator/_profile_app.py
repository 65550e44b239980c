"""The emulator's app as a profile plays it: each request goes to what the profile changes
(see :mod:`genlab.emulator._profiles` for the profiles and ``_profile_controls`` for the knobs).

The emulator itself is never changed: a profile decides what reaches it, and rewrites what it
answers. Its ledger therefore still says what was created and billed.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from typing import Any
from urllib.parse import quote, unquote

from starlette.types import Receive, Scope, Send

from genlab._wire import ErrorEnvelope
from genlab.emulator._profile_asgi import (
    call,
    inner,
    origin_port,
    page,
    port_of,
    read_body,
    respond,
    respond_slowly,
    to_json,
)
from genlab.emulator._profile_cdn import MediaHost
from genlab.emulator._profile_controls import Controls
from genlab.emulator._profile_gates import (
    InFlight,
    Refusal,
    authorized,
    bearer,
    cap_refusal,
    envelope,
    gateway_refusal,
    quota_refusal,
    sloppy_refusal,
)
from genlab.emulator._profile_records import PublicIds, Sloppy, other_model
from genlab.emulator._profiles import ERROR_SHAPES, NEW_FIELDS, NEW_MODELS, Profile
from genlab.emulator._server import EmulatorApp
from genlab.emulator._tasks import new_id

_RECENT = 32  # tasks of each kind remembered as candidates for a misrouted answer


class ProfileApp:
    """The emulator's app as a profile plays it (see the module docstring).

    Args:
        app: the emulator app (from :func:`~genlab.emulator.create_app`).
        profile: what to change.
        media_origin: ``http://host:port`` of the second listener, for ``media_host``.
        seed: makes the random failures repeatable.

    Attributes:
        controls: the knobs tests set, and what the profile saw (:class:`Controls`).
        emulator: the emulator's state (``ledger()``, ``book``, ``faults``).
        closing: set when the server stops: a trickling answer then ends at once.

    Example:
        >>> from genlab.emulator import start_profile
        >>> with start_profile("cdn", api_key="k", time_scale=0.02) as service:
        ...     service.app.profile.name, type(service.app.controls).__name__
        ('cdn', 'Controls')
    """

    def __init__(
        self, app: EmulatorApp, profile: Profile, *, media_origin: str | None = None,
        seed: int | None = None,
    ) -> None:
        if profile.media_host and media_origin is None:
            raise ValueError(f"profile {profile.name!r} needs a media_origin (a second port)")
        self.app, self.profile, self.media_origin = app, profile, media_origin
        self.emulator = app.emulator
        self.controls = Controls.start(profile.link_ttl, profile.controls)
        self.closing = threading.Event()
        self.ids = PublicIds()
        self.in_flight = InFlight(self.emulator.book)
        self._cdn = MediaHost(app, self.controls, media_origin) if media_origin else None
        self._sloppy = Sloppy()
        self._random = random.Random(seed)
        self._born: dict[str, float] = {}
        self._models: dict[str, str] = {}  # emulator id -> the model clients asked for
        self._recent: dict[str, deque[str]] = {}  # "/v1/videos" -> recent emulator ids
        self._shapes = 0

    def real_id(self, public: str | int) -> str:
        """The emulator's task id (as in its ledger) behind an id this profile's clients saw.

        Example:
            >>> from genlab.emulator import PROFILES, create_app
            >>> app = ProfileApp(create_app(api_key="k"), PROFILES["sloppy"])
            >>> app.real_id("task_1")
            'task_1'
            >>> app.emulator.close()
        """
        return self.ids.real(str(public))

    def tasks_in_flight(self, api_key: str | None = None) -> int:
        """Tasks of ``api_key`` (the emulator's key by default) queued or processing now."""
        return self.in_flight.count(api_key or self.emulator.config.api_key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._cdn and origin_port(scope) == port_of(self._cdn.origin):
            await self._cdn(scope, receive, send)
            return
        path, prefix = scope["path"], self.profile.path_prefix
        if prefix:
            if not path.startswith(prefix + "/"):
                await page(send, 404, "Not Found")  # the web server's page, not the API's
                return
            path = path[len(prefix):]
        if path.startswith("/media/"):
            if self._cdn:
                await page(send, 404, "Not Found")  # media live on the CDN only
            else:
                await self.app(inner(scope, path, prefix), receive, send)
            return
        if path.startswith("/files/"):
            await self._files(scope, receive, send, path)
            return
        parts = path.split("/")
        if scope["method"] == "POST" and len(parts) == 4 and parts[3] == "generate":
            await self._submit(scope, receive, send, path)
        elif scope["method"] == "GET" and len(parts) >= 5 and parts[3] == "tasks":
            await self._query(scope, receive, send, path)
        else:
            await self.app(inner(scope, path, prefix), receive, send)

    def _roll(self, forced: str, rate: float) -> bool:
        return self.controls.take(forced) or (rate > 0 and self._random.random() < rate)

    # --- submits ---------------------------------------------------------------------------

    async def _submit(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        c = self.controls
        if self._roll("next_html_errors", self.profile.html_errors):
            await page(send, 502, "Bad Gateway")
            return
        refusal = gateway_refusal(c)  # in front of the service: it never sees the request
        if refusal is not None:
            c.saw("gateway")
            await refusal.send(send)
            return
        body, asked_model = self._newer(await read_body(receive))
        key = bearer(scope)
        admitted = authorized(key, self.emulator.config.api_key)  # else the service's 401
        quota_taken = False
        if admitted:
            refusal, quota_taken = self._refusal(key)
            if refusal is not None:
                await refusal.send(send)
                return
        real: str | None = None
        try:
            status, headers, answer = await call(self.app, inner(scope, path, ""), body)
            data = to_json(answer)
            if status == 200 and isinstance(data, dict) and isinstance(data.get("task_id"), str):
                real = data["task_id"]
        finally:
            if admitted:
                self.in_flight.settle(key, real)
                if real is None and quota_taken:
                    self._quota(+1)  # nothing was created: the submit is given back
        if real is None:
            if c.refusals_as_2xx and 400 <= status < 500 and ErrorEnvelope.read(data):
                c.saw("refused-2xx")
                status = 200
            await respond(send, status, headers, answer)
            return
        self._created(path, real, asked_model)
        if self._roll("next_lost_answers", self.profile.lost_answers):
            await page(send, 504, "Gateway Timeout")  # processed, billed, answer lost
            return
        answer = json.dumps(self._outgoing(data)).encode()
        if c.trickle_interval is None:
            await respond(send, status, headers, answer)
            return
        c.saw("trickled")
        finished = await respond_slowly(
            send, receive, status, headers, answer, interval=c.trickle_interval,
            step=c.trickle_bytes, stop=self.closing,
        )
        if not finished:
            c.saw("trickle-abandoned")

    def _refusal(self, key: str) -> tuple[Refusal | None, bool]:
        """The service's own refusal of an authorized submit, before it creates anything; and
        whether a submit of the quota was taken (given back if nothing is created)."""
        c = self.controls
        if c.take("next_refusals_2xx"):
            c.saw("refused-2xx")
            return sloppy_refusal(), False
        quota_taken = c.quota_left is not None
        if not self._quota(-1):
            c.saw("quota")
            return quota_refusal(c), False
        cap = c.cap
        at_cap = self.in_flight.reserve(key, cap)
        if at_cap is not None and cap is not None:
            if quota_taken:
                self._quota(+1)
            c.saw("capped")
            return cap_refusal(c, cap, at_cap), False
        return None, quota_taken

    def _quota(self, change: int) -> bool:
        """Take (-1) or give back (+1) one submit of the quota; False when none is left."""
        c = self.controls
        with c.lock:
            if c.quota_left is None:
                return True
            if change < 0 and c.quota_left <= 0:
                return False
            c.quota_left += change
            return True

    def _newer(self, body: bytes) -> tuple[bytes, str | None]:
        """The body as the emulator takes it (without the ``newer`` fields and models), and
        the model asked for when it is one only the ``newer`` service knows."""
        if not self.profile.newer:
            return body, None
        data = to_json(body)
        if not isinstance(data, dict):
            return body, None
        for name in NEW_FIELDS:
            data.pop(name, None)
        asked = data.get("model")
        if isinstance(asked, str) and asked in NEW_MODELS:
            data["model"] = NEW_MODELS[asked]
        else:
            asked = None
        return json.dumps(data).encode(), asked

    def _created(self, path: str, real: str, asked_model: str | None) -> None:
        self._born[real] = time.monotonic()
        if asked_model is not None:
            self._models[real] = asked_model
        self._recent.setdefault(path.rsplit("/", 1)[0], deque(maxlen=_RECENT)).append(real)

    # --- task queries ------------------------------------------------------------------------

    async def _query(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        # The id is one percent-encoded segment: read it from the raw path, since the decoded
        # one has lost which "/" belonged to the id.
        raw = (scope.get("raw_path") or path.encode()).decode("latin-1")
        _, _, segment = raw.rpartition("/tasks/")
        public = unquote(segment)
        real = self.ids.real(public)
        kind_path = path.split("/tasks/", 1)[0]
        c = self.controls
        if self._roll("next_html_errors", self.profile.html_errors):
            await page(send, 502, "Bad Gateway")
            return
        born = self._born.get(real)
        if born is not None and time.monotonic() - born < self.profile.not_found_for:
            body = {"error": {"code": "NOT_FOUND", "message": f"no task {public!r}",
                              "status": 404, "request_id": "req-profile"}}
            await respond(send, 404, [], json.dumps(body).encode())
            return
        if c.take("next_unreadable"):
            await page(send, 200, "Please sign in to continue")
            return
        target, made_up = real, False
        if c.take_for(public) or self._roll("next_misrouted", c.misrouted_rate):
            c.saw("misrouted")
            other = next((t for t in reversed(self._recent.get(kind_path, ())) if t != real),
                         None)
            target, made_up = (other, False) if other is not None else (real, True)
        inner_path = f"{kind_path}/tasks/{quote(target, safe='')}"
        prefix = self.profile.path_prefix
        status, headers, answer = await call(self.app, inner(scope, inner_path, prefix), b"")
        data = to_json(answer)
        if status == 200 and isinstance(data, dict):
            with c.lock:
                c.record_reads += 1
            if made_up:  # no other task to answer with: this one, under another id
                data["task_id"] = new_id("task")
            data = self._outgoing(self._sloppy.record(data, real, c))
            if self._roll("next_wrong_model", c.wrong_model_rate):
                c.saw("wrong-model")
                data["model"] = other_model(str(data.get("model")))
            answer = json.dumps(data).encode()
        await respond(send, status, headers, answer)

    def _outgoing(self, data: dict[str, Any]) -> dict[str, Any]:
        """A task object or record as this profile's service writes it."""
        real = data.get("task_id")
        if isinstance(real, str):
            if real in self._models:
                data["model"] = self._models[real]
            data["task_id"] = self.ids.public(
                real, odd=self.profile.odd_ids, numeric=self.controls.numeric_ids
            )
        if self.profile.error_shapes and data.get("error") is not None:
            error = data["error"]
            reason = error.get("message") if isinstance(error, dict) else str(error)
            shape = self.controls.error_shape
            if shape is None:
                names = list(ERROR_SHAPES)
                shape, self._shapes = names[self._shapes % len(names)], self._shapes + 1
            data["error"] = ERROR_SHAPES[shape](reason or "the generator failed")
        if self._cdn:
            for item in [*(data.get("videos") or []), *(data.get("images") or [])]:
                for key in ("url", "cover_url", "last_frame_url"):
                    if isinstance(item.get(key), str):
                        item[key] = self._cdn.signed(item[key])
        return data

    # --- media at relative URLs ------------------------------------------------------------

    async def _files(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        """``/files/<task>/<file>``: the emulator's media, on the API's origin, with the key."""
        if not authorized(bearer(scope), self.emulator.config.api_key):
            self.controls.saw("files-401")
            await envelope(401, "UNAUTHORIZED", "missing or wrong API key; files on this "
                           "origin need the header 'Authorization: Bearer <API_KEY>'").send(send)
            return
        self.controls.saw("files")
        media = "/media/" + path[len("/files/"):]
        await self.app(inner(scope, media, self.profile.path_prefix), receive, send)
