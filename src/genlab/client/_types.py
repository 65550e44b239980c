"""Typed service responses: the task, the task record, its results and its error.

Every model allows extra fields (``extra="allow"``) so a service that grows new fields does not
break old notebooks, and ``status`` is a plain string so an unknown status is carried, not
refused. Timestamps are parsed into aware datetimes when they can be, and become ``None``
(with a log line) when the service sends something unreadable.

Example:
    >>> record = TaskRecord.model_validate(
    ...     {"task_id": "t1", "status": "succeeded", "model": "image-b",
    ...      "created_at": "2025-01-01T00:00:00Z", "completed_at": "2025-01-01T00:00:04Z",
    ...      "images": [{"url": "https://x/a.png", "width": 1024, "height": 1024}]}
    ... )
    >>> record.succeeded, record.seconds, record.results[0].width
    (True, 4.0, 1024)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PrivateAttr,
    field_validator,
    model_validator,
)

logger = logging.getLogger("genlab")

Kind = Literal["video", "image"]


class TaskStatus(StrEnum):
    """The four statuses the interface names. Records may carry others; those are not final.

    Example:
        >>> TaskStatus.SUCCEEDED == "succeeded"
        True
    """

    QUEUED = "queued"
    PROCESSING = "processing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


TERMINAL_STATUSES = frozenset({TaskStatus.SUCCEEDED.value, TaskStatus.FAILED.value})


def _lenient_datetime(value: Any) -> Any:
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            logger.warning("genlab: ignoring an unreadable timestamp %r from the service", value)
            return None
        # The interface says UTC; a naive timestamp is read as UTC, not as local time.
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    logger.warning("genlab: ignoring a timestamp of type %s", type(value).__name__)
    return None


Timestamp = Annotated[datetime | None, BeforeValidator(_lenient_datetime)]


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class TaskError(_Response):
    """Why a task failed: ``code`` and ``message``; other fields the service adds are kept.

    Example:
        >>> TaskError.model_validate("out of memory").message
        'out of memory'
    """

    code: str = "UNKNOWN"
    message: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        # A bare string is an error too; keep it instead of refusing the whole record.
        return {"message": value} if isinstance(value, str) else value

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.message else self.code


class VideoResult(_Response):
    """One generated video: its URL, size, length, cover and (video-b) last frame."""

    url: str
    width: int | None = None
    height: int | None = None
    duration: float | None = None
    cover_url: str | None = None
    last_frame_url: str | None = None


class ImageResult(_Response):
    """One generated image: its URL and size."""

    url: str
    width: int | None = None
    height: int | None = None


class Task(_Response):
    """A submitted task, as the service acknowledged it.

    Pass it to ``client.wait(task)`` or ``client.get(task)``; it remembers which endpoint
    serves it (``kind``) and the request body that created it (``body``).

    Example:
        >>> task = Task(task_id="t1", model="video-a", kind="video")
        >>> task.task_id, task.kind
        ('t1', 'video')
    """

    task_id: str
    model: str = ""
    created_at: Timestamp = None
    request_id: str | None = None
    kind: Kind | None = None

    _body: dict[str, Any] | None = PrivateAttr(default=None)
    _submitted_monotonic: float | None = PrivateAttr(default=None)
    _entry_id: str | None = PrivateAttr(default=None)
    # (model, resolution, duration): what the history learns poll timing under.
    _duration_key: tuple[str, str | None, float | None] | None = PrivateAttr(default=None)

    @property
    def body(self) -> dict[str, Any] | None:
        """The request body that was sent (never holds the API key), when this client sent it."""
        return None if self._body is None else dict(self._body)


class TaskRecord(_Response):
    """A task's state from the task query endpoint.

    ``status`` is a plain string; compare it with :class:`TaskStatus` members. Helpers:
    ``done``, ``succeeded``, ``failed``, ``results`` and ``seconds``.

    Example:
        >>> TaskRecord(task_id="t1", status="processing").done
        False
    """

    task_id: str
    status: str
    model: str = ""
    created_at: Timestamp = None
    completed_at: Timestamp = None
    videos: list[VideoResult] | None = None
    images: list[ImageResult] | None = None
    error: TaskError | None = None
    request_id: str | None = None
    kind: Kind | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _status_text(cls, value: Any) -> Any:
        return value.value if isinstance(value, StrEnum) else value

    @property
    def done(self) -> bool:
        """True once the task succeeded or failed. Unknown statuses are not final."""
        return self.status in TERMINAL_STATUSES

    @property
    def succeeded(self) -> bool:
        return self.status == TaskStatus.SUCCEEDED

    @property
    def failed(self) -> bool:
        return self.status == TaskStatus.FAILED

    @property
    def results(self) -> list[VideoResult | ImageResult]:
        """The videos or images (empty until the task succeeded)."""
        return [*(self.videos or []), *(self.images or [])]

    @property
    def seconds(self) -> float | None:
        """Seconds from creation to completion, by the service's clock (None while running)."""
        if self.created_at is None or self.completed_at is None:
            return None
        return (self.completed_at - self.created_at).total_seconds()

    def summary(self) -> str:
        """One line for people, e.g. ``t1 video-a succeeded in 41.2 s``."""
        text = f"{self.task_id} {self.model} {self.status}".replace("  ", " ")
        if self.seconds is not None:
            text += f" in {self.seconds:.1f} s"
        if self.error is not None:
            text += f" ({self.error})"
        return text


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
