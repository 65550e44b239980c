"""genlab's exceptions, all in one hierarchy.

::

    GenlabError
    ├── ConfigurationError          a client option, URL or key is missing or out of range
    ├── CreditLimitError            a submit or a grid would cross a credit limit; nothing sent
    ├── APIError                    the service answered with an error envelope
    │   ├── InvalidParameterError   400 INVALID_PARAMETER (also raised locally by validate())
    │   ├── InvalidPromptError      400 INVALID_PROMPT
    │   ├── AuthenticationError     401 / 403
    │   ├── NotFoundError           404 (unknown task)
    │   ├── RateLimitError          429
    │   │   └── QuotaExceededError  a quota or balance is exhausted: it will not clear soon
    │   └── ServerError             5xx
    ├── APIConnectionError          the service could not be reached
    │   └── APITimeoutError         a request timed out
    ├── UnreadableResponseError     a 2xx answer that is not what the interface describes
    ├── MediaError                  media (a result, a cover) could not be fetched
    ├── SubmissionUncertainError    a submit may have reached the service; it was not resent
    ├── TaskFailedError             the task ended with status "failed" (carries the record)
    ├── TaskNotFinishedError        the task has no results yet (e.g. download before wait)
    └── TaskTimeoutError            the wait's deadline passed; the task is still running

    UserWarning
    └── RequestAdjustedWarning      validate() changed a value as the interface allows
                                    (image-b makes 1K only); the request is still sent

Client errors are raised from one place (``APIError.from_response``); the catalog raises
``InvalidParameterError`` before anything touches the network. This module imports only the
standard library so that every layer may use it.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "ConfigurationError",
    "CreditLimitError",
    "ErrorDetail",
    "GenlabError",
    "InvalidParameterError",
    "InvalidPromptError",
    "MediaError",
    "NotFoundError",
    "QuotaExceededError",
    "RateLimitError",
    "RequestAdjustedWarning",
    "ServerError",
    "SubmissionUncertainError",
    "TaskFailedError",
    "TaskNotFinishedError",
    "TaskTimeoutError",
    "UnreadableResponseError",
]


class GenlabError(Exception):
    """Base class of every error genlab raises.

    Example:
        >>> import genlab
        >>> issubclass(genlab.CreditLimitError, genlab.GenlabError)
        True
    """


class ConfigurationError(GenlabError, ValueError):
    """The client is missing its base URL or API key, or an option is out of range.

    It is both a :class:`genlab.GenlabError` and a :class:`ValueError`, so either
    ``except`` clause catches it.

    Example:
        >>> import genlab
        >>> try:
        ...     genlab.AsyncClient(base_url="ftp://nowhere", api_key="k")
        ... except genlab.ConfigurationError as exc:
        ...     print("base_url" in str(exc))
        True
    """


class CreditLimitError(GenlabError, ValueError):
    """A submit or a grid would cross a credit limit; nothing was sent.

    Attributes:
        estimate: the credits the request (or the grid's priced runs) would cost.
        max_credits: the limit that was given.

    Example:
        >>> error = CreditLimitError("900 > 500", estimate=900, max_credits=500)
        >>> isinstance(error, ValueError), error.estimate - error.max_credits
        (True, 400)
    """

    def __init__(self, message: str, *, estimate: int, max_credits: int) -> None:
        super().__init__(message)
        self.estimate = estimate
        self.max_credits = max_credits


class UnreadableResponseError(GenlabError):
    """The service answered 2xx with something the interface does not describe.

    ``excerpt`` holds the start of what came back (bounded), for a bug report.

    Example:
        >>> error = UnreadableResponseError("not a task", status=200, excerpt="<html>" * 200)
        >>> error.status, len(error.excerpt)
        (200, 500)
    """

    def __init__(self, message: str, *, status: int, excerpt: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.excerpt = excerpt[:500]


class MediaError(GenlabError):
    """Media (a result, a cover, a last frame) could not be fetched.

    The message and ``url`` name the address without its query string, fragment or user
    info: signed media URLs carry their credentials there.

    Attributes:
        url: the address as shown (query string removed).
        status: the HTTP status the media host answered, or None (network trouble, too large,
            not an http(s) URL).
        reason: what went wrong, briefly (``HTTP 403``); ``hint``: what to do, or None.

    Example:
        >>> url = "https://cdn.example/v.mp4?signature=s3cr3t"
        >>> error = MediaError("HTTP 403", url=url, status=403)
        >>> str(error), error.status
        ('could not fetch media https://cdn.example/v.mp4: HTTP 403', 403)
    """

    EXPIRED_STATUSES = frozenset({401, 403, 404, 410})
    """What a media host answers for a signed link past its expiry (or revoked)."""

    def __init__(
        self, reason: str, *, url: str, status: int | None = None, hint: str | None = None
    ) -> None:
        self.url = _shown_url(url)
        self.status = status
        self.reason = reason  # short, e.g. "HTTP 403"; ``hint`` says what to do about it
        self.hint = hint
        advice = f"; {hint}" if hint else ""
        super().__init__(f"could not fetch media {self.url}: {reason}{advice}")

    @property
    def may_have_expired(self) -> bool:
        """True when the media host refused the link (401/403/404/410): fetch the record
        again for fresh URLs (``client.download(task_id)`` does so once by itself)."""
        return self.status in self.EXPIRED_STATUSES


def _shown_url(url: str, limit: int = 200) -> str:
    """A URL as errors show it: no query string, fragment or user info; at most ``limit`` chars.

    Example:
        >>> _shown_url("https://user:pw@cdn.example/a/v.mp4?X-Amz-Signature=abc#t=1")
        'https://cdn.example/a/v.mp4'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 address keeps its brackets
            host = f"[{host}]"
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        shown = urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:  # not parseable as a URL: show only its start
        shown = url.split("?", 1)[0]
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class ErrorDetail:
    """One problem found in a request: where it is and what is wrong.

    Example:
        >>> ErrorDetail(("reference_images", 0, "url"), "not a URL").field
        'reference_images.0.url'
    """

    loc: tuple[str | int, ...]
    message: str

    @property
    def field(self) -> str:
        """The location as a dotted path, e.g. ``reference_images.0.url``."""
        return ".".join(str(part) for part in self.loc)


class APIError(GenlabError):
    """The service (or the catalog, on its behalf) refused a request.

    Attributes:
        status: HTTP status code.
        code: the service's error code, e.g. ``INVALID_PARAMETER``.
        message: the human-readable description.
        request_id: the service's request identifier, when there is one.

    Example:
        >>> error = APIError.from_response(
        ...     404, {"error": {"code": "NOT_FOUND", "message": "no task"}})
        >>> type(error).__name__, str(error)
        ('NotFoundError', '404 NOT_FOUND: no task')
    """

    default_code = "API_ERROR"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str | None = None,
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        self.message = message
        self.status = status
        self.code = code or self.default_code
        self.request_id = request_id
        self.body = body
        super().__init__(message)

    def __str__(self) -> str:
        suffix = f" (request_id {self.request_id})" if self.request_id else ""
        return f"{self.status} {self.code}: {self.message}{suffix}"

    @classmethod
    def from_response(
        cls,
        status: int,
        body: Any,
        *,
        headers: Mapping[str, str] | None = None,
        patience: float | None = None,
    ) -> APIError:
        """Build the right subclass from an HTTP status and a decoded error envelope.

        Tolerates bodies that are not envelopes (a proxy's HTML page, an empty body). A 429
        asking to wait longer than ``patience`` seconds, a code saying a quota or the balance
        is exhausted, or a 402, is a :class:`QuotaExceededError`: waiting will not help.

        Example:
            >>> error = APIError.from_response(429, {"error": {"code": "QUOTA_EXCEEDED",
            ...     "message": "monthly quota used up"}}, headers={"Retry-After": "7200"})
            >>> type(error).__name__, error.retry_after
            ('QuotaExceededError', 7200.0)
            >>> print(error.message)
            the service refused the request: QUOTA_EXCEEDED, monthly quota used up. It may clear in about 2 h. Nothing was sent again; check the plan or balance on the service, or try later
        """  # noqa: E501
        envelope = body.get("error") if isinstance(body, Mapping) else None
        if not isinstance(envelope, Mapping):
            envelope = {}
        code = envelope.get("code") if isinstance(envelope.get("code"), str) else None
        message = envelope.get("message")
        if not isinstance(message, str) or not message:
            message = _default_message(status)
        request_id = envelope.get("request_id")
        request_id = request_id if isinstance(request_id, str) else None

        kind = _class_for(status, code)
        if kind is InvalidParameterError:
            return InvalidParameterError(message, request_id=request_id, body=body)
        retry_after = _retry_after(headers)
        if status == 402 or (status in (403, 429) and _says_quota(code)) or (
            status == 429 and retry_after is not None and patience is not None
            and retry_after > patience
        ):
            quota = QuotaExceededError(
                _quota_message(code, message, retry_after, patience), code=code,
                request_id=request_id, body=body, retry_after=retry_after,
            )
            quota.status = status
            return quota
        if kind is RateLimitError:
            return RateLimitError(
                message, code=code, request_id=request_id, body=body, retry_after=retry_after
            )
        return kind(message, status=status, code=code, request_id=request_id, body=body)


class InvalidParameterError(APIError):
    """A request breaks a model's rules (400 ``INVALID_PARAMETER``).

    Raised by :func:`genlab.validate` before anything is sent, and for the service's own 400s.
    ``errors`` lists every problem found, each with its field location and message.

    Example:
        >>> import genlab
        >>> try:
        ...     genlab.validate({"model": "video-a", "prompt": "a fox", "duration": 40})
        ... except genlab.InvalidParameterError as error:
        ...     print(error.status, error.errors[0].field, "|", error.message)
        400 duration | video-a: duration must be from 2 to 30 (got 40)
    """

    default_code = "INVALID_PARAMETER"

    def __init__(
        self,
        message: str,
        *,
        errors: Sequence[ErrorDetail] = (),
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(
            message, status=400, code="INVALID_PARAMETER", request_id=request_id, body=body
        )
        self.errors: list[ErrorDetail] = list(errors) or [ErrorDetail((), message)]

    @classmethod
    def from_details(cls, details: Sequence[ErrorDetail]) -> InvalidParameterError:
        """One error carrying every detail; the message lists them all."""
        if len(details) == 1:
            message = details[0].message
        else:
            lines = "\n".join(f"  - {d.message}" for d in details)
            message = f"{len(details)} problems in the request:\n{lines}"
        return cls(message, errors=details)


class InvalidPromptError(APIError):
    """The prompt contains content the service refuses (400 ``INVALID_PROMPT``).

    Example:
        >>> error = APIError.from_response(400, {"error": {"code": "INVALID_PROMPT",
        ...     "message": "the prompt was refused"}})
        >>> type(error).__name__, error.code
        ('InvalidPromptError', 'INVALID_PROMPT')
    """

    default_code = "INVALID_PROMPT"


class AuthenticationError(APIError):
    """The API key is missing or wrong. Check ``GENLAB_API_KEY`` or pass ``api_key=``.

    Example:
        >>> type(APIError.from_response(401, None)).__name__
        'AuthenticationError'
    """

    default_code = "UNAUTHORIZED"


class NotFoundError(APIError):
    """The task (or path) does not exist on this service.

    Example:
        >>> error = APIError.from_response(404, "<html>Not Found</html>")
        >>> type(error).__name__, error.code
        ('NotFoundError', 'NOT_FOUND')
    """

    default_code = "NOT_FOUND"


class RateLimitError(APIError):
    """Too many requests (429). ``retry_after`` holds the server's hint in seconds, if any.

    Example:
        >>> error = APIError.from_response(429, {}, headers={"Retry-After": "3"})
        >>> type(error).__name__, error.retry_after
        ('RateLimitError', 3.0)
    """

    default_code = "RATE_LIMITED"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        request_id: str | None = None,
        body: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=429, code=code, request_id=request_id, body=body)
        self.retry_after = retry_after


class QuotaExceededError(RateLimitError):
    """The service refused a submit because a quota or the balance is exhausted, or it asks
    to wait longer than the client waits (``retry_after`` beyond ``retry_after_max``).
    Nothing was sent again: waiting seconds would not help. The message says what the
    service said and when it may clear (``retry_after``, seconds, when it said).

    Example:
        >>> error = APIError.from_response(402, {"error": {"code": "INSUFFICIENT_BALANCE"}})
        >>> isinstance(error, RateLimitError), error.status
        (True, 402)
    """

    default_code = "QUOTA_EXCEEDED"


class ServerError(APIError):
    """The service failed (5xx). Safe requests are retried before this is raised.

    Example:
        >>> error = APIError.from_response(503, None)
        >>> type(error).__name__, error.status
        ('ServerError', 503)
    """

    default_code = "SERVER_ERROR"


class APIConnectionError(GenlabError):
    """The service could not be reached. Check the base URL and your network.

    Example:
        >>> import genlab
        >>> issubclass(genlab.APITimeoutError, genlab.APIConnectionError)
        True
    """


class APITimeoutError(APIConnectionError):
    """A single HTTP request timed out.

    Example:
        >>> error = APITimeoutError("GET /v1/tasks/t1 timed out after 30 s")
        >>> isinstance(error, APIConnectionError)
        True
    """


class SubmissionUncertainError(GenlabError):
    """A submit may have reached the service, but no answer came back.

    The request was *not* resent, so nothing is billed twice. The task may exist: look at the
    service's task list or your history before submitting again.

    Example:
        >>> error = SubmissionUncertainError("no answer; not resent", model="video-a",
        ...     body={"model": "video-a", "prompt": "a fox"}, status=503)
        >>> error.model, error.status
        ('video-a', 503)
    """

    def __init__(
        self, message: str, *, model: str, body: Mapping[str, Any], status: int | None = None
    ) -> None:
        super().__init__(message)
        self.model = model
        self.body = dict(body)
        self.status = status  # the HTTP status that came back, when one did (a 5xx, a page)


class TaskFailedError(GenlabError):
    """The task ended with status ``failed``; ``record`` holds the task record and its error.

    Example:
        >>> from types import SimpleNamespace
        >>> error = TaskFailedError("task t1 failed", record=SimpleNamespace(task_id="t1"))
        >>> error.task_id
        't1'
    """

    def __init__(self, message: str, *, record: Any) -> None:
        super().__init__(message)
        self.record = record

    @property
    def task_id(self) -> str:
        return str(getattr(self.record, "task_id", ""))


class TaskNotFinishedError(GenlabError, ValueError):
    """The task has not finished, so it has no results yet: wait for it first.

    It is also a :class:`ValueError`, which is what ``download`` raised before this class.

    Attributes:
        task_id: the task.
        status: its status when this was raised (``queued``, ``processing``, ...).

    Example:
        >>> error = TaskNotFinishedError("task t1 is queued", task_id="t1", status="queued")
        >>> isinstance(error, ValueError), error.status
        (True, 'queued')
    """

    def __init__(self, message: str, *, task_id: str, status: str) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.status = status


class TaskTimeoutError(GenlabError):
    """The wait's deadline passed. The task is still running: wait again with ``task_id``.

    Example:
        >>> error = TaskTimeoutError("still processing after 600 s", task_id="t1",
        ...                          last_status="processing")
        >>> error.task_id, error.last_status
        ('t1', 'processing')
    """

    def __init__(self, message: str, *, task_id: str, last_status: str | None = None) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.last_status = last_status


class RequestAdjustedWarning(UserWarning):
    """The catalog changed a value of a request because the interface says the service
    changes it (image-b: "1K only; other values are downgraded"). The request is valid and is
    sent with the new value; the warning says so before anything is spent.

    Attributes:
        model: the request's model.
        changes: one phrase per changed value (``resolution: asked 2K; image-b makes 1K
            only``), as the Studio and the result's card say them.

    Example:
        >>> import warnings, genlab
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = genlab.validate({"model": "image-b", "prompt": "x", "resolution": "2K"})
        >>> print(caught[0].message)
        image-b: resolution 2K is sent as 1K (image-b makes 1K only)
    """

    def __init__(self, message: str, *, model: str = "",
                 changes: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.model = model
        self.changes = tuple(changes)


_STATUS_CLASSES: dict[int, type[APIError]] = {
    400: InvalidParameterError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFoundError,
    429: RateLimitError,
}


def _class_for(status: int, code: str | None) -> type[APIError]:
    if code == "INVALID_PROMPT":
        return InvalidPromptError
    if code == "INVALID_PARAMETER":
        return InvalidParameterError
    if status >= 500:
        return ServerError
    return _STATUS_CLASSES.get(status, APIError)


_QUOTA_WORDS = ("QUOTA", "BALANCE", "INSUFFICIENT", "CREDIT", "BILLING", "PAYMENT", "EXHAUSTED")


def _says_quota(code: str | None) -> bool:
    """True when an error code says a quota or balance is used up (``QUOTA_EXCEEDED``,
    ``INSUFFICIENT_BALANCE``, ...): not something a retry in seconds clears."""
    return code is not None and any(word in code.upper() for word in _QUOTA_WORDS)


def _quota_message(
    code: str | None, message: str, retry_after: float | None, patience: float | None
) -> str:
    said = ", ".join(part for part in (code, message) if part)
    if retry_after is None:
        when = "It did not say when it clears"
    else:
        hours, minutes = divmod(round(retry_after / 60), 60)
        span = f"{hours} h" + (f" {minutes} min" if minutes else "") if hours else (
            f"{minutes} min" if minutes else f"{retry_after:g} s")
        when = f"It may clear in about {span}"
        if patience is not None and retry_after > patience:
            when += f", longer than this client waits (retry_after_max={patience:g} s)"
    return (
        f"the service refused the request: {said}. {when}. Nothing was sent again; check the "
        "plan or balance on the service, or try later"
    )


def _default_message(status: int) -> str:
    if status in (401, 403):
        return "the API key was refused; set GENLAB_API_KEY or pass api_key= to the client"
    if status == 404:
        return "not found"
    if status == 429:
        return "rate limited; slow down and try again later"
    if status >= 500:
        return "the service failed to answer; try again later"
    return f"the service answered HTTP {status}"


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """``Retry-After`` in seconds: a number, or an HTTP date counted from now (never negative).

    Example:
        >>> _retry_after({"Retry-After": "2"}), _retry_after({"Retry-After": "soon"})
        (2.0, None)
        >>> _retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})  # in the past
        0.0
    """
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:  # HTTP dates are GMT
            moment = moment.replace(tzinfo=UTC)
        seconds = (moment - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
