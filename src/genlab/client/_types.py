"""The client's own types (an outcome, what a request or a task reference may be); the wire
types come from :mod:`genlab._wire`.

Example:
    >>> Outcome(request={"model": "video-a"}).ok
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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

RequestLike = Mapping[str, Any] | RequestBase
"""A request: a body dict, or a request the catalog already validated."""
TaskRef = Task | TaskRecord | str
"""A task: the accepted Task, a record of it, or its id."""


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


__all__ = [
    "TERMINAL_STATUSES",
    "ImageResult",
    "Kind",
    "Outcome",
    "RequestLike",
    "Task",
    "TaskError",
    "TaskRecord",
    "TaskRef",
    "TaskStatus",
    "VideoResult",
]
