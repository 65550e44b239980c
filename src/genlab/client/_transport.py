"""The HTTP layer: one httpx client, the one error chokepoint, and the retry policy.

Retry policy (the reason this module exists):

* A **submit** costs money, so it is resent only when it provably never left (the connection
  was refused or timed out while connecting, the pool had no free connection). Any 4xx is a
  refusal: nothing was created, nothing is resent here. A 429 is reported as a
  :class:`~genlab.RateLimitError` carrying ``Retry-After``; whether and when to send again is
  the lifecycle's decision (:mod:`genlab.client._hold`), never the transport's. Every other
  answer does not prove the request was refused (a 5xx, with or without a body: a gateway may
  answer it after the service created and billed the task; a read/write timeout, a dropped
  connection, a protocol error, an ``OSError`` from an in-process transport, an unreadable
  2xx): it is *never* resent, and :class:`~genlab.SubmissionUncertainError` is raised instead.
* A **GET** changes nothing, so it is retried on network errors, 429 and 5xx with exponential
  backoff and jitter (``Retry-After`` honoured, capped).

Retries are stamina's, never a hand-written loop. Errors are built only in
:meth:`Http.raise_for_status` (through ``APIError.from_response``), and a 2xx answer that cannot
be read becomes an :class:`~genlab.UnreadableResponseError` only in :meth:`Http.read`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import IO, Any, Generic, NamedTuple, TypeVar

import httpx
import stamina

from genlab._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    ServerError,
    SubmissionUncertainError,
    UnreadableResponseError,
)
from genlab._version import __version__
from genlab._wire import TIME_SCALE_HEADER, ErrorEnvelope
from genlab.client._config import ClientConfig

logger = logging.getLogger("genlab")

T = TypeVar("T")
Parse = Callable[[Mapping[str, Any]], T]
"""Turns a 2xx answer's JSON object into a value; raises TypeError/ValueError/KeyError if it
cannot (pydantic's ValidationError is a ValueError)."""

USER_AGENT = f"genlab/{__version__} (+httpx)"
MAX_REDIRECTS = 10
"""Redirect hops a media download follows (a CDN, a signed URL); API requests follow none."""

# The request provably never reached the service: safe to send again.
NOT_SENT: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)
# A GET may be repeated after these; they are transient network trouble.
TRANSIENT: tuple[type[Exception], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    OSError,
)


class Http:
    """Sends requests to the service; owns the connection pool and the retry policy.

    Example:
        http = Http(resolve_config("http://emulator", "k"), transport=None)
        reply = await http.get("/v1/videos/tasks/t1", TaskRecord.model_validate, what="record")
        record, hint = reply.value, reply.hint
    """

    def __init__(self, config: ClientConfig, transport: httpx.AsyncBaseTransport | None) -> None:
        self.config = config
        n = config.max_connections
        self.client = httpx.AsyncClient(
            base_url=config.base_url,
            timeout=config.timeout,
            limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
            transport=transport,
            max_redirects=MAX_REDIRECTS,
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )
        # Added per API request rather than as a client default, so media downloads from
        # another host (a CDN) never receive the key. Never shown: Http has no repr of it.
        self._authorization = f"Bearer {config.api_key.reveal()}"
        # Told the time scale a service declares on its answers (see :func:`time_scale`).
        self.on_time_scale: Callable[[float], None] | None = None

    @property
    def deadline(self) -> float:
        """Seconds a whole answer may take to arrive (the client's read timeout)."""
        timeout = self.config.timeout
        if isinstance(timeout, httpx.Timeout):
            return timeout.read or 30.0
        return float(timeout)

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def closed(self) -> bool:
        return self.client.is_closed

    def _auth(self) -> dict[str, str]:
        return {"Authorization": self._authorization}

    def auth_for(self, url: httpx.URL) -> dict[str, str]:
        """The Authorization header for ``url`` when it is on the API's own origin (scheme,
        host and port), else nothing: media on other hosts never see the key."""
        own = httpx.URL(self.config.base_url)
        same = (url.scheme, url.host, url.port) == (own.scheme, own.host, own.port)
        return self._auth() if same else {}

    # --- the one error chokepoint ----------------------------------------------------

    def raise_for_status(self, response: httpx.Response) -> None:
        """Raise the right :class:`~genlab.APIError` for a non-2xx answer; do nothing on 2xx."""
        if response.is_success:
            return
        # The key is scrubbed from error bodies, in case a proxy echoes the request back.
        raise APIError.from_response(
            response.status_code, self.decode(response, scrub=True), headers=response.headers,
            patience=self.config.retry_after_max,
        )

    def read(self, response: httpx.Response, parse: Parse[T], *, what: str) -> T:
        """``parse`` applied to a 2xx answer's JSON object.

        Raises:
            UnreadableResponseError: the answer is no JSON object, or ``parse`` refused it (a
                proxy's HTML page, a record without its fields); ``excerpt`` holds its start.
        """
        data = self.decode(response)
        envelope = ErrorEnvelope.read(data)
        if envelope is not None and "task_id" not in data and "status" not in data:
            # A 2xx carrying only the error envelope (a task record with an ``error`` is a
            # failed task, not this): the service refused.
            status = envelope.get("status")
            status = status if isinstance(status, int) and 400 <= status < 600 else 400
            raise APIError.from_response(status, data, headers=response.headers,
                                         patience=self.config.retry_after_max)
        try:
            if not isinstance(data, Mapping):
                raise TypeError("not a JSON object")
            return parse(data)
        except (TypeError, ValueError, KeyError) as exc:
            raise UnreadableResponseError(
                f"the service sent an unreadable {what}: {exc}",
                status=response.status_code,
                excerpt=self._text(response, scrub=True),
            ) from exc

    def decode(self, response: httpx.Response, *, scrub: bool = False) -> Any:
        """The response body: JSON when it parses, text otherwise, None when empty."""
        text = self._text(response, scrub=scrub)
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text

    def _text(self, response: httpx.Response, *, scrub: bool) -> str:
        text = response.text
        if not scrub:
            return text
        key = self.config.api_key.reveal()
        return text.replace(key, "***") if key and key in text else text

    # --- retry policy ----------------------------------------------------------------

    def retry_after(self, exc: RateLimitError) -> bool | float:
        """How long a retry of ``exc`` waits: its ``Retry-After`` (capped by
        ``retry_after_max``), else True (the exponential backoff)."""
        if exc.retry_after is None:
            return True  # exponential backoff
        return min(exc.retry_after, self.config.retry_after_max)

    @staticmethod
    def _submit_should_retry(exc: Exception) -> bool:
        # Only what provably never left. A 429 is the lifecycle's to judge; any other answer,
        # a bare 503 included, may follow a task created and billed.
        return isinstance(exc, NOT_SENT)

    def _get_should_retry(self, exc: Exception) -> bool | float:
        if isinstance(exc, QuotaExceededError):
            return False
        if isinstance(exc, RateLimitError):
            return self.retry_after(exc)
        return isinstance(exc, (ServerError, *TRANSIENT))

    def retrying(self, on: Callable[[Exception], bool | float]) -> Any:
        """A stamina retry context on the client's schedule (``max_retries``, the waits);
        ``on`` says whether an exception is retried, or after how many seconds. What is not an
        Exception (a cancellation, KeyboardInterrupt) is never retried."""
        c = self.config

        def retried(exc: BaseException) -> bool | float:  # stamina's type since 26.2
            return isinstance(exc, Exception) and on(exc)

        return stamina.retry_context(
            on=retried,
            attempts=c.max_retries + 1,
            timeout=None,
            wait_initial=c.retry_wait_initial,
            wait_max=c.retry_wait_max,
            wait_jitter=c.retry_wait_initial,
        )

    # --- requests --------------------------------------------------------------------

    async def submit(
        self, path: str, body: dict[str, Any], parse: Parse[T], *, model: str
    ) -> T:
        """POST a submission; return ``parse`` of the 2xx answer.

        The whole answer must arrive within the client's ``timeout`` (a server that trickles
        it byte by byte does not hold the call). Sent again only when it provably never left.

        Raises:
            SubmissionUncertainError: the request may have been processed; it was not resent.
                An accepted (2xx) answer that cannot be read is uncertain too: the task exists
                and its id is unknown.
            APIConnectionError: the service could not be reached (nothing was sent).
            RateLimitError: a 429, with its ``retry_after``: nothing was created, and it was
                not sent again (:class:`~genlab.QuotaExceededError` when waiting would not
                clear it).
            APIError: the service refused the request (any 4xx, whatever its body; a 2xx
                carrying the error envelope): nothing was created.
        """
        if self.client.is_closed:
            raise APIConnectionError("the client is closed; nothing was sent. Make a new one.")
        try:
            request = self.client.build_request("POST", path, json=body, headers=self._auth())
        except Exception as exc:  # nothing left: a header or the body could not be encoded
            raise APIConnectionError(
                f"could not build the POST {path} request ({type(exc).__name__}); nothing was "
                "sent. Check the API key and base_url for stray characters."
            ) from None
        try:
            async for attempt in self.retrying(self._submit_should_retry):
                with attempt:
                    async with asyncio.timeout(self.deadline):
                        response = await self.client.send(request)
                    self._log(response)
                    self._heard(response)
                    self.raise_for_status(response)
        except APIError as exc:
            if refused_for_sure(exc):
                raise refusal(exc, self.config.base_url, path) from None
            # A 5xx may come after the service created the task: never call that refused.
            raise SubmissionUncertainError(
                uncertain_message(model, answer_text(exc)), model=model, body=body,
                status=exc.status,
            ) from exc
        except NOT_SENT as exc:
            raise connection_error(exc, self.config.base_url, "POST", path) from exc
        except TimeoutError:
            raise SubmissionUncertainError(
                uncertain_message(model, f"the answer did not arrive within {self.deadline:g} s"),
                model=model, body=body,
            ) from None
        except Exception as exc:
            # Anything else happened after the request may have left: never resend it.
            raise SubmissionUncertainError(
                uncertain_message(model, type(exc).__name__), model=model, body=body
            ) from safe_cause(exc)
        try:
            return self.read(response, parse, what="answer to the submission")
        except UnreadableResponseError as exc:
            raise SubmissionUncertainError(
                uncertain_message(model, str(exc)), model=model, body=body
            ) from exc

    async def get(self, path: str, parse: Parse[T], *, what: str) -> Reply[T]:
        """GET an API path with retries; ``parse`` of its answer (see :meth:`read`), with the
        service's polling hint on that answer (see :func:`poll_hint`)."""
        response = await self._safe_request("GET", path)
        return Reply(self.read(response, parse, what=what), poll_hint(response.headers))

    async def post_file(
        self,
        path: str,
        filename: str,
        data: bytes | IO[bytes],
        content_type: str,
        parse: Parse[T],
        *,
        what: str,
    ) -> T:
        """POST one file as multipart ``file``. Retried like a GET: an upload bills nothing.

        An open file is streamed in chunks, never read whole (httpx rewinds it on a retry).
        """
        files = {"file": (filename, data, content_type)}
        response = await self._safe_request("POST", path, files=files)
        return self.read(response, parse, what=what)

    async def _safe_request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A request that may be repeated without cost: retried on transient trouble."""
        try:
            async for attempt in self.retrying(self._get_should_retry):
                with attempt:
                    try:
                        async with asyncio.timeout(self.deadline):
                            response = await self.client.request(
                                method, path, headers=self._auth(), **kwargs
                            )
                    except TimeoutError:  # trickled: transient, like a read timeout
                        raise httpx.ReadTimeout(
                            f"the whole answer took longer than {self.deadline:g} s"
                        ) from None
                    self._log(response)
                    self._heard(response)
                    self.raise_for_status(response)
        except APIError:
            raise
        except TRANSIENT as exc:
            raise connection_error(exc, self.config.base_url, method, path) from exc
        except Exception as exc:  # never raw: its text may quote a header
            raise APIConnectionError(
                f"{method} {path} failed before an answer came ({type(exc).__name__}); check "
                "the API key and base_url for stray characters"
            ) from safe_cause(exc)
        return response

    def get_retrying(self) -> Any:
        """A stamina retry context with the GET policy, for media."""
        return self.retrying(self._get_should_retry)

    def _heard(self, response: httpx.Response) -> None:
        if self.on_time_scale is not None and (scale := time_scale(response.headers)):
            self.on_time_scale(scale)

    def _log(self, response: httpx.Response) -> None:
        # Method, path and status only: never headers (they hold the key) or bodies.
        logger.debug(
            "genlab: %s %s -> %s",
            response.request.method,
            response.request.url.path,
            response.status_code,
        )


class Reply(NamedTuple, Generic[T]):
    """A read answer, and the seconds the service asked a poller to wait (None: no hint)."""

    value: T
    hint: float | None


POLL_HINT_HEADERS = ("Retry-After", "Poll-After", "X-Poll-After")


def time_scale(headers: Mapping[str, str]) -> float | None:
    """The time scale a service declares (``Genlab-Time-Scale``, sent by genlab's emulator):
    None when absent, unreadable, or not a positive finite number (the real service sends none).

    Example:
        >>> time_scale({"Genlab-Time-Scale": "0.1"}), time_scale({}), time_scale(
        ...     {"genlab-time-scale": "fast"})
        (0.1, None, None)
    """
    value = headers.get(TIME_SCALE_HEADER) or headers.get(TIME_SCALE_HEADER.lower())
    try:
        scale = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return scale if 0 < scale < math.inf else None


def poll_hint(headers: Mapping[str, str]) -> float | None:
    """Seconds the service asks a client to wait before polling again, from a 2xx answer.

    ``Retry-After`` (seconds or an HTTP date) or ``Poll-After`` / ``X-Poll-After`` (seconds);
    None when absent or unreadable (an unreadable hint is ignored, never an error).

    Example:
        >>> poll_hint({"Retry-After": "2.5"}), poll_hint({"X-Poll-After": "soon"})
        (2.5, None)
    """
    for name in POLL_HINT_HEADERS:
        value = headers.get(name) or headers.get(name.lower())
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return max(0.0, (moment - datetime.now(UTC)).total_seconds())
    return None


def refused_for_sure(exc: APIError) -> bool:
    """True when an error answer to a submit proves no task was created: any 4xx (whatever
    its body: the service's envelope, a gateway's JSON, a WAF's page). Every 5xx, a bare 503
    included, can follow processing: uncertain (see docs/spec-decisions.md).

    Example:
        >>> refused_for_sure(APIError.from_response(400, {"error": {"code": "X"}}))
        True
        >>> refused_for_sure(APIError.from_response(403, "<html>Forbidden by WAF</html>"))
        True
        >>> refused_for_sure(APIError.from_response(502, "<html>Bad Gateway</html>"))
        False
        >>> refused_for_sure(APIError.from_response(503, None))
        False
    """
    return exc.status < 500


def refusal(exc: APIError, base_url: str, path: str) -> APIError:
    """A refused submit's error, said for people: a 404 or 401/403 that is not the service's
    own envelope came from in front of it (a wrong base URL, a gateway, a WAF)."""
    if ErrorEnvelope.read(exc.body) is not None or exc.status not in (401, 403, 404):
        return exc
    said = _said(exc.body)
    if exc.status == 404:
        message = (
            f"POST {base_url}{path} answered 404{said}: there is no such endpoint at this "
            "address, so nothing was created. Check base_url / GENLAB_BASE_URL (the API may "
            "live under a prefix such as /api, or on another host)"
        )
        return NotFoundError(message, status=404, body=exc.body)
    message = (
        f"POST {base_url}{path} was refused with HTTP {exc.status}{said} before it reached the "
        "service, so nothing was created. Check the API key (GENLAB_API_KEY or api_key=) and "
        "that base_url is the service's own address"
    )
    return AuthenticationError(message, status=exc.status, body=exc.body)


def _said(body: Any) -> str:
    """What a gateway said, briefly: its JSON ``detail``/``message``, or that it was a page."""
    if isinstance(body, Mapping):
        for key in ("detail", "message", "error"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return f' ("{value.strip()[:120]}")'
    if isinstance(body, str) and body.lstrip().startswith("<"):
        return " (an HTML page, not the service's answer)"
    return ""


def answer_text(exc: APIError) -> str:
    """How an uncertain answer is described: its status and who seems to have sent it."""
    if ErrorEnvelope.read(exc.body) is not None:
        return f"HTTP {exc.status} {exc.code} from the service"
    if exc.body is None:
        return f"HTTP {exc.status} with an empty body"
    return f"HTTP {exc.status}, a page that is not the service's error envelope (a proxy's?)"


def safe_cause(exc: BaseException) -> BaseException | None:
    """``exc`` when its text can be shown (network trouble), else None: an encoding or
    protocol error may quote a request header, and the Authorization header is one."""
    if isinstance(exc, httpx.LocalProtocolError | UnicodeError):
        return None
    return exc if isinstance(exc, TRANSIENT) else None


def uncertain_message(model: str, cause: str) -> str:
    return (
        f"the {model} submission may have reached the service, but no answer came back "
        f"({cause}). It was NOT resent, so it is billed at most once. Before submitting again, "
        "check your history (client.history) or the service's task list for a task created "
        "just now with this request."
    )


def connection_error(
    exc: Exception, base_url: str, method: str, path: str
) -> APIConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(
            f"{method} {path} timed out ({type(exc).__name__}) talking to {base_url}; "
            "the service may be overloaded, or raise timeout= on the client"
        )
    return APIConnectionError(
        f"could not reach the service at {base_url} ({type(exc).__name__}: {exc}); check "
        "base_url / GENLAB_BASE_URL and your network"
    )
