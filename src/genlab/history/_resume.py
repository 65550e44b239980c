"""Resuming after a crash or a restart: what was submitted but not seen to the end, waited on
once (leased, so two processes never wait on the same task), and recorded.

Uncertain submissions (no task id) cannot be resumed; nothing is ever submitted again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from genlab._errors import GenlabError
from genlab._wire import TERMINAL_STATUSES, Task, TaskRecord
from genlab.client import AsyncClient, Client
from genlab.client.journal import TaskJournal
from genlab.history._leases import Leases
from genlab.history._pending import Pending
from genlab.history._schema import TASKS
from genlab.history._store import Store

_T = TASKS.c


class ResumeOutcome:
    """What :meth:`History.resume` did for one task: its final record, the error, or the
    process already waiting on it (``leased_by``, e.g. ``ana@lab-3/4121/9f2c01ab``).

    Example:
        >>> outcome = ResumeOutcome("t1", record=None, error=TimeoutError("still running"))
        >>> outcome.task_id, type(outcome.error).__name__
        ('t1', 'TimeoutError')
    """

    __slots__ = ("error", "leased_by", "record", "task_id")

    def __init__(
        self, task_id: str, record: TaskRecord | None, error: BaseException | None,
        leased_by: str | None = None,
    ):
        self.task_id = task_id
        self.record = record
        self.error = error
        self.leased_by = leased_by

    @property
    def status(self) -> str:
        if self.record is not None:
            return self.record.status
        if self.leased_by is not None:
            return f"waited on by {self.leased_by}"
        return f"error: {type(self.error).__name__}" if self.error else "unknown"

    def __repr__(self) -> str:
        return f"ResumeOutcome({self.task_id!r}, {self.status!r})"


def _unfinished() -> sa.ColumnElement[bool]:
    return sa.and_(
        _T.state == "accepted", _T.task_id.is_not(None),
        sa.or_(_T.status.is_(None), _T.status.not_in(sorted(TERMINAL_STATUSES))),
    )


class Resume:
    """Finding and finishing the unfinished tasks of ``store``, under this process's
    ``leases``, with the task ids kept in ``pending`` that the store could not take."""

    def __init__(self, store: Store, leases: Leases, pending: Pending) -> None:
        self._store = store
        self._leases = leases
        self._pending = pending

    def unfinished(self) -> list[Mapping[str, Any]]:
        """Accepted tasks not seen to the end (resumable), oldest first; then task ids kept
        in the side file that could not be merged into the history yet."""
        self._pending.merge()
        found = [dict(r._mapping) for r in self._store.rows(
            sa.select(TASKS).where(_unfinished()).order_by(_T.submitted_at))]
        return found + self._pending.rows({r["task_id"] for r in found})

    def claim_unfinished(self) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """Lease the unfinished tasks no live process is waiting on; (claimed, held elsewhere).

        Two processes resuming at once never claim the same task: on PostgreSQL the rows are
        locked (``FOR UPDATE SKIP LOCKED``), on SQLite the file's write lock is held.
        """
        self._pending.merge()
        now = time.time()
        query = sa.select(TASKS).where(_unfinished()).order_by(_T.submitted_at)
        if self._store.backend == "postgresql":
            query = query.with_for_update(skip_locked=True)
        with self._store.write() as db:
            rows: list[Mapping[str, Any]] = [dict(r._mapping) for r in db.execute(query)]
            mine = [r for r in rows if self._leases.free(r, now)]
            if mine:
                db.execute(sa.update(TASKS).where(
                    _T.entry_id.in_([r["entry_id"] for r in mine])
                ).values(self._leases.taken(now)))
        if mine:
            self._leases.holding()
        taken = {r["task_id"] for r in rows}
        elsewhere: list[Mapping[str, Any]] = [r for r in rows if r not in mine]
        return mine + self._pending.rows(taken), elsewhere

    def uncertain(self) -> list[Mapping[str, Any]]:
        """Submissions that may have been billed without a task id."""
        return [dict(r._mapping) for r in self._store.rows(
            sa.select(TASKS).where(_T.state.in_(["uncertain", "sending"]))
            .order_by(_T.submitted_at))]

    async def aresume(
        self, client: AsyncClient, journal: TaskJournal, *, timeout: float | None,
        concurrency: int,
    ) -> list[ResumeOutcome]:
        """Wait with ``client`` for every claimed task; record each end in ``journal``
        unless the client journals into it already."""
        rows, elsewhere = self.claim_unfinished()
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(row: Mapping[str, Any]) -> ResumeOutcome:
            task = _task_of(row)
            async with gate:
                try:
                    record = await client.wait(task, timeout=timeout, raise_on_failure=False)
                except GenlabError as exc:
                    return ResumeOutcome(task.task_id, None, exc)
            _record(journal, client.history, record)
            return ResumeOutcome(task.task_id, record, None)

        done = list(await asyncio.gather(*(one(r) for r in rows)))
        return done + _leased(elsewhere)

    def resume(
        self, client: Client, journal: TaskJournal, *, timeout: float | None
    ) -> list[ResumeOutcome]:
        """The blocking :meth:`aresume`, for a :class:`genlab.Client`."""
        if isinstance(client, AsyncClient):
            raise TypeError("with an AsyncClient use: await history.aresume(client)")
        outcomes = []
        rows, elsewhere = self.claim_unfinished()
        futures = [
            (_task_of(r), client.wait_future(_task_of(r), timeout=timeout, raise_on_failure=False))
            for r in rows
        ]
        for task, future in futures:
            try:
                record = future.result(timeout=None if timeout is None else timeout + 30)
            except GenlabError as exc:
                outcomes.append(ResumeOutcome(task.task_id, None, exc))
                continue
            _record(journal, client.history, record)
            outcomes.append(ResumeOutcome(task.task_id, record, None))
        return outcomes + _leased(elsewhere)


def _record(journal: TaskJournal, clients: object, record: TaskRecord) -> None:
    # A client journaling into this very history has recorded it already.
    if clients is not journal:
        journal.status_changed(record)


def _leased(rows: Sequence[Mapping[str, Any]]) -> list[ResumeOutcome]:
    return [ResumeOutcome(r["task_id"], None, None, r["lease_owner"]) for r in rows]


def _task_of(row: Mapping[str, Any]) -> Task:
    created = row["created_at"]
    return Task(
        task_id=row["task_id"],
        model=row["model"],
        kind=row["kind"],
        created_at=datetime.fromtimestamp(created, UTC) if created is not None else None,
    )
