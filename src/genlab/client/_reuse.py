"""Reusing a result already paid for: when it applies, what is returned, and how it is told.

A request's content address (:func:`genlab.catalog.content_address`) names what it asks for.
When reuse applies and the history holds a succeeded task of the same address whose media can
still be had (saved on disk, or a link that still answers), that task's record is returned at
zero credits instead of paying again.

When reuse applies (``reuse=`` of ``submit``, ``generate``, ``map`` and ``compare``):

- ``None`` (the default, "auto"): when the request fixes a ``seed``. A seeded request is
  deterministic by intent, so paying again buys the same media; without a seed a fresh sample
  is a legitimate wish.
- ``True``: always; ``False`` (or ``client.reroll(...)``): never, a fresh one is paid for.

Example:
    >>> from genlab.catalog import validate
    >>> reuse_applies(None, validate({"model": "video-b", "prompt": "x"}))
    False
    >>> reuse_applies(None, validate({"model": "video-b", "prompt": "x",
    ...                               "extra_params": {"seed": 7}}))
    True
    >>> reuse_applies(True, validate({"model": "image-b", "prompt": "x"}))
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import Field

from genlab.catalog import RequestBase
from genlab.client._types import Task, TaskRecord
from genlab.display import MUTED, text
from genlab.media import media_name


@dataclass(frozen=True, slots=True)
class PastResult:
    """A succeeded task of some content address, as a history keeps it."""

    record: TaskRecord
    submitted_at: datetime | None
    credits: int | None  # what it cost: published, else the budget's assumed price
    paths: tuple[Path | str, ...] = ()  # local paths, or URLs in object storage

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


class ReusedTask(Task):
    """The earlier task a submit returned instead of paying again; ``reused`` says which."""

    reused: Reused = Field(exclude=True, repr=False)


class ReusedRecord(TaskRecord):
    """The earlier succeeded record returned instead of paying again; ``reused`` says which.

    It is a :class:`~genlab.TaskRecord` in every other way; ``client.download(record, dir)``
    copies its saved files when there are any.
    """

    reused: Reused = Field(exclude=True, repr=False)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, reused=True)  # {self.reused.message}"

    def _repr_html_(self) -> str:
        note = text(f"♻ {self.reused.message}", MUTED, tag="div", cls="genlab-reused")
        return note + super()._repr_html_()


def reuse_applies(reuse: bool | None, request: RequestBase | None) -> bool:
    """Whether a request may be answered by an earlier result (see the module docstring)."""
    if request is None or reuse is False:
        return False
    if reuse is True:
        return True
    return getattr(request, "seed", None) is not None


def reused_record(past: PastResult, note: Reused) -> ReusedRecord:
    """``past``'s record, carrying ``note``."""
    return ReusedRecord.model_validate({**past.record.model_dump(), "reused": note})


__all__ = [
    "PastResult",
    "Reused",
    "ReusedRecord",
    "ReusedTask",
    "reuse_applies",
    "reused_record",
]
