"""The client's own types (an outcome, what a request or a task reference may be); the wire
types come from :mod:`genlab._wire`.

Example:
    >>> Outcome(request={"model": "video-a"}).ok
    False
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

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
        # The record's own card when there is one; else the error, escaped.
        if self.record is not None and self.error is None:
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
    "TERMINAL_STATUSES",
    "ImageResult",
    "Kind",
    "OnUpdate",
    "Outcome",
    "RequestLike",
    "Task",
    "TaskError",
    "TaskRecord",
    "TaskRef",
    "TaskStatus",
    "VideoResult",
    "check_task_id",
    "task_path",
]
