"""The journal protocols and the records they carry: what the client tells a history about
every submission (:class:`TaskJournal`), what a history that keeps the money also answers
(:class:`SpendJournal`), and the records passed between them. Siblings import these through
:mod:`genlab.client.journal`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from genlab.client._budget import Refusal, cap_refusal
from genlab.client._config import Task, TaskRecord
from genlab.media import MediaInfo, media_name

DurationKey = tuple[str, str | None, float | None]


@dataclass(frozen=True, slots=True)
class PastResult:
    """A succeeded task of some content address, as a history keeps it.

    Example:
        >>> from genlab.client import TaskRecord
        >>> past = PastResult(TaskRecord(task_id="t1", status="succeeded", model="image-b"),
        ...                   submitted_at=None, credits=120)
        >>> past.record.task_id, past.credits, past.paths
        ('t1', 120, ())
    """

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
    tag: str | None = None  # the reusing submission's own tag (its Labels), for the history

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
class Labels:
    """What travels with one submission into the journal, on its entry (never on shared
    state): its tag, and the experiment cell it fills. A history records the tag on the task's
    row and, when the service accepts the task, its id against the cell in the same step.

    Example:
        >>> Labels(tag="kite-study", experiment="kite-study", cell="3f2a").tag
        'kite-study'
    """

    tag: str | None = None
    experiment: str | None = None
    cell: str | None = None  # the cell's key in ``experiment``


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
    labels: Labels | None = None  # its tag and experiment cell (see Labels)

    @property
    def tag(self) -> str | None:
        """The tag this submission carries (its :class:`Labels`), or None."""
        return self.labels.tag if self.labels is not None else None

    @property
    def counted_credits(self) -> int | None:
        """What a budget counts for it: the published price, else the assumed one."""
        return self.credits if self.credits is not None else self.assumed_credits

    def over_the_day(self, spent_today: int) -> Refusal | None:
        """The budget's refusal of this submission when ``spent_today`` credits are already
        counted on its UTC day and it carries a day cap (the one check,
        :func:`~genlab.client._budget.cap_refusal`); None when it may be recorded."""
        if self.day_cap is None:
            return None
        return cap_refusal([(self.model, self.counted_credits)], day=self.day_cap,
                           spent_today=spent_today)

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
    submissions that were not refused, asks :meth:`SubmitEntry.over_the_day`, and raises the
    refusal's :meth:`~genlab.client._budget.Refusal.error` instead of recording the entry;
    the check and the new row are one atomic step, so concurrent submitters (threads or
    processes) can never cross it together.
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


def record_results(
    journal: TaskJournal,
    task_id: str,
    paths: Sequence[Path | str],
    media: Sequence[MediaInfo] = (),
    mismatches: Sequence[str] = (),
) -> None:
    """``journal.results_saved`` with the facts when the journal takes them, else with the
    paths alone. Who needs the second form: a journal written against genlab 0.1.0, whose
    public ``genlab.client.TaskJournal`` had ``results_saved(task_id, paths)`` (passed as
    ``AsyncClient(history=...)``); tests/test_history_media_facts.py keeps one working.

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


__all__ = [
    "DurationKey", "PastResult", "Reused", "SpendJournal", "SubmitEntry", "TaskJournal",
    "record_results",
]
