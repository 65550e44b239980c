"""The live line a wait shows in a notebook: task id, status, time waited and the expected
finish, turning into the result's card when it ends. In a script nothing is shown.

The line is a display handle of the cell that waits, updated only from that cell's thread
(the kernel's), never from a background task: the sync client updates it each time its
blocked caller wakes, the async client at each new status.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from typing import Any

from genlab._wire import TaskRecord
from genlab.display import MUTED, text


def in_notebook() -> bool:
    """True on a Jupyter kernel's own thread, where a live line can show: never on a
    background thread (a runner, a widget's worker), whose output would reach the wrong cell.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return (shell is not None and getattr(shell, "kernel", None) is not None
            and threading.current_thread() is threading.main_thread())


class LiveLine:
    """One wait's line in the cell (see the module docstring).

    Example:
        >>> line = LiveLine("t1", "video-a", expected=24.0, show=False)
        >>> line.seen(TaskRecord(task_id="t1", status="processing"))
        >>> "t1 · processing" in line.text()
        True
    """

    def __init__(self, task_id: str, model: str, *, expected: float | None,
                 show: bool | None = None) -> None:
        self.task_id, self.model, self.expected = task_id, model, expected
        self.status = "waiting"
        self.began = time.monotonic()
        self._handle: Any = None
        self._html: Any = None
        if show if show is not None else in_notebook():
            shown: Any = importlib.import_module("IPython.display")  # untyped: used as Any
            self._html = shown.HTML
            self._handle = shown.display(shown.HTML(self.html()), display_id=True)

    def seen(self, record: TaskRecord) -> None:
        """A new record (any thread): the next update shows its status."""
        self.status = record.status

    def text(self) -> str:
        waited = time.monotonic() - self.began
        parts = [f"{self.model or 'task'} · task {self.task_id} · {self.status}",
                 f"{waited:.0f} s"]
        if self.expected is not None:
            left = self.expected - waited
            parts.append(f"expected in about {left:.0f} s" if left > 0 else "any moment now")
        return " · ".join(parts)

    def html(self) -> str:
        return text(f"⏳ {self.text()}", MUTED, tag="div", cls="genlab-live")

    def update(self) -> None:
        """Redraw the line (from the waiting cell's thread)."""
        if self._handle is not None:
            self._handle.update(self._html(self.html()))

    def finish(self, record: TaskRecord | None) -> None:
        """Turn the line into the record's card (its notebook display), or clear it."""
        if self._handle is None:
            return
        if record is None:
            self._handle.update(self._html(""))
            return
        ipython: Any = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        shown = shell.display_formatter.format(record)[0] if shell is not None else {}
        self._handle.update(self._html(shown.get("text/html") or ""))
        record._shown_live = True  # the cell's own output need not show it again
