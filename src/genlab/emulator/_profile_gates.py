"""What a profile answers to a submit without forwarding it (nothing is created or billed): a
gateway's or WAF's refusal, a refusal sent as 200, an exhausted quota, a concurrency cap; and
the count of each key's tasks in flight that the cap reads.

Example:
    >>> from genlab.emulator._profile_controls import Controls
    >>> controls = Controls(link_ttl=300, gateway_status=404)
    >>> gateway_refusal(controls).status
    404
"""

from __future__ import annotations

import hmac
import json
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import formatdate

from starlette.types import Scope, Send

from genlab._wire import TERMINAL_STATUSES, ErrorEnvelope
from genlab.emulator._profile_asgi import respond
from genlab.emulator._profile_controls import Controls
from genlab.emulator._tasks import TaskBook, new_id


@dataclass(frozen=True)
class Refusal:
    """A whole answer a profile gives in the service's place."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes

    async def send(self, send: Send) -> None:
        await respond(send, self.status, self.headers, self.body)


_JSON = (b"content-type", b"application/json")
_GATEWAY_DETAIL = {
    401: "Not authenticated",
    403: "Forbidden: the request was blocked by the gateway's access policy",
    404: "Not Found",
}
_WAF_TITLE = {401: "401 Authorization Required", 403: "403 Forbidden", 404: "404 Not Found"}


def envelope(status: int, code: str, message: str, headers: dict[str, str] | None = None,
             *, sent_as: int | None = None) -> Refusal:
    """The service's own error envelope, under ``status`` (or ``sent_as``, for a sloppy 200)."""
    body = ErrorEnvelope.build(code, message, status, new_id("req")).model_dump(mode="json")
    extra = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    return Refusal(sent_as or status, [_JSON, *extra], json.dumps(body).encode())


def bearer(scope: Scope) -> str:
    """The bearer token a request carries ('' without one)."""
    for name, value in scope["headers"]:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


def authorized(token: str, api_key: str) -> bool:
    """Whether the service would let ``token`` in: refusals of its own come after its auth."""
    return bool(token) and hmac.compare_digest(token.encode(), api_key.encode())


def gateway_refusal(controls: Controls) -> Refusal | None:
    """A gateway's or WAF's answer in front of the service, when one is set."""
    status = controls.gateway_status
    if status is None:
        return None
    if controls.gateway_shape == "json":
        headers = [_JSON]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="gateway"'))
        body = json.dumps({"detail": _GATEWAY_DETAIL[status]}).encode()
        return Refusal(status, headers, body)
    incident = new_id("waf")[-12:]
    html = (
        f"<!DOCTYPE html><html><head><title>{_WAF_TITLE[status]}</title></head><body>"
        "<h1>Request blocked</h1><p>The web application firewall blocked this request. "
        f"If you think this is a mistake, quote incident {incident}.</p></body></html>"
    )
    return Refusal(status, [(b"content-type", b"text/html; charset=utf-8")], html.encode())


def sloppy_refusal() -> Refusal:
    """A refusal in the service's envelope, sent with a 200 status."""
    return envelope(400, "INVALID_PARAMETER", "the request was refused: the service did not "
                    "accept it (no task was created)", sent_as=200)


def quota_refusal(controls: Controls) -> Refusal:
    """The answer to a submit once the quota (or the balance) is exhausted."""
    code, clears_in = controls.quota_code, controls.quota_clears_in
    if code == "INSUFFICIENT_BALANCE":
        return envelope(402, code, "the account's credit balance is too low for this task; it "
                        "clears when credits are added (waiting does not refill it)")
    at = datetime.fromtimestamp(time.time() + clears_in, UTC)
    message = (f"this key's task quota is used up; it clears at "
               f"{at.isoformat(timespec='seconds').replace('+00:00', 'Z')} "
               f"(in {clears_in:g} s)")
    headers = {}
    if controls.quota_retry_after == "seconds":
        headers["Retry-After"] = f"{clears_in:.0f}"
    elif controls.quota_retry_after == "http-date":
        headers["Retry-After"] = formatdate(time.time() + clears_in, usegmt=True)
    return envelope(429, code, message, headers)


def cap_refusal(controls: Controls, cap: int, in_flight: int) -> Refusal:
    """The answer to a submit past the key's concurrency cap."""
    headers = {}
    if controls.cap_retry_after is not None:
        headers["Retry-After"] = f"{controls.cap_retry_after:g}"
    message = (f"this key has {in_flight} tasks queued or processing, the most it may have "
               f"at once ({cap}); submit again when one has finished")
    return envelope(429, "CONCURRENCY_LIMIT", message, headers)


class InFlight:
    """Each key's tasks that are queued or processing, and its submits under way. Thread-safe.

    A submit reserves a place before it is forwarded and settles it with the task it created
    (or none), so concurrent submits cannot pass a cap together.
    """

    def __init__(self, book: TaskBook) -> None:
        self.book = book
        self._tasks: dict[str, list[str]] = {}
        self._pending: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, key: str) -> int:
        """Tasks of ``key`` queued or processing now, and its submits under way."""
        with self._lock:
            return self._count(key)

    def reserve(self, key: str, cap: int | None) -> int | None:
        """Take a place for a submit of ``key``: None when taken, else the count at the cap."""
        with self._lock:
            count = self._count(key)
            if cap is not None and count >= cap:
                return count
            self._pending[key] = self._pending.get(key, 0) + 1
            return None

    def settle(self, key: str, task_id: str | None) -> None:
        """The reserved submit of ``key`` ended, creating ``task_id`` (or nothing)."""
        with self._lock:
            self._pending[key] = self._pending.get(key, 1) - 1
            if task_id is not None:
                self._tasks.setdefault(key, []).append(task_id)

    def _count(self, key: str) -> int:
        now = self.book.clock()
        live = []
        for task_id in self._tasks.get(key, ()):
            task = self.book.get(task_id)
            if task is not None and task.status(now) not in TERMINAL_STATUSES:
                live.append(task_id)
        self._tasks[key] = live  # finished tasks are forgotten here
        return len(live) + self._pending.get(key, 0)
