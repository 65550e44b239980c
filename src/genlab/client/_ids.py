"""Task ids as the client sends them: checked once, and escaped as one path segment.

The interface says a task id is a string and nothing more, so a service may hand out ids with
``/``, ``?``, ``#``, ``%`` or spaces in them. Sent unescaped, ``?`` would start a query and
``/`` a new segment: the request would reach a different task. Every id is therefore sent
percent-encoded as a single segment, and ids that no escaping can make a segment of (empty,
``.``, ``..``) are refused before anything is sent.

Example:
    >>> task_path("video", "run/7?v=2#a b")
    '/v1/videos/tasks/run%2F7%3Fv%3D2%23a%20b'
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from genlab._wire import Kind


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
    """The task query path of ``task_id``, escaped as one path segment."""
    return f"/v1/{kind}s/tasks/{quote(check_task_id(task_id), safe='')}"
