"""Running a grid's cells: through the client's own batch runner (``client.map``: its
concurrency, reuse, budget and batch pacing), each submission carrying its labels (tag,
experiment cell) into the history, behind one progress bar (:class:`genlab.display.
ProgressBar`).

Tasks an earlier run left running are waited on beside the new ones, on the client's own loop
(``client.wait_future``), under the same bar. No thread pool of blocking calls sits in front
of the client.

Example:
    >>> import genlab
    >>> with genlab.connect("http://localhost:1", "key", history=False, keep=False) as client:
    ...     ran = run_cells(client, [], progress=False)   # nothing to send
    >>> len(ran.outcomes), ran.waited
    (0, [])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from genlab.catalog import RequestBase
from genlab.client import Client, Labels, Outcome, Task, TaskRecord
from genlab.display import ProgressBar


@dataclass(slots=True)
class Ran:
    """What :func:`run_cells` ran: an outcome per request (in order) and, per task waited on,
    its record or what stopped the wait."""

    outcomes: list[Outcome]
    waited: list[TaskRecord | BaseException]


def run_cells(
    client: Client,
    requests: Sequence[RequestBase],
    *,
    labels: Labels | Sequence[Labels | None] | None = None,
    waiting: Sequence[Task] = (),
    concurrency: int = 4,
    timeout: float | None = None,
    reuse: bool | None = None,
    progress: bool = True,
    desc: str = "grid",
    unit: str = "run",
    on_update: Callable[[TaskRecord], object] | None = None,
) -> Ran:
    """Send ``requests`` and wait for them and for the ``waiting`` tasks; one failure never
    stops the others (each is in its outcome).

    Args:
        client: a :class:`genlab.Client`.
        requests: validated requests, one per cell to send.
        labels: what goes with each submission into the history (one for all, or one per
            request): its tag, and the experiment cell whose task id is recorded in the same
            step as the submission's acceptance.
        waiting: tasks already on the service (an earlier run's), to wait for.
        concurrency: tasks in flight at once.
        timeout: seconds each task may take.
        reuse: as :meth:`genlab.Client.submit`'s.
        progress: show the bar (a notebook's or a terminal's).
        desc, unit: the bar's label and what a cell is called.
        on_update: called with each record at every status change (on the client's runner
            thread: keep it short).
    """
    bar = ProgressBar(len(requests) + len(waiting), desc=desc, unit=unit,
                      enabled=progress and bool(len(requests) + len(waiting)))

    def seen(record: TaskRecord) -> None:
        # On the client's runner thread, once per status change of each task.
        if on_update is not None:
            on_update(record)
        if record.done:
            bar.ended(record.status)

    try:
        futures = [client.wait_future(task, timeout=timeout, on_update=seen,
                                      raise_on_failure=False, progress=False)
                   for task in waiting]
        outcomes: list[Outcome] = []
        if requests:
            outcomes = list(client.map(list(requests), concurrency=concurrency, timeout=timeout,
                                       on_update=seen, reuse=reuse, labels=labels))
        waited: list[TaskRecord | BaseException] = []
        for future in futures:
            try:
                waited.append(future.result())
            except Exception as exc:  # a wait's own trouble, kept beside its task
                waited.append(exc)
    finally:
        bar.close()  # cells that ended without a final record (refused, uncertain, timed out)
    return Ran(outcomes, waited)
