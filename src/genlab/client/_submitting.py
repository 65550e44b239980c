"""Submitting one request exactly once, with the journal told every step.

The journal hears ``submit_started`` before anything is sent (if it cannot record, nothing is
sent), then exactly one of ``submit_accepted``, ``submit_uncertain`` or ``submit_failed``;
failures of those three are logged and ignored, since the service may already have the task.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from genlab._errors import GenlabError, SubmissionUncertainError
from genlab.catalog import RequestBase, estimate_credits, validate
from genlab.client._journal import DurationKey, SubmitEntry, TaskJournal, recording
from genlab.client._transport import Http
from genlab.client._types import Kind, RequestLike, Task


@dataclass(frozen=True, slots=True)
class Submitted:
    """What a client remembers of a task it submitted: the body, when, and the journal entry."""

    body: dict[str, Any]
    kind: Kind
    started: float  # time.monotonic() when the request left
    entry_id: str
    duration_key: DurationKey


def build_request(request_or_body: RequestLike | None, fields: Mapping[str, Any]) -> RequestBase:
    """Merge a body (or request) with keyword fields and validate the result with the catalog.

    Fields override and extend the body. Raises ``InvalidParameterError`` for anything invalid.

    Example:
        >>> build_request({"model": "image-b", "prompt": "a"}, {"prompt": "b"}).prompt_text
        'b'
    """
    if request_or_body is None:
        return validate(dict(fields))
    if isinstance(request_or_body, RequestBase):
        if not fields:
            return request_or_body
        return validate({**request_or_body.to_body(), **fields})
    if isinstance(request_or_body, Mapping):
        return validate({**request_or_body, **fields})
    return validate(request_or_body)  # refuses it with a clear InvalidParameterError


def submit_entry(request: RequestBase) -> SubmitEntry:
    """What the journal records of a request before it is sent."""
    return SubmitEntry(
        body=request.to_body(),
        model=request.model_name,
        kind=request.kind,
        mode=request.mode.value,
        credits=estimate_credits(request),
        submitted_at=datetime.now(UTC),
        resolution=request.resolution_label,
        duration=request.requested_duration,
    )


async def submit_once(
    http: Http, history: TaskJournal, request: RequestBase
) -> tuple[Task, Submitted]:
    """Send a validated request once; return the accepted task and what to remember of it.

    Raises:
        SubmissionUncertainError: it may have reached the service; it was not resent.
        APIError / APIConnectionError: refused, or the service could not be reached.
        Exception: whatever ``history.submit_started`` raised (then nothing was sent).
    """
    entry = submit_entry(request)
    kind: Kind = request.kind
    # Recorded before anything is sent: if this raises, nothing was sent either.
    entry_id = history.submit_started(entry)
    started = time.monotonic()

    def read_task(data: Mapping[str, Any]) -> Task:
        return Task.model_validate({**data, "kind": kind})

    try:
        task = await http.submit(f"/v1/{kind}s/generate", entry.body, read_task, model=entry.model)
    except SubmissionUncertainError as exc:
        with recording("submit_uncertain"):
            history.submit_uncertain(entry_id, str(exc))
        raise
    except asyncio.CancelledError:
        with recording("submit_uncertain"):
            history.submit_uncertain(entry_id, "cancelled while the request was in flight")
        raise
    except GenlabError as exc:
        with recording("submit_failed"):
            history.submit_failed(entry_id, str(exc))
        raise
    with recording("submit_accepted"):
        history.submit_accepted(entry_id, task)
    known = Submitted(
        body=entry.body,
        kind=kind,
        started=started,
        entry_id=entry_id,
        duration_key=entry.duration_key,
    )
    return task, known
