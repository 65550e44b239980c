"""The task journal: what the client tells a history about every submission, and asks it back.

The client calls a :class:`TaskJournal` at each step of a task's life, so that a submission
whose answer was lost is never forgotten and its credits can be accounted for:

1. ``submit_started`` before the request leaves (returns a local entry id),
2. ``submit_accepted`` with the task id, or ``submit_uncertain`` when the request may have
   reached the service but no answer came back, or ``submit_failed`` when it was refused,
3. ``status_changed`` for every new status observed,
4. ``results_saved`` after files were downloaded.

It also answers ``expected_duration`` so polling can be scheduled around when tasks like this
one usually finish. :class:`MemoryJournal` (the default) keeps everything in memory; the SQLite
history in :mod:`genlab.history` implements the same protocol durably.

Example:
    journal = MemoryJournal()
    client = genlab.AsyncClient(history=journal)
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import statistics
import threading
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from genlab.client._types import Task, TaskRecord

logger = logging.getLogger("genlab")

DurationKey = tuple[str, str | None, float | None]


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

    @property
    def duration_key(self) -> DurationKey:
        """The key durations are learned under: (model, resolution, duration)."""
        return (self.model, self.resolution, self.duration)


@runtime_checkable
class TaskJournal(Protocol):
    """What the client records, and the one question it asks (``expected_duration``).

    Methods are called on the client's event loop thread and should return quickly.
    Exceptions from ``submit_started`` stop the submission before anything is sent; exceptions
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

    def results_saved(self, task_id: str, paths: Sequence[Path]) -> None:
        """The task's results were downloaded to ``paths``."""
        ...

    def expected_duration(
        self, model: str, resolution: str | None, duration: float | None
    ) -> float | None:
        """Typical seconds from creation to completion for such tasks, or None if unknown."""
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
    paths: list[Path] = field(default_factory=list)


class MemoryJournal:
    """The default journal: entries and learned durations in memory, for one session.

    Durations are kept per (model, resolution, duration) from succeeded tasks, last ``window``
    of each; ``expected_duration`` answers their median once ``min_samples`` are known.

    Example:
        >>> journal = MemoryJournal()
        >>> journal.learn("video-a", "720P", 5, 12.0)
        >>> journal.expected_duration("video-a", "720P", 5)
        12.0
    """

    def __init__(self, *, window: int = 50, min_samples: int = 1) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._entries: dict[str, JournalEntry] = {}
        self._by_task: dict[str, JournalEntry] = {}
        self._durations: defaultdict[DurationKey, deque[float]] = defaultdict(
            lambda: deque(maxlen=window)
        )
        self._min_samples = min_samples

    # --- the protocol ----------------------------------------------------------------

    def submit_started(self, entry: SubmitEntry) -> str:
        with self._lock:
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
            seconds = record.seconds
            if record.succeeded and seconds is not None and seconds >= 0:
                self._durations[item.entry.duration_key].append(seconds)

    def results_saved(self, task_id: str, paths: Sequence[Path]) -> None:
        with self._lock:
            item = self._by_task.get(task_id)
            if item is not None:
                item.paths.extend(paths)

    def expected_duration(
        self, model: str, resolution: str | None, duration: float | None
    ) -> float | None:
        with self._lock:
            samples = self._durations.get((model, resolution, duration))
            if not samples or len(samples) < self._min_samples:
                return None
            return float(statistics.median(samples))

    # --- for people and tests --------------------------------------------------------

    def learn(
        self, model: str, resolution: str | None, duration: float | None, seconds: float
    ) -> None:
        """Teach a duration directly (e.g. from an earlier session's history)."""
        with self._lock:
            self._durations[(model, resolution, duration)].append(float(seconds))

    def entries(self) -> list[JournalEntry]:
        """Every submission so far, oldest first."""
        with self._lock:
            return list(self._entries.values())

    def uncertain(self) -> list[JournalEntry]:
        """Submissions that may have been billed without a task id: check before resubmitting."""
        return [e for e in self.entries() if e.state == "uncertain"]

    def __repr__(self) -> str:
        with self._lock:
            return f"MemoryJournal(entries={len(self._entries)}, keys={len(self._durations)})"
