"""The default journal: :class:`MemoryJournal` keeps every submission, its records and the
money in memory, for one session (:class:`genlab.History` keeps them durably).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from genlab.client._config import Task, TaskRecord
from genlab.client._durations import DurationSample
from genlab.client._protocols import PastResult, Reused, SubmitEntry
from genlab.media import MediaInfo


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
        >>> from genlab.client.journal import DurationSample, Work
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
            if entry.day_cap is not None:  # judged and recorded under one lock
                refusal = entry.over_the_day(self._day_spent(entry.submitted_at))
                if refusal is not None:
                    raise refusal.error()
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


__all__ = ["JournalEntry", "MemoryJournal"]
