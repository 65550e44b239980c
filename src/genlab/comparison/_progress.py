"""A grid's progress bar, which leaves a static line behind when the grid ends.

In a terminal it is tqdm's bar. In a notebook tqdm's bar is a widget, and a widget is only a
reference to a model in the kernel: reopened without that kernel, the cell would show "Error
displaying widget: model not found". So the bar is shown through a display handle, and when
the grid ends that output is replaced by plain HTML (runs, time, outcomes) that every front
end shows without a kernel, and the widget is closed.

Example:
    >>> bar = GridProgress(2, enabled=False)
    >>> bar.ended("succeeded"); bar.ended("failed"); bar.close()
    >>> bar.summary()
    '2 of 2 runs · 1 succeeded · 1 failed'
"""

from __future__ import annotations

import importlib
import time
from collections import Counter
from typing import Any, cast

from genlab.display import MUTED, text


class GridProgress:
    """Counts runs as they end; a bar while it runs (``enabled``), a line once closed."""

    def __init__(self, total: int, *, enabled: bool = True) -> None:
        from tqdm.auto import tqdm

        self.total = total
        self.done: Counter[str] = Counter()
        self._began = time.monotonic()
        self._seconds: float | None = None
        notebook = enabled and any(c.__module__ == "tqdm.notebook" for c in tqdm.__mro__)
        # In a notebook the bar is displayed here, through a handle this class can replace.
        options: dict[str, Any] = {"display": False} if notebook else {}
        # Any: the notebook bar's ``container`` (its widget) is not in tqdm's stubs.
        self._bar: Any = cast(Any, tqdm(total=total, desc="compare", unit="run",
                                        disable=not enabled, **options))
        self._handle: Any = None
        if notebook:
            shown: Any = importlib.import_module("IPython.display")  # untyped: used as Any
            self._html = shown.HTML
            self._handle = shown.display(self._bar.container, display_id=True)

    def ended(self, status: str) -> None:
        """One run reached a final record (any thread)."""
        self.done[status] += 1
        self._bar.set_postfix(self.done, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        """Count runs that ended without a final record as done; leave the static line."""
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
        parts = [f"{ended} of {self.total} run{'s' if self.total != 1 else ''}"]
        parts += [f"{n} {status}" for status, n in self.done.most_common()]
        if ended < self.total:
            parts.append(f"{self.total - ended} without a result")
        return " · ".join(parts)

    def html(self) -> str:
        """The line the bar leaves in a notebook, e.g. ``compare: 6 of 6 runs · 6 succeeded ·
        12.3 s``."""
        took = f" · {self._seconds:.1f} s" if self._seconds is not None else ""
        return text(f"compare: {self.summary()}{took}", MUTED, tag="div",
                    cls="genlab-progress-done")
