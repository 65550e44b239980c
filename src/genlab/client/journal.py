"""The journal interface: what the client tells a history about every submission, and what a
history (``genlab.history``) implements and imports. This module is the documented interface
for sibling packages (history, comparison, report, widgets, connect): the journal protocols,
what a journal keeps, and the few helpers they share with the client (safe file names, the
client's option and environment variable names). Kept media and their file names are
:mod:`genlab.media`'s. People use ``genlab.client`` (the user's API) instead.

The client calls a :class:`TaskJournal` at each step of a task's life, so that a submission
whose answer was lost is never forgotten and its credits can be accounted for:

1. ``submit_started`` before the request leaves (returns a local entry id),
2. ``submit_accepted`` with the task id, or ``submit_uncertain`` when the request may have
   reached the service but no answer came back, or ``submit_failed`` when it was refused,
3. ``status_changed`` for every new status observed,
4. ``results_saved`` after files were downloaded, with the measured facts of each kept
   media file and how they differ from the request (:func:`record_results` calls a journal
   written before facts existed with the paths alone).

A :class:`SpendJournal` also keeps the money (earlier results by content address, reuses,
the day cap) and the requests sent. :class:`MemoryJournal` (the default) keeps all of it in
memory for one session; :class:`genlab.History` keeps it durably (SQLite or PostgreSQL).
Durations to learn polling from are not the journal's business: a client is given a durations
source of its own (``AsyncClient(durations=...)``; ``genlab.connect()`` passes the history's).

Example:
    journal = MemoryJournal()
    client = genlab.AsyncClient(history=journal)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import hashlib
import inspect
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from genlab._errors import CreditLimitError
from genlab.client._config import (
    API_KEY_ENV,
    BASE_URL_ENV,
    ConfigOptions,
    RequestLike,
    Task,
    TaskRecord,
)
from genlab.client._durations import DurationSample
from genlab.client._pacing import Work
from genlab.client._uploads import safe_filename
from genlab.media import MediaInfo, media_name

logger = logging.getLogger("genlab")

DurationKey = tuple[str, str | None, float | None]
T = TypeVar("T")


def day_limit_error(what: str, credits: int, spent: int, cap: int) -> CreditLimitError:
    """The refusal of a submit (or a batch) that would cross ``Budget(day=...)``; nothing was
    sent. ``what`` names it, e.g. ``"video-a: this task"``.

    Example:
        >>> print(day_limit_error("video-a: this task", 800, 1500, 2000))
        video-a: this task would cost 800 credits and 500 of today's 2,000 remain (UTC day, every process writing this history). Nothing was sent; raise Budget(day=...) or wait for 00:00 UTC
    """  # noqa: E501
    left = max(0, cap - spent)
    return CreditLimitError(
        f"{what} would cost {credits:,} credits and {left:,} of today's {cap:,} remain "
        "(UTC day, every process writing this history). Nothing was sent; raise "
        "Budget(day=...) or wait for 00:00 UTC",
        estimate=credits,
        max_credits=left,
    )


@dataclass(frozen=True, slots=True)
class PastResult:
    """A succeeded task of some content address, as a history keeps it."""

    record: TaskRecord
    submitted_at: datetime | None
    credits: int | None  # what it cost: published, else the budget's assumed price
    paths: tuple[Path | str, ...] = ()  # local paths, or URLs in object storage
    media: tuple[MediaInfo, ...] = ()  # measured facts of each kept media file, in order
    mismatches: tuple[str, ...] = ()  # how they differ from the request ("asked 10 s, ...")

    @property
    def as_asked(self) -> bool | None:
        """True when its kept media matched the request, False when not, None when they
        were never measured."""
        return None if not self.media else not self.mismatches

    @property
    def files(self) -> tuple[Path | str, ...]:
        """The saved files (media, covers, the sidecar) that are still there.

        Local files are checked; files in object storage (URL strings) are not, so a lookup
        never waits on the network: ``client.download`` fetches again when one is gone.
        """
        return tuple(p for p in self.paths if isinstance(p, str) or p.is_file())

    @property
    def saved(self) -> bool:
        """True when its media (not only a sidecar) is still saved."""
        return any(not media_name(p).endswith(".json") for p in self.files)


@dataclass(frozen=True, slots=True)
class Reused:
    """The note on a reused result: which earlier task, from when, and what reusing saved.

    ``credits_saved`` is None when the earlier run had no known price. ``in_flight`` is True
    when an identical submission of this client was still running and was joined instead.

    Example:
        >>> from datetime import UTC, datetime
        >>> Reused("task-1", datetime(2026, 5, 1, 12, tzinfo=UTC), 800).message
        'reused task task-1 from 2026-05-01 12:00 UTC, 800 credits saved; reuse=False for a fresh one'
    """  # noqa: E501

    task_id: str
    when: datetime | None
    credits_saved: int | None
    paths: tuple[Path | str, ...] = ()
    in_flight: bool = False

    @property
    def message(self) -> str:
        """The one line said when a result is reused."""
        if self.in_flight:
            source = f"joined task {self.task_id}, an identical submission still in flight"
        else:
            when = f" from {self.when:%Y-%m-%d %H:%M} UTC" if self.when is not None else ""
            source = f"reused task {self.task_id}{when}"
        saved = (
            f"{self.credits_saved:,} credits saved" if self.credits_saved is not None
            else "its price is unknown, nothing paid"
        )
        return f"{source}, {saved}; reuse=False for a fresh one"


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
    """What the client records of every submission.

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

    def results_saved(
        self,
        task_id: str,
        paths: Sequence[Path | str],
        media: Sequence[MediaInfo] = (),
        mismatches: Sequence[str] = (),
    ) -> None:
        """The task's results were downloaded to ``paths`` (local paths, or storage URLs such
        as ``"s3://bucket/prefix/t1.mp4"``). ``media`` holds the measured facts of each kept
        media file (not covers or sidecars), in order, and ``mismatches`` how they differ from
        the request, one phrase each (``"asked 10 s, got 5.0 s"``); both are empty when the
        files were not measured (a later download of files already kept, a storage URL). A
        call with facts replaces the facts known of the task; a call without keeps them."""
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

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        """The body submitted for ``task_id`` as it was sent, or None when it is not kept
        (unknown task, or a body the journal keeps only in short)."""
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


def record_results(
    journal: TaskJournal,
    task_id: str,
    paths: Sequence[Path | str],
    media: Sequence[MediaInfo] = (),
    mismatches: Sequence[str] = (),
) -> None:
    """``journal.results_saved`` with the facts when the journal takes them, else with the
    paths alone: a journal written before media facts existed (``results_saved(task_id,
    paths)``) keeps working.

    Example:
        >>> class Old:
        ...     def results_saved(self, task_id, paths): print(task_id, list(paths))
        >>> record_results(Old(), "t1", ["t1.mp4"], [MediaInfo(kind="video")], [])  # type: ignore[arg-type]
        t1 ['t1.mp4']
    """  # noqa: E501
    if _takes_facts(type(journal)):
        journal.results_saved(task_id, paths, media=media, mismatches=mismatches)
    else:
        journal.results_saved(task_id, paths)


@functools.cache
def _takes_facts(kind: type) -> bool:
    method = getattr(kind, "results_saved", None)
    try:
        parameters = inspect.signature(method).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    names = {p.name for p in parameters.values()}
    extra = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    return extra or {"media", "mismatches"} <= names


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
    media: tuple[MediaInfo, ...] = ()  # the measured facts of its kept media files
    mismatches: tuple[str, ...] = ()  # how they differ from the request


class MemoryJournal:
    """The default journal: entries and finished tasks' durations in memory, for one session.

    The newest ``window`` succeeded tasks are kept as duration samples. Request bodies are
    kept in short: an inline ``data:`` URI longer than ``INLINE_KEPT`` characters is replaced
    by its size and digest (a notebook sending many image references must not keep every
    byte of them for its whole life), and :meth:`request_of` then says it no longer has that
    body. :class:`genlab.History` keeps bodies whole.

    Example:
        >>> from genlab.client.journal import Work
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

    INLINE_KEPT = 4096

    def submit_started(self, entry: SubmitEntry) -> str:
        entry = replace(entry, body=_in_short(entry.body, self.INLINE_KEPT))
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
            item.status = item.status or "queued"  # in the queue until a status says otherwise
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

    def results_saved(
        self,
        task_id: str,
        paths: Sequence[Path | str],
        media: Sequence[MediaInfo] = (),
        mismatches: Sequence[str] = (),
    ) -> None:
        with self._lock:
            item = self._by_task.get(task_id)
            if item is not None:
                item.paths.extend(paths)
                if media:  # a later call without facts keeps those measured at keep time
                    item.media, item.mismatches = tuple(media), tuple(mismatches)

    def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
        with self._lock:
            return list(itertools.islice(self._durations, limit))

    # --- reuse (see SpendJournal) ----------------------------------------------------

    def find_results(self, address: str, limit: int = 5) -> list[PastResult]:
        with self._lock:
            found = [
                PastResult(e.records[-1], e.entry.submitted_at, e.entry.counted_credits,
                           tuple(e.paths), e.media, e.mismatches)
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

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        with self._lock:
            item = self._by_task.get(task_id)
        if item is None or _SHORTENED in repr(item.entry.body):
            return None
        return dict(item.entry.body)

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



_SHORTENED = " (kept in short by MemoryJournal)"


def _in_short(value: Any, longest: int) -> Any:
    """``value`` with every ``data:`` URI longer than ``longest`` replaced by its size and
    digest (see :class:`MemoryJournal`).

    Example:
        >>> _in_short({"refs": [{"url": "data:image/png;base64," + "A" * 50}]}, 20)["refs"][0]
        {'url': 'data:image/png;base64,… 72 characters, sha256:669393d23419 (kept in short by MemoryJournal)'}
    """  # noqa: E501
    if isinstance(value, str):
        if len(value) > longest and value.startswith("data:"):
            head = value[: value.find(",") + 1] if "," in value[:200] else value[:40]
            digest = hashlib.sha256(value.encode()).hexdigest()[:12]
            return f"{head}… {len(value)} characters, sha256:{digest}{_SHORTENED}"
        return value
    if isinstance(value, dict):
        return {k: _in_short(v, longest) for k, v in value.items()}
    if isinstance(value, list):
        return [_in_short(v, longest) for v in value]
    return value


__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "ConfigOptions",
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
    "RequestLike",
    "day_limit_error",
    "record_results",
    "recording",
    "safe_filename",
]
