"""The history panel: recent tasks from a genlab History, filtered by model and status.

It reads ``history.df(model=..., status=...)`` and draws the newest rows as an escaped HTML
table; it computes nothing itself. A client whose history is not a genlab History (the
default in-memory journal) gets a line saying how to keep one.
"""

from __future__ import annotations

import html
import math
import threading
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from genlab.catalog import CATALOG

ALL = "(all)"
STATUSES = ("queued", "processing", "succeeded", "failed")
# Columns of History.df() shown, with their headings.
COLUMNS = {
    "submitted_at": "submitted",
    "model": "model",
    "mode": "mode",
    "status": "status",
    "prompt": "prompt",
    "credits": "credits",
    "total_seconds": "seconds",
    "task_id": "task",
    "error_message": "error",
}
PROMPT_SHOWN = 80


def _cell(name: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    try:
        if value != value:  # pandas' NA and NaT compare unequal to themselves
            return ""
    except (TypeError, ValueError):  # NA raises on truth testing
        return ""
    if name == "submitted_at" and hasattr(value, "strftime"):
        return str(value.strftime("%Y-%m-%d %H:%M:%S"))
    if name == "total_seconds" and isinstance(value, int | float):
        return f"{value:.1f}"
    text = str(value)
    if name == "prompt" and len(text) > PROMPT_SHOWN:
        text = text[: PROMPT_SHOWN - 1] + "…"
    return text


def table_html(rows: list[Mapping[str, Any]]) -> str:
    """Rows (newest first) as an escaped HTML table."""
    if not rows:
        return "<i>No tasks yet.</i>"
    head = "".join(f"<th style='text-align:left'>{h}</th>" for h in COLUMNS.values())
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(_cell(c, row.get(c)))}</td>" for c in COLUMNS)
        + "</tr>"
        for row in rows
    )
    return (
        "<table style='border-collapse:collapse;font-size:90%'>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


class HistoryPanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Recent tasks of ``history`` (a :class:`genlab.History`), with filters and refresh.

    Example:
        panel = HistoryPanel(client.history)
        panel.set_filter(model="video-a", status="succeeded")
    """

    def __init__(self, history: Any, *, limit: int = 20) -> None:
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
        self.available = callable(getattr(history, "df", None))
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
        if not self.available:
            return
        with self._lock:
            model = None if self.model.value == ALL else self.model.value
            status = None if self.status.value == ALL else self.status.value
            try:
                frame = self.history.df(model=model, status=status)
                rows = frame.tail(self.limit).to_dict("records")[::-1]
                self.table.value = table_html(rows)
            except Exception as exc:  # shown, never raised: this runs in widget callbacks
                self.table.value = (
                    "<i>The history could not be read: " + html.escape(f"{exc}") + "</i>"
                )
