"""The wait loop: poll on a schedule until a task ends, within one overall deadline.

Kept apart from the client so the loop reads as one piece: fetch, report each new status
once, stop on ``succeeded``/``failed`` (unknown statuses are not final), tell the
:class:`~genlab.client.PollSchedule` what each poll showed, sleep as it says (or as the
service's polling hint says), and turn an expired deadline into a
:class:`~genlab.TaskTimeoutError` that says how to resume.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from genlab._errors import TaskTimeoutError, UnreadableResponseError
from genlab.client._polling import PollSchedule
from genlab.client._types import TaskRecord

OnUpdate = Callable[[TaskRecord], object]

IN_BATCH: ContextVar[bool] = ContextVar("genlab_in_batch", default=False)
"""True inside ``client.map`` (and so ``compare``): its waits use the batch schedule."""


def elapsed_since(origin: float | None) -> Callable[[TaskRecord | None], float]:
    """Seconds since submission: from the local submit time when known (monotonic, immune
    to clock skew), else from the record's ``created_at``, else since the wait began."""
    started = time.monotonic()

    def elapsed(record: TaskRecord | None) -> float:
        if origin is not None:
            return time.monotonic() - origin
        if record is not None and record.created_at is not None:
            return max(0.0, (datetime.now(UTC) - record.created_at).total_seconds())
        return time.monotonic() - started

    return elapsed


async def poll_until_done(
    task_id: str,
    fetch: Callable[[], Awaitable[TaskRecord | None]],
    *,
    schedule: PollSchedule,
    elapsed: Callable[[TaskRecord | None], float],
    limit: float,
    on_change: Callable[[TaskRecord], None],
    on_update: OnUpdate | None = None,
    hint: Callable[[], float | None] | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> TaskRecord:
    """Poll ``fetch`` until the record is final; return it.

    ``fetch`` returns None when a poll failed for a transient reason (it is simply tried again
    later). ``on_change`` (the journal) and ``on_update`` (the caller) see each new status once.
    ``hint`` returns the service's advice on the last poll (seconds until the next one), or
    None; ``sleep`` is ``asyncio.sleep`` (tests pass one that records the delays).

    Raises:
        TaskTimeoutError: ``limit`` seconds passed first (``math.inf``: never).
    """
    record: TaskRecord | None = None
    last_status: str | None = None
    deadline = asyncio.timeout(None if math.isinf(limit) else limit)
    try:
        async with deadline:
            while True:
                fresh = await fetch()
                if fresh is not None:
                    record = fresh
                    if record.status != last_status:
                        last_status = record.status
                        on_change(record)
                        if on_update is not None:
                            result = on_update(record)
                            if inspect.isawaitable(result):
                                await result
                    if record.done:
                        return record
                now = elapsed(record)
                if fresh is not None:
                    schedule.observe(fresh.status, now)
                advice = hint() if hint is not None else None
                await sleep(schedule.next_delay(now, advice))
    except TimeoutError:
        if not deadline.expired():
            raise  # not our deadline: someone else's timeout, let it through
        status = last_status or "unknown"
        raise TaskTimeoutError(
            f"task {task_id} is still {status} after waiting {limit:g} s; it keeps running on "
            f"the service. Resume with client.wait({task_id!r}).",
            task_id=task_id,
            last_status=last_status,
        ) from None


def unreadable_at_deadline(
    task_id: str, limit: float, last: UnreadableResponseError
) -> UnreadableResponseError:
    """The error of a wait whose deadline passed while the task's record could not be read
    (unreadable records are transient until then): what came back, bounded, and what to do."""
    return UnreadableResponseError(
        f"the service's record for task {task_id} could not be read until the wait's deadline "
        f"({limit:g} s): {last}. The task may still be running and its id is in the history; "
        f"see the answer's start in .excerpt, then client.wait({task_id!r}) again.",
        status=last.status,
        excerpt=last.excerpt,
    )
