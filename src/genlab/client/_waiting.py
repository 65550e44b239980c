"""The wait loop: poll on a schedule until a task ends, within one overall deadline.

Kept apart from the client so the loop reads as one piece: fetch, report each new status
once, stop on ``succeeded``/``failed`` (unknown statuses are not final), sleep as the
:class:`~genlab.client.PollSchedule` says, and turn an expired deadline into a
:class:`~genlab.TaskTimeoutError` that says how to resume.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from genlab._errors import TaskTimeoutError
from genlab.client._polling import PollSchedule
from genlab.client._types import TaskRecord

OnUpdate = Callable[[TaskRecord], object]


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
) -> TaskRecord:
    """Poll ``fetch`` until the record is final; return it.

    ``fetch`` returns None when a poll failed for a transient reason (it is simply tried again
    later). ``on_change`` (the journal) and ``on_update`` (the caller) see each new status once.

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
                await asyncio.sleep(schedule.next_delay(elapsed(record)))
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
