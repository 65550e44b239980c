"""Many requests at once (``map``, and so ``compare``): bounded concurrency, one outcome per
request, in input order. The service's own cap on tasks running at once is the lifecycle's
(:class:`~genlab.client._limits.Slots`), so a batch larger than the cap waits for room
instead of losing requests to 429s."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from genlab._errors import ConfigurationError, TaskFailedError
from genlab.client._types import Outcome, RequestLike, Task, TaskRecord


class Outcomes(list[Outcome]):
    """What ``map`` returns: one :class:`Outcome` per request, in input order. In a notebook
    it shows as a grid of result cards (errors as their messages)."""


async def run_many(
    requests: Iterable[RequestLike],
    submit: Callable[[RequestLike], Awaitable[Task]],
    wait: Callable[[Task], Awaitable[TaskRecord]],
    *,
    concurrency: int,
) -> Outcomes:
    """Submit and wait for every request, at most ``concurrency`` tasks in flight.

    ``wait`` returns a failed task's record rather than raising. Each failure (invalid
    request, uncertain submission, failed task, timeout) is captured in its own outcome; none
    cancels the others. Cancelling the whole call cancels every wait, never a task on the
    service: accepted task ids are already in the client's history.
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
    # The gate spans submit + wait: ``concurrency`` bounds tasks in flight on the service.
    gate = asyncio.Semaphore(concurrency)

    async def run_one(request: RequestLike) -> Outcome:
        outcome = Outcome(request=request)
        async with gate:
            try:
                outcome.task = await submit(request)
                outcome.record = await wait(outcome.task)
                if outcome.record.failed:
                    outcome.error = TaskFailedError(
                        f"task {outcome.record.task_id} failed: {outcome.record.error}",
                        record=outcome.record,
                    )
            except Exception as exc:  # captured per request, by design
                outcome.error = exc
        return outcome

    return Outcomes(await asyncio.gather(*(run_one(r) for r in requests)))
