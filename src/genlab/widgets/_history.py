"""The history panel: recent tasks from a genlab History, filtered by model and status.

It shows ``history.recent(limit, model=..., status=...)`` (rows already formatted, long prompts
already cut, by the history) under the headings of :data:`genlab.history.DISPLAY_COLUMNS`,
escaped; it computes nothing itself. A client whose history is not a genlab History (the
default in-memory journal) gets a line saying how to keep one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import ipywidgets as widgets

from genlab.catalog import CATALOG
from genlab.client.journal import TaskJournal
from genlab.display import escape, table
from genlab.history import DISPLAY_COLUMNS, History

ALL = "(all)"
STATUSES = ("queued", "processing", "succeeded", "failed")


def table_html(rows: Sequence[Mapping[str, str]]) -> str:
    """Rows of :meth:`genlab.History.recent` (newest first) as an escaped HTML table.

    Example:
        >>> table_html([])
        '<i>No tasks yet.</i>'
        >>> "&lt;b&gt;" in table_html([{"prompt": "<b>kite</b>", "status": "queued"}])
        True
    """
    return table(DISPLAY_COLUMNS, rows, wrapped=WRAPPED, empty="No tasks yet.")


WRAPPED = frozenset({"prompt", "error_message", "mode"})
"""Columns whose cells wrap; names, times and numbers never break mid-word."""


class HistoryPanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Recent tasks of ``history`` (a :class:`genlab.History`), with filters and refresh.

    Example:
        panel = HistoryPanel(client.history)
        panel.set_filter(model="video-a", status="succeeded")
    """

    def __init__(self, history: TaskJournal, *, limit: int = 20) -> None:
        super().__init__()
        self.add_class("genlab-history")
        self.history = history
        self.limit = limit
        self.model = widgets.Dropdown(
            options=[ALL, *CATALOG], value=ALL, description="model",
            style={"description_width": "initial"},
        )
        self.status = widgets.Dropdown(
            options=[ALL, *STATUSES], value=ALL, description="status",
            style={"description_width": "initial"},
        )
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.table = widgets.HTML()
        self._holding = False
        # One refresh at a time: a background refresh must not overwrite a newer filter's.
        self._lock = threading.Lock()
        self.model.observe(self._filtered, "value")
        self.status.observe(self._filtered, "value")
        self.available = isinstance(history, History)
        if self.available:
            self.children = [
                widgets.HBox([self.model, self.status, self.refresh_button]), self.table
            ]
            self.refresh()
        else:
            self.table.value = (
                "<i>The history panel needs a genlab History: "
                "<code>genlab.Client(history=genlab.History())</code>, or "
                "<code>genlab.connect()</code>, which keeps one.</i>"
            )
            self.children = [self.table]

    def set_filter(self, *, model: str | None = None, status: str | None = None) -> None:
        """Show only one model and/or status (None: all) and refresh."""
        self._holding = True
        try:
            self.model.value = model or ALL
            self.status.value = status or ALL
        finally:
            self._holding = False
        self.refresh()

    def _filtered(self, _change: object) -> None:
        if not self._holding:
            self.refresh()

    def refresh(self) -> None:
        """Read the history again. Errors are shown in the panel, never raised."""
        history = self.history
        if not isinstance(history, History):
            return
        with self._lock:
            model = None if self.model.value == ALL else self.model.value
            status = None if self.status.value == ALL else self.status.value
            try:
                rows = history.recent(self.limit, model=model, status=status)
                self.table.value = table_html(rows)
            except Exception as exc:  # shown, never raised: this runs in widget callbacks
                self.table.value = (
                    "<i>The history could not be read: " + escape(exc) + "</i>"
                )
