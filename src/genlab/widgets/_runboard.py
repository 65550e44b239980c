"""Each run's status while a comparison runs: one chip per model with its status badge(s),
so a person sees which model is still queued, processing, done or failed (not only
"running…")."""

from __future__ import annotations

import threading
from collections import Counter

from genlab.client import TaskRecord
from genlab.comparison import Comparison, Plan
from genlab.display import MUTED, escape, status_badge, text


def _missing(value: object) -> bool:
    try:
        return value is None or bool(value != value)  # None, NaN
    except TypeError:  # pandas' NA
        return True


WAITING = "sending"
"""A run with no answer yet."""
NOT_SENT = "invalid"
"""A run the catalog refused: it is not sent and costs nothing."""


class RunBoard:
    """The runs of ``grid`` by model, updated from the task records as they change.

    :meth:`seen` may be called from any thread (the client's runner calls it); :meth:`html`
    and :meth:`ended` give the markup to assign to a widget.

    Example:
        >>> from genlab.comparison import plan
        >>> board = RunBoard(plan(["a fox"], ["video-a", "video-d"], {"duration": 2}))
        >>> "video-a" in board.html() and ">sending<" in board.html()
        True
        >>> board.seen(TaskRecord(task_id="t1", status="processing", model="video-a"))
        True
        >>> ">processing<" in board.html(), ">invalid<" in board.html()
        (True, True)
    """

    def __init__(self, grid: Plan) -> None:
        self._lock = threading.Lock()
        self._slots: dict[str, list[str]] = {}  # model -> each run's status
        self._tasks: dict[str, tuple[str, int]] = {}  # task id -> (model, slot)
        for run in grid.runs:
            self._slots.setdefault(run.model, []).append(
                WAITING if run.request is not None else NOT_SENT
            )

    def seen(self, record: TaskRecord) -> bool:
        """Take a record's status; True when the board changed."""
        with self._lock:
            slots = self._slots.get(record.model)
            if slots is None:
                return False
            place = self._tasks.get(record.task_id)
            if place is None:
                free = [i for i, status in enumerate(slots) if status == WAITING]
                if not free:
                    return False
                place = (record.model, free[0])
                self._tasks[record.task_id] = place
            if slots[place[1]] == record.status:
                return False
            slots[place[1]] = record.status
            return True

    def html(self, note: str = "Running") -> str:
        """One chip per model with its runs' statuses, after ``note``."""
        with self._lock:
            slots = {model: list(statuses) for model, statuses in self._slots.items()}
        return self._markup(note, {m: [(s, "") for s in st] for m, st in slots.items()})

    def ended(self, result: Comparison) -> str:
        """The final statuses (with seconds) from the comparison, and their count."""
        final: dict[str, list[tuple[str, str]]] = {}
        for row in result.df.itertuples(index=False):
            seconds = getattr(row, "seconds", None)
            shown = "" if _missing(seconds) else f"{float(seconds or 0):.1f} s"
            final.setdefault(str(row.model), []).append((str(row.status), shown))
        counts = Counter(status for runs in final.values() for status, _ in runs)
        said = ", ".join(f"{n} {status}" for status, n in counts.items())
        return self._markup(f"Done: {said}", final)

    @staticmethod
    def _markup(note: str, runs: dict[str, list[tuple[str, str]]]) -> str:
        chips = []
        for model, statuses in runs.items():
            badges = " ".join(
                status_badge(status) + (text(f" {seconds}", MUTED, size="85%") if seconds else "")
                for status, seconds in statuses
            )
            chips.append(
                f"<span class='genlab-run' data-model='{escape(model)}' style='white-space:"
                f"nowrap;margin-right:12px'><b>{escape(model)}</b> {badges}</span>"
            )
        return (
            f"<div class='genlab-runboard' style='line-height:1.9'>"
            f"{text(note + ':', MUTED, size='90%')} {''.join(chips)}</div>"
        )
