"""What every route shares: the state, the request id, authentication, injected faults, the
JSON body, and the emulator's own error answers.

Routes declare these as FastAPI dependencies (``Depends``). Authentication always runs before
the faults, and the faults before the body is read, as a real service behind a proxy would.
"""

from __future__ import annotations

import asyncio
import hmac
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from genlab._wire import ErrorEnvelope
from genlab.emulator._jsonparse import Body, NotJson, ParserLost
from genlab.emulator._references import origin
from genlab.emulator._state import EmulatorState
from genlab.emulator._tasks import new_id

DROP_FLAG = "genlab_drop_connection"
"""Set on ``request.state`` to drop the connection instead of answering (see ``Shell``)."""
LATE_503_FLAG = "genlab_late_503"
"""Set on ``request.state`` of a submit to answer a bare 503 after the task was billed."""


class Problem(Exception):
    """An error answer with a code of the emulator's own (auth, not found, too large, ...)."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


class EmptyAnswer(Exception):
    """Answer with a bare status and no body (a load balancer's 503)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def envelope(code: str, message: str, status: int, request_id: str) -> dict[str, Any]:
    """The interface's error envelope, as JSON data."""
    return ErrorEnvelope.build(code, message, status, request_id).model_dump(mode="json")


def answer(status: int, body: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    """A JSON answer."""
    return JSONResponse(body, status_code=status, headers=headers)


def request_id(request: Request) -> str:
    """This request's id, made on first use and kept for its error answers."""
    rid = getattr(request.state, "request_id", None)
    if rid is None:
        rid = new_id("req")
        request.state.request_id = rid
    return str(rid)


def emulator_state(request: Request) -> EmulatorState:
    """The state of the app serving this request."""
    state: EmulatorState = request.app.state.emulator
    return state


State = Annotated[EmulatorState, Depends(emulator_state)]
RequestId = Annotated[str, Depends(request_id)]


def base_url(request: Request, state: State) -> str:
    """Where media URLs point: the configured public URL, else the URL the request came in on."""
    return state.config.public_url or str(request.base_url)


BaseUrl = Annotated[str, Depends(base_url)]


def own_origins(request: Request, state: State) -> frozenset[str]:
    """The ``scheme://host:port`` this request reached the emulator at (and its public URL):
    media URLs there are the emulator's own."""
    urls = [str(request.base_url), *([state.config.public_url] if state.config.public_url else [])]
    return frozenset(origin(url) for url in urls)


OwnOrigins = Annotated[frozenset[str], Depends(own_origins)]


async def require_key(request: Request, state: State) -> None:
    """Refuse a request without the right ``Authorization: Bearer <key>`` header (401)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    expected = state.config.api_key.encode()
    # Compare in constant time so the key cannot be guessed from timings.
    given = token.strip().encode()
    # An empty key never matches, whatever the configuration says (start() refuses one too).
    if scheme.lower() != "bearer" or not given or not hmac.compare_digest(given, expected):
        raise Problem(
            401,
            "UNAUTHORIZED",
            "missing or wrong API key; send the header 'Authorization: Bearer <API_KEY>'",
        )


Authorized = Annotated[None, Depends(require_key)]


async def service_faults(state: State, _: Authorized) -> None:
    """The injected faults of an API request: latency, 429 and an enveloped 503."""
    await _inject(state, submit=False)


async def submit_faults(request: Request, state: State, _: Authorized) -> None:
    """The injected faults of a submission: a 503 there has no body, as a gateway in front
    sends it, either at once (the service never saw the request) or, for a share
    ``error_after_billing`` of them, after the service created and billed the task (the
    submit route answers it then). A client cannot tell the two apart."""
    if await _inject(state, submit=True):
        setattr(request.state, LATE_503_FLAG, True)


async def _inject(state: EmulatorState, *, submit: bool) -> bool:
    """Sleep, then raise the fault rolled; True when a submit's 503 is to come after billing."""
    faults = state.faults
    if faults.latency > 0:
        await asyncio.sleep(faults.latency)
    if faults.roll(faults.rate_limit_rate):
        raise Problem(
            429,
            "RATE_LIMITED",
            "too many requests; retry after the Retry-After delay",
            headers={"Retry-After": f"{faults.retry_after:g}"},
        )
    if faults.roll(faults.error_rate):
        if not submit:
            raise Problem(503, "SERVICE_UNAVAILABLE", "the service is overloaded; try again")
        if faults.roll(faults.error_after_billing):
            return True
        raise EmptyAnswer(503)
    return False


MAX_JSON_VALUES = 100_000
"""The most values (counted by their ``{``, ``[`` and ``,``, inside strings too) a JSON body may
hold. The largest valid request holds a few hundred; the cap keeps a body of tiny objects
from costing the server many times its size in Python objects."""


async def json_body(request: Request, state: State) -> Any:
    """The request's JSON body, refused (413) beyond the body cap before it is all read.

    The body is read into one buffer (:class:`~genlab.emulator._jsonparse.Body`) while its
    values are counted, refused (400) past :data:`MAX_JSON_VALUES`, and parsed off the event
    loop, a large body in a worker process (:class:`~genlab.emulator._jsonparse.JsonParser`):
    whatever its shape, a body costs about twice its size at the peak and never stalls other
    clients for long.
    """
    cap = state.config.max_body_bytes
    declared = request.headers.get("content-length")
    too_big = Problem(
        413,
        "PAYLOAD_TOO_LARGE",
        f"the request body exceeds {cap} bytes; send large media as URLs, not Base64",
    )
    size = int(declared) if declared is not None and declared.isdigit() else None
    if size is not None and size > cap:
        raise too_big  # refused before reading a byte of it
    with Body(size, limit=cap) as body:
        values = 0
        async for chunk in request.stream():
            if len(body) + len(chunk) > cap:
                raise too_big
            body.append(chunk)
            values += chunk.count(b"{") + chunk.count(b"[") + chunk.count(b",")
            if values > MAX_JSON_VALUES:
                raise Problem(
                    400,
                    "INVALID_PARAMETER",
                    f"the body holds more than {MAX_JSON_VALUES:,} JSON values; a request "
                    "needs a few hundred at most, so send one request per task",
                )
        try:
            return await state.json.parse(body)
        except NotJson as exc:
            raise Problem(400, "INVALID_PARAMETER", str(exc)) from None
        except ParserLost:
            raise Problem(
                503,
                "SERVICE_UNAVAILABLE",
                "the emulator's JSON parser stopped; send the request again",
            ) from None


JsonBody = Annotated[Any, Depends(json_body)]
