"""Results in reports and galleries: the one card (:func:`genlab.media.card.result_html`),
for a :class:`~genlab.Result` or a bare record (the request it then shows is what the
history keeps for it, when given)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from genlab._wire import TaskRecord
from genlab.catalog import result_of
from genlab.media import Result
from genlab.media.card import outcomes_html, result_html, results_html


def record_html(record: TaskRecord, request: Mapping[str, Any] | None = None, *,
                served: bool = False) -> str:
    """The card of one result; a bare record becomes a :class:`~genlab.Result` first.
    ``served``: drawn inside a widget (see :func:`genlab.media.card.original_link`).

    Example:
        >>> from genlab._wire import TaskRecord
        >>> page = record_html(TaskRecord(task_id="t1", status="failed", model="video-a",
        ...                               error={"code": "OOM", "message": "<b>out</b>"}))
        >>> "OOM: &lt;b&gt;out&lt;/b&gt;" in page
        True
    """
    return result_html(as_result(record, request), play="click", served=served)


def records_html(records: Iterable[TaskRecord]) -> str:
    """Several results as a grid of cards (videos wait for a click).

    Example:
        >>> from genlab.client import TaskRecord
        >>> record = TaskRecord(task_id="t1", status="succeeded", model="image-b",
        ...                     images=[{"url": "https://cdn.example/kite.png"}])
        >>> records_html([record]).startswith("<div class='genlab-records'")
        True
    """
    return results_html(as_result(r) for r in records)


def as_result(record: TaskRecord, request: Mapping[str, Any] | None = None) -> Result:
    """``record`` as a Result (itself when it is one).

    Example:
        >>> from genlab.client import TaskRecord
        >>> record = TaskRecord(task_id="t1", status="succeeded", model="image-b",
        ...                     images=[{"url": "https://cdn.example/kite.png"}])
        >>> result = as_result(record, {"model": "image-b", "prompt": "a kite"})
        >>> type(result).__name__, result.task_id, result.prompt
        ('Result', 't1', 'a kite')
    """
    if isinstance(record, Result) and request is None:
        return record
    return result_of(record, request)


__all__ = ["as_result", "outcomes_html", "record_html", "records_html"]
