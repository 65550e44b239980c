"""Client configuration: where the service is, the key, timeouts, retries and polling pace.

Arguments win, then the environment (``GENLAB_BASE_URL``, ``GENLAB_API_KEY``); when neither
gives a value the client refuses to start with a :class:`ConfigurationError` that says how to
set it. The key is held in a :class:`Secret` whose ``repr`` and ``str`` are masked, so it
cannot leak through a repr, a log line or an exception message.

The client's own types live here too: an outcome, what a request or a task reference may
be (the wire types come from :mod:`genlab._wire`).

Example:
    >>> Outcome(request={"model": "video-a"}).ok
    False
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack
from urllib.parse import quote

import httpx

from genlab._errors import ConfigurationError
from genlab._wire import (
    TERMINAL_STATUSES,
    ImageResult,
    Kind,
    Task,
    TaskError,
    TaskRecord,
    TaskStatus,
    VideoResult,
)
from genlab.catalog import RequestBase
from genlab.display import ERROR, text
from genlab.media import Result

BASE_URL_ENV = "GENLAB_BASE_URL"
API_KEY_ENV = "GENLAB_API_KEY"


class Secret:
    """A string that never shows itself in ``repr``/``str``; read it with :meth:`reveal`.

    Example:
        >>> s = Secret("sk-live-123")
        >>> repr(s), str(s), s.reveal()
        ("'***'", '***', 'sk-live-123')
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The real value, for the ``Authorization`` header only."""
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[object, ...]:
        # Pickling would copy the key somewhere we cannot see (a cache, a queue); refuse.
        raise TypeError("a genlab Secret cannot be pickled")


class ConfigOptions(TypedDict, total=False):
    """The keyword options of a client's configuration; their defaults are :class:`ClientConfig`'s.

    Both clients, :func:`resolve_config` and :func:`genlab.connect` take these as keywords.

    Example:
        >>> options: ConfigOptions = {"timeout": 10.0, "max_retries": 5}
        >>> resolve_config("http://localhost:8000", "k", **options).max_retries
        5
    """

    timeout: float | httpx.Timeout
    max_retries: int
    wait_timeout: float
    poll_scale: float
    retry_wait_initial: float
    retry_wait_max: float
    retry_after_max: float
    max_connections: int
    not_found_grace: float



@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Every knob of a client, checked on creation. Build it with :func:`resolve_config`.

    The defaults written here are the only ones: the clients' keyword options fall back to them.

    Attributes:
        base_url: the service address, without a trailing slash.
        api_key: the key, masked in every repr.
        timeout: seconds for one HTTP request (a number, or an ``httpx.Timeout``); a number
            gives connecting at most 10 s, since a slow connect is safe to retry.
        max_retries: retries of one request when retrying is safe.
        wait_timeout: the default overall deadline of ``wait``, in seconds.
        poll_scale: multiplies every poll interval and duration prior; below 1 for a sped-up
            emulator. A service that declares its time scale (genlab's emulator does, in a
            ``Genlab-Time-Scale`` header) sets it instead.
        retry_wait_initial, retry_wait_max: backoff bounds between retries, in seconds.
        retry_after_max: the longest ``Retry-After`` honoured, in seconds.
        max_connections: size of the connection pool.
        not_found_grace: seconds after its submit during which a task this client submitted
            may answer 404 ("not visible yet" on an eventually consistent service) and is
            polled again; later a 404 raises :class:`~genlab.NotFoundError`.

    Raises:
        ConfigurationError: a value is out of range; the message says which and why.

    Example:
        >>> config = resolve_config("http://localhost:8000/", "k", wait_timeout=600)
        >>> config.base_url, config.wait_timeout, config.max_retries
        ('http://localhost:8000', 600.0, 3)
    """

    base_url: str
    api_key: Secret = field(repr=False)
    timeout: float | httpx.Timeout = 30.0
    max_retries: int = 3
    wait_timeout: float = 1800.0
    poll_scale: float = 1.0
    retry_wait_initial: float = 0.5
    retry_wait_max: float = 8.0
    retry_after_max: float = 60.0
    max_connections: int = 10
    not_found_grace: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigurationError(f"max_retries must be 0 or more, got {self.max_retries}")
        for name, value in (
            ("wait_timeout", self.wait_timeout),
            ("poll_scale", self.poll_scale),
            ("retry_after_max", self.retry_after_max),
        ):
            if not value > 0:
                raise ConfigurationError(
                    f"{name} must be a positive number of seconds, got {value}"
                )
        if self.retry_wait_initial < 0 or self.retry_wait_max < self.retry_wait_initial:
            raise ConfigurationError(
                "retry waits must satisfy 0 <= retry_wait_initial <= retry_wait_max, got "
                f"{self.retry_wait_initial} and {self.retry_wait_max}"
            )
        if not self.not_found_grace >= 0:
            raise ConfigurationError(
                f"not_found_grace must be 0 or more seconds, got {self.not_found_grace}"
            )
        if self.max_connections < 1:
            raise ConfigurationError(
                f"max_connections must be at least 1, got {self.max_connections}"
            )
        # Whole numbers are accepted for seconds; stored as floats like every other value.
        for name, number in (
            ("wait_timeout", self.wait_timeout),
            ("poll_scale", self.poll_scale),
            ("retry_wait_initial", self.retry_wait_initial),
            ("retry_wait_max", self.retry_wait_max),
            ("retry_after_max", self.retry_after_max),
            ("not_found_grace", self.not_found_grace),
        ):
            object.__setattr__(self, name, float(number))
        if not isinstance(self.timeout, httpx.Timeout):
            # Connecting should fail fast (a refused or slow connect is safe to retry); reading a
            # submit's answer gets the full budget.
            seconds = float(self.timeout)
            object.__setattr__(self, "timeout", httpx.Timeout(seconds, connect=min(10.0, seconds)))


def resolve_config(
    base_url: str | None = None, api_key: str | None = None, **options: Unpack[ConfigOptions]
) -> ClientConfig:
    """Merge arguments with the environment and check every value.

    Options left out take :class:`ClientConfig`'s defaults.

    Raises:
        ConfigurationError: a value is missing or out of range; the message says how to fix it.

    Example:
        >>> cfg = resolve_config("http://localhost:8000/", "k")
        >>> cfg.base_url, cfg.api_key, cfg.max_retries
        ('http://localhost:8000', '***', 3)
    """
    url = base_url if base_url is not None else os.environ.get(BASE_URL_ENV)
    if not url:
        raise ConfigurationError(
            "genlab does not know where the service is: pass base_url='https://...' to the "
            f"client, or set the environment variable {BASE_URL_ENV} "
            f"(in a notebook: os.environ['{BASE_URL_ENV}'] = 'https://...'). For the built-in "
            "emulator use genlab.emulator.start() and its .base_url."
        )
    url = url.strip().rstrip("/")
    if not url.lower().startswith(("http://", "https://")):
        raise ConfigurationError(
            f"base_url must start with http:// or https://, got {url[:60]!r}; "
            f"fix the base_url argument or {BASE_URL_ENV}"
        )
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
    if not key:
        raise ConfigurationError(
            "genlab has no API key: pass api_key=... to the client, or set the environment "
            f"variable {API_KEY_ENV} (in a notebook: os.environ['{API_KEY_ENV}'] = "
            "getpass.getpass()). Keys are created on the service's API key screen."
        )
    return ClientConfig(url, Secret(checked_key(key)), **options)


def checked_key(key: str) -> str:
    """The key as it will be sent: surrounding whitespace stripped (with a warning), anything
    an HTTP header cannot carry refused with an error that does not echo the key.

    Example:
        >>> checked_key("sk-123")
        'sk-123'
        >>> checked_key("sk-ä123")
        Traceback (most recent call last):
        ...
        genlab._errors.ConfigurationError: the API key has a character that is not printable ASCII (at position 4 of 7); keys are plain ASCII, so it was probably pasted with something else: copy it again from the service's API key screen
    """  # noqa: E501
    stripped = key.strip()
    if stripped != key:
        warnings.warn(
            "genlab: the API key had spaces or line breaks around it (a pasted key?); they "
            "were removed",
            stacklevel=4,
        )
    if not stripped:
        raise ConfigurationError(
            "the API key is only whitespace; pass the key itself, or set "
            f"{API_KEY_ENV}"
        )
    for position, char in enumerate(stripped, start=1):
        if not " " < char < "\x7f":
            what = "a space" if char.isspace() else "a character that is not printable ASCII"
            raise ConfigurationError(
                f"the API key has {what} (at position {position} of {len(stripped)}); keys are "
                "plain ASCII, so it was probably pasted with something else: copy it again "
                "from the service's API key screen"
            )
    return stripped


# The client's own types: an outcome, what a request or a task reference may be.


RequestLike = Mapping[str, Any] | RequestBase
"""A request: a body dict, or a request the catalog already validated."""
TaskRef = Task | TaskRecord | str
"""A task: the accepted Task, a record of it, or its id."""
OnUpdate = Callable[[TaskRecord], object]
"""Called with a task's record once per status change; may be a coroutine function."""


@dataclass(slots=True)
class Outcome:
    """What happened to one request of ``client.map``: exactly one of record or error tells.

    ``error`` holds the exception (validation, uncertain submission, failed task, timeout…);
    ``task`` is set once the service accepted the request, ``record`` once a record was seen.

    Example:
        >>> Outcome(request={"model": "video-a"}).ok
        False
    """

    request: Any
    task: Task | None = None
    record: TaskRecord | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        """True when the task succeeded."""
        return self.error is None and self.record is not None and self.record.succeeded

    @property
    def task_id(self) -> str | None:
        return self.task.task_id if self.task is not None else None

    def __repr__(self) -> str:
        model = self.request.get("model") if isinstance(self.request, Mapping) else getattr(
            self.request, "model", None
        )
        if self.error is not None:
            told = f"error={type(self.error).__name__}: {self.error}"
            told = told if len(told) <= 80 else told[:79] + "…"
        elif self.record is not None:
            told = f"status={self.record.status}"
        else:
            told = "pending"
        return f"Outcome(model={model!r}, task_id={self.task_id!r}, {told})"

    def _repr_html_(self) -> str:
        # The result's own card when there is one (a failed task's says why); else the
        # error that kept the request from one, escaped.
        if isinstance(self.record, Result) and (self.error is None or self.record.failed):
            return self.record._repr_html_()
        return text(repr(self), ERROR, tag="div", cls="genlab-outcome")


def check_task_id(task_id: Any) -> str:
    """``task_id`` when it can name a task in a URL; a clear ``ValueError`` when it cannot.

    Example:
        >>> check_task_id("t-1")
        't-1'
        >>> check_task_id("..")
        Traceback (most recent call last):
        ...
        ValueError: '..' cannot be a task id: '.' and '..' mean 'this folder' and 'the parent' in a URL path; pass the task_id the service returned
    """  # noqa: E501
    if not isinstance(task_id, str):
        raise TypeError(f"a task id is a string, got {type(task_id).__name__}")
    if not task_id:
        raise ValueError("the task id is empty; pass the task_id the service returned")
    if task_id in (".", ".."):
        raise ValueError(
            f"{task_id!r} cannot be a task id: '.' and '..' mean 'this folder' and 'the parent' "
            "in a URL path; pass the task_id the service returned"
        )
    return task_id


def task_path(kind: Kind, task_id: str) -> str:
    """The task query path of ``task_id``, escaped as one path segment.

    Example:
        >>> task_path("video", "run/7?v=2#a b")
        '/v1/videos/tasks/run%2F7%3Fv%3D2%23a%20b'
    """
    return f"/v1/{kind}s/tasks/{quote(check_task_id(task_id), safe='')}"


__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "ClientConfig",
    "ConfigOptions",
    "ImageResult",
    "Kind",
    "OnUpdate",
    "Outcome",
    "RequestLike",
    "Secret",
    "TERMINAL_STATUSES",
    "Task",
    "TaskError",
    "TaskRecord",
    "TaskRef",
    "TaskStatus",
    "VideoResult",
    "check_task_id",
    "checked_key",
    "resolve_config",
    "task_path",
]
