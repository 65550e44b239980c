"""The journal interface: what the client tells a history about every submission, and what a
history (``genlab.history``) implements and imports. This module is the documented interface
for sibling packages; people use ``genlab.client`` (the user's API) instead.

The client calls a :class:`TaskJournal` at each step of a task's life, so that a submission
whose answer was lost is never forgotten and its credits can be accounted for:

1. ``submit_started`` before the request leaves (returns a local entry id),
2. ``submit_accepted`` with the task id, or ``submit_uncertain`` when the request may have
   reached the service but no answer came back, or ``submit_failed`` when it was refused,
3. ``status_changed`` for every new status observed,
4. ``results_saved`` after files were downloaded.

It also answers ``duration_samples``: the finished tasks the client's
:class:`~genlab.client.DurationModel` learns from, so polling is scheduled around when a task
like this one will likely finish. :class:`MemoryJournal` (the default) keeps everything in
memory; the SQLite history in :mod:`genlab.history` implements the same protocol durably.

Example:
    journal = MemoryJournal()
    client = genlab.AsyncClient(history=journal)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from genlab.client._budget import day_limit_error
from genlab.client._durations import DurationSample, Work
from genlab.client._reuse import PastResult, Reused
from genlab.client._types import Task, TaskRecord

logger = logging.getLogger("genlab")

DurationKey = tuple[str, str | None, float | None]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SubmitEntry:
    """One submission about to be sent. Holds the body as sent; the API key is never in it."""

    body: dict[str, Any]
    model: str
    kind: str
    mode: str
    credits: int | None
    submitted_at: datetime
    resolution: str | None = None
    duration: float | None = None
    address: str | None = None  # the content address (genlab.catalog.content_address)
    assumed_credits: int | None = None  # the budget's assumed price of an unpriced model
    day_cap: int | None = None  # Budget(day=...): submit_started refuses to cross it

    @property
    def counted_credits(self) -> int | None:
        """What a budget counts for it: the published price, else the assumed one."""
        return self.credits if self.credits is not None else self.assumed_credits

    @property
    def duration_key(self) -> DurationKey:
        """The key durations are learned under: (model, resolution, duration)."""
        return (self.model, self.resolution, self.duration)


@runtime_checkable
class TaskJournal(Protocol):
    """What the client records, and the one question it asks (``duration_samples``).

    Methods are called on the client's journal thread (never on its event loop, so a slow or
    locked history does not stall polling), one at a time, in the order of events. Exceptions
    from ``submit_started`` stop the submission before anything is sent; exceptions
    from the other methods are logged and ignored, so a journal problem never loses a task.
    """

    def submit_started(self, entry: SubmitEntry) -> str:
        """A submission is about to be sent. Returns a local entry id."""
        ...

    def submit_accepted(self, entry_id: str, task: Task) -> None:
        """The service accepted the submission and gave it ``task.task_id``."""
        ...

    def submit_uncertain(self, entry_id: str, reason: str) -> None:
        """The request may have reached the service (and been billed); no answer came back."""
        ...

    def submit_failed(self, entry_id: str, reason: str) -> None:
        """The service refused the submission (4xx, or a 5xx that means nothing was created)."""
        ...

    def status_changed(self, record: TaskRecord) -> None:
        """A new status was observed for a task (called once per change)."""
        ...

    def results_saved(self, task_id: str, paths: Sequence[Path | str]) -> None:
        """The task's results were downloaded to ``paths`` (local paths, or storage URLs such
        as ``"s3://bucket/prefix/t1.mp4"``)."""
        ...

    def duration_samples(self, limit: int = 1000) -> Sequence[DurationSample]:
        """Up to ``limit`` succeeded tasks (newest first) to learn durations from.

        Asked once per client, on its first wait; tasks that finish later reach the client's
        model directly.
        """
        ...


@runtime_checkable
class SpendJournal(TaskJournal, Protocol):
    """A journal that also keeps the money: earlier results by content address, reuses, and
    the day cap. :class:`MemoryJournal` and :class:`genlab.History` are ones.

    Its ``submit_started`` honours :attr:`SubmitEntry.day_cap`: it sums the day's (UTC)
    submissions that were not refused, and raises :class:`~genlab.CreditLimitError` instead of
    recording the entry when this one would cross the cap; the check and the new row are one
    atomic step, so concurrent submitters (threads or processes) can never cross it together.
    """

    def find_results(self, address: str, limit: int = 5) -> Sequence[PastResult]:
        """Succeeded tasks of this content address, newest first."""
        ...

    def reuse_recorded(self, address: str, model: str, note: Reused) -> None:
        """A result was reused instead of paid for again (counted in ``spend()``)."""
        ...

    def day_spent(self, moment: datetime) -> int:
        """Credits counted on ``moment``'s UTC day: submissions not refused, at their
        published price, else their assumed one."""
        ...


@contextlib.contextmanager
def recording(step: str) -> Iterator[None]:
    """Run one journal call whose failure must not stop the client: log it and go on.

    Every journal method but ``submit_started`` is called this way, so a full disk or a
    locked database never loses a task that the service already has.

    Example:
        >>> with recording("status_changed"):
        ...     raise OSError("disk full")  # logged, not raised
    """
    try:
        yield
    except Exception:
        logger.exception("genlab: the history failed to record %s; continuing", step)


class JournalWriter:
    """Runs a journal's methods on one worker thread, in the order they were asked.

    A history may block: SQLite waits up to its busy timeout when another process (a second
    notebook, a database browser) holds the lock. On the event loop that would freeze every
    poll and widget of the client; on this thread only the journal waits, and the writes still
    land in order. ``record`` does not wait for the write; ``call`` awaits it (the entry id of
    ``submit_started``); ``settle`` waits a bounded time for the writes asked so far.

    Example:
        writer = JournalWriter()
        entry_id = await writer.call(journal.submit_started, entry)
        writer.record("status_changed", journal.status_changed, record)
    """

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._last: concurrent.futures.Future[Any] | None = None
        self._lock = threading.Lock()

    def _submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="genlab-journal"
                )
            future = self._pool.submit(fn, *args)
            self._last = future
            return future

    async def call(
        self, fn: Callable[..., T], *args: Any, on_cancel: Callable[[T], object] | None = None
    ) -> T:
        """``fn(*args)`` on the journal thread; its result, or what it raised.

        Cancelling the caller does not undo the call: ``on_cancel`` then runs with its result
        (e.g. to mark a journal entry whose request was never sent).
        """
        future = self._submit(fn, *args)
        try:
            return await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            if on_cancel is not None:
                follow_up = on_cancel

                def after() -> None:
                    if future.exception() is None:
                        with recording("cancellation"):
                            follow_up(future.result())

                self._submit(after)  # one worker: runs once ``fn`` is done
            raise

    def record(self, step: str, fn: Callable[..., object], *args: Any) -> None:
        """``fn(*args)`` on the journal thread, not waited for; a failure is logged."""

        def logged() -> None:
            with recording(step):
                fn(*args)

        self._submit(logged)

    async def settle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the writes asked so far; True when they ended."""
        last = self._last
        if last is None or last.done():
            return True
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(last)), timeout)
        except TimeoutError:
            logger.warning(
                "genlab: the history is busy (locked by another process?); its writes "
                "continue in the background"
            )
            return False
        except Exception:  # logged where it was raised
            pass
        return True

    def close(self) -> None:
        """Let the thread end once the writes asked so far are done; never blocks."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


@dataclass(slots=True)
class JournalEntry:
    """One submission as :class:`MemoryJournal` remembers it."""

    entry_id: str
    entry: SubmitEntry
    state: str = "sending"  # sending -> accepted | uncertain | failed
    task_id: str | None = None
    reason: str | None = None
    status: str | None = None
    records: list[TaskRecord] = field(default_factory=list)
    paths: list[Path | str] = field(default_factory=list)


class MemoryJournal:
    """The default journal: entries and finished tasks' durations in memory, for one session.

    The newest ``window`` succeeded tasks are kept as duration samples.

    Example:
        >>> from genlab.client import Work
        >>> journal = MemoryJournal()
        >>> journal.learn(DurationSample(Work("video-a", "video", 1280 * 720, 5.0), 12.0))
        >>> [s.seconds for s in journal.duration_samples()]
        [12.0]
    """

    def __init__(self, *, window: int = 1000) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._entries: dict[str, JournalEntry] = {}
        self._by_task: dict[str, JournalEntry] = {}
        self._durations: deque[DurationSample] = deque(maxlen=window)
        self.reuses: list[Reused] = []  # every result reused instead of paid for again

    # --- the protocol ----------------------------------------------------------------

    def submit_started(self, entry: SubmitEntry) -> str:
        with self._lock:
            if entry.day_cap is not None:  # checked and reserved under one lock
                spent = self._day_spent(entry.submitted_at)
                if spent + (entry.counted_credits or 0) > entry.day_cap:
                    raise day_limit_error(f"{entry.model}: this task",
                                          entry.counted_credits or 0, spent, entry.day_cap)
            entry_id = f"local-{next(self._ids)}"
            self._entries[entry_id] = JournalEntry(entry_id, entry)
        return entry_id

    def submit_accepted(self, entry_id: str, task: Task) -> None:
        with self._lock:
            item = self._entries[entry_id]
            item.state, item.task_id = "accepted", task.task_id
            self._by_task[task.task_id] = item

    def submit_uncertain(self, entry_id: str, reason: str) -> None:
        with self._lock:
            item = self._entries[entry_id]
            item.state, item.reason = "uncertain", reason

    def submit_failed(self, entry_id: str, reason: str) -> None:
        with self._lock:
            item = self._entries[entry_id]
            item.state, item.reason = "failed", reason

    def status_changed(self, record: TaskRecord) -> None:
        with self._lock:
            item = self._by_task.get(record.task_id)
            if item is None:
                return
            item.status = record.status
            item.records.append(record)
            if not record.model:  # the journal knows what it submitted
                record = record.model_copy(update={"model": item.entry.model})
            sample = DurationSample.of_record(record)
            if sample is not None:
                self._durations.appendleft(sample)

    def results_saved(self, task_id: str, paths: Sequence[Path | str]) -> None:
        with self._lock:
            item = self._by_task.get(task_id)
            if item is not None:
                item.paths.extend(paths)

    def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
        with self._lock:
            return list(itertools.islice(self._durations, limit))

    # --- reuse (see SpendJournal) ----------------------------------------------------

    def find_results(self, address: str, limit: int = 5) -> list[PastResult]:
        with self._lock:
            found = [
                PastResult(e.records[-1], e.entry.submitted_at, e.entry.counted_credits,
                           tuple(e.paths))
                for e in reversed(self._entries.values())
                if e.entry.address == address and e.records and e.records[-1].succeeded
            ]
        return found[:limit]

    def reuse_recorded(self, address: str, model: str, note: Reused) -> None:
        with self._lock:
            self.reuses.append(note)

    def day_spent(self, moment: datetime) -> int:
        with self._lock:
            return self._day_spent(moment)

    def _day_spent(self, moment: datetime) -> int:
        day = moment.astimezone(UTC).date()
        return sum(
            e.entry.counted_credits or 0
            for e in self._entries.values()
            if e.state != "failed" and e.entry.submitted_at.astimezone(UTC).date() == day
        )

    # --- for people and tests --------------------------------------------------------

    def learn(self, sample: DurationSample) -> None:
        """Teach a duration directly (e.g. from an earlier session's history)."""
        with self._lock:
            self._durations.appendleft(sample)

    def entries(self) -> list[JournalEntry]:
        """Every submission so far, oldest first."""
        with self._lock:
            return list(self._entries.values())

    def uncertain(self) -> list[JournalEntry]:
        """Submissions that may have been billed without a task id: check before resubmitting."""
        return [e for e in self.entries() if e.state == "uncertain"]

    def __repr__(self) -> str:
        with self._lock:
            return f"MemoryJournal(entries={len(self._entries)}, durations={len(self._durations)})"


__all__ = [
    "DurationKey",
    "DurationSample",
    "JournalEntry",
    "JournalWriter",
    "MemoryJournal",
    "PastResult",
    "Reused",
    "SpendJournal",
    "SubmitEntry",
    "TaskJournal",
    "Work",
    "day_limit_error",
    "recording",
]
