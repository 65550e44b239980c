"""The one owner of live output in a cell: a line that is redrawn in place (a wait's status)
and a grid's progress bar. Everything else reports events to these and never touches IPython.

A live line is an output the cell keeps a display handle on: redrawn while something runs,
left as one static line when it ends. A progress bar is tqdm's (``tqdm.auto``: a bar in a
terminal, a widget in a notebook). A widget is only a reference to a model in the kernel, so
reopened without that kernel the cell would say "Error displaying widget: model not found":
in a notebook the bar is shown through a handle, and when the run ends that output is replaced
by plain HTML (how many, how they ended, how long) that every front end shows, and the widget
is closed.

Output only shows on the kernel's own thread (:func:`in_notebook`): a background thread's
output would reach whichever cell runs then.

Example:
    >>> bar = ProgressBar(2, desc="compare", unit="run", enabled=False)
    >>> bar.ended("succeeded"); bar.ended("failed"); bar.close()
    >>> bar.summary()
    '2 of 2 runs · 1 succeeded · 1 failed'
    >>> line = LiveLine(show=False)   # outside a notebook: it draws nothing
    >>> line.update("<div>waiting</div>"); line.close("")
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from typing import Any, cast

from genlab.display._markup import text
from genlab.display._theme import MUTED


def in_notebook() -> bool:
    """True on a Jupyter kernel's own thread, where live output can show: never on a
    background thread (a runner, a widget's worker), whose output would reach the wrong cell.

    Example:
        >>> in_notebook()   # a doctest runs outside a kernel
        False
    """
    ipython = sys.modules.get("IPython")  # loaded by every kernel; never imported here
    shell = ipython.get_ipython() if ipython is not None else None
    return (shell is not None and getattr(shell, "kernel", None) is not None
            and threading.current_thread() is threading.main_thread())


def _ipython_display() -> tuple[Any, Any]:
    from IPython.display import HTML, display  # in a kernel, where IPython is loaded

    return display, HTML


class LiveLine:
    """One output in the cell, redrawn in place, left as a static line by :meth:`close`.

    Args:
        show: draw it (default: when :func:`in_notebook`); without it every call does nothing.

    Example:
        >>> line = LiveLine(show=False)
        >>> line.shown
        False
    """

    def __init__(self, html: str = "", *, show: bool | None = None) -> None:
        self._handle: Any = None
        self._html: Any = None
        if show if show is not None else in_notebook():
            display, self._html = _ipython_display()
            self._handle = display(self._html(html), display_id=True)

    @property
    def shown(self) -> bool:
        """Whether the line is in a cell's output."""
        return self._handle is not None

    def update(self, html: str) -> None:
        """Redraw the line with ``html`` (from the cell's own thread)."""
        if self._handle is not None:
            self._handle.update(self._html(html))

    def close(self, html: str) -> None:
        """Leave ``html`` as the line's last state (``""`` leaves nothing)."""
        self.update(html)
        self._handle = None


class ProgressBar:
    """Counts items as they end; tqdm's bar while they run (``enabled``), one static line once
    closed. :meth:`ended` may be called from any thread.

    Args:
        total: how many items.
        desc: the bar's label, e.g. ``"compare"``.
        unit: what an item is called, e.g. ``"run"`` or ``"cell"``.
        enabled: show a bar (a notebook's or a terminal's); without it only counts.

    Example:
        >>> bar = ProgressBar(3, desc="cells", unit="cell", enabled=False)
        >>> bar.ended("succeeded"); bar.close()
        >>> bar.summary()
        '1 of 3 cells · 1 succeeded · 2 without a result'
    """

    def __init__(self, total: int, *, desc: str, unit: str, enabled: bool = True) -> None:
        from tqdm.auto import tqdm

        self.total, self.desc, self.unit = total, desc, unit
        self.done: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._began = time.monotonic()
        self._seconds: float | None = None
        notebook = enabled and any(c.__module__ == "tqdm.notebook" for c in tqdm.__mro__)
        # In a notebook the bar is displayed here, through a handle this class can replace.
        options: dict[str, Any] = {"display": False} if notebook else {}
        # Any: the notebook bar's ``container`` (its widget) is not in tqdm's stubs.
        self._bar: Any = cast(Any, tqdm(total=total, desc=desc, unit=unit,
                                        disable=not enabled, **options))
        self._handle: Any = None
        if notebook:
            display, self._html = _ipython_display()
            self._handle = display(self._bar.container, display_id=True)

    def ended(self, status: str) -> None:
        """One item reached its end with ``status`` (any thread)."""
        with self._lock:
            self.done[status] += 1
            self._bar.set_postfix(self.done, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        """Count items that ended without a status as done; leave the static line."""
        with self._lock:
            if self._seconds is not None:
                return
            self._seconds = time.monotonic() - self._began
            left = self.total - self._bar.n
            if left > 0:
                self._bar.update(left)
            self._bar.close()
        if self._handle is not None:
            self._handle.update(self._html(self.html()))
            self._bar.container.close()  # its model is gone from the notebook's outputs

    def summary(self) -> str:
        """What ended, e.g. ``6 of 6 runs · 5 succeeded · 1 failed``."""
        ended = sum(self.done.values())
        plural = "" if self.total == 1 else "s"
        parts = [f"{ended:,} of {self.total:,} {self.unit}{plural}"]
        parts += [f"{n:,} {status}" for status, n in self.done.most_common()]
        if ended < self.total:
            parts.append(f"{self.total - ended:,} without a result")
        return " · ".join(parts)

    def html(self) -> str:
        """The line the bar leaves in a notebook, e.g. ``compare: 6 of 6 runs · 6 succeeded ·
        12.3 s``."""
        took = f" · {self._seconds:.1f} s" if self._seconds is not None else ""
        return text(f"{self.desc}: {self.summary()}{took}", MUTED, tag="div",
                    cls="genlab-progress-done")
