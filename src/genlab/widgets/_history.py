"""The history panel: recent tasks from a genlab History, filtered by model and status; a row
opens to its task's card.

It shows ``history.recent(limit, model=..., status=...)`` (rows already formatted by the
history) under the headings of :data:`genlab.history.DISPLAY_COLUMNS`, escaped. Each row is
one line at any width, and each column is as wide as its text needs: the time short and whole
("13:52:07" today, "11-26 13:52" before), a long task id shortened in the middle
("task_28a8…698a82e"), model, status, credits and seconds whole; the prompt takes most of what
is left, mode and error the rest, cut with an ellipsis. Every cell's whole text is in its
tooltip. "Open" shows the task's card with its kept media (the one renderer,
:func:`genlab.report.record_html`) under the row. A client whose history is not a genlab
History (the default in-memory journal) gets a line saying how to keep one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime

import ipywidgets as widgets

from genlab.catalog import CATALOG
from genlab.client.journal import TaskJournal
from genlab.display import BORDER, EMPTY, MUTED, TEXT, escape, status_badge, text
from genlab.history import DISPLAY_COLUMNS, History
from genlab.report import record_html
from genlab.widgets._background import Background

ALL = "(all)"
STATUSES = ("queued", "processing", "succeeded", "failed")
NO_PRICE = "no published price"
"""The tooltip of a dash in the credits column."""


# Each column's width: the short ones as wide as their whole text ("11-26 13:52",
# "succeeded", a shortened id), which the grid gives them first; the prompt, mode and error
# share what is left (the prompt most of it), cut with an ellipsis.
_WIDTHS = {
    "submitted_at": "6.8em", "model": "4.8em", "mode": "1.2fr", "status": "7.6em",
    "prompt": "5fr", "credits": "4.4em", "total_seconds": "4.9em", "task_id": "11em",
    "error_message": "1.8fr",
}
# Model, status, credits and seconds never shrink below their whole heading and value; the
# others shrink only when the panel is too narrow for all of them (then cut, never hidden).
_AT_LEAST = {"model": "4.8em", "status": "7.6em", "credits": "4.4em", "total_seconds": "4.9em"}
_RIGHT = frozenset({"credits", "total_seconds"})
ID_SHOWN = (9, 7)
"""The characters of a long task id kept at its start and end, around an ellipsis."""


def _grid(names: Sequence[str]) -> str:
    return " ".join(f"minmax({_AT_LEAST.get(name, '0')}, {_WIDTHS.get(name, '5fr')})"
                    for name in names)


def short_time(shown: str, today: date | None = None, *, brief: bool = False) -> str:
    """A history time ("2026-11-27 13:52:07", UTC) as the panel shows it: the time alone
    today, month, day and minute this year, the date before; unchanged when not a time.
    ``brief``: shorter still, for a narrow panel (the minute today, the day before).

    Example:
        >>> day = date(2026, 11, 27)
        >>> times = ("2026-11-27 13:52:07", "2026-11-26 13:52:07", "2025-03-01 08:00:00", "soon")
        >>> [short_time(t, day) for t in times]
        ['13:52:07', '11-26 13:52', '2025-03-01', 'soon']
        >>> [short_time(t, day, brief=True) for t in times]
        ['13:52', '11-26', '2025', 'soon']
    """
    try:
        moment = datetime.strptime(shown, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return shown
    today = today or datetime.now(UTC).date()
    if moment.date() == today:
        return moment.strftime("%H:%M" if brief else "%H:%M:%S")
    if moment.year == today.year:
        return moment.strftime("%m-%d" if brief else "%m-%d %H:%M")
    return moment.strftime("%Y" if brief else "%Y-%m-%d")


def short_id(task_id: str) -> str:
    """A long task id shortened in the middle, so its start and end both show.

    Example:
        >>> short_id("task_28a8c1f0e3b94d7e9b2f5a6c1d698a82e"), short_id("t1")
        ('task_28a8…698a82e', 't1')
    """
    head, tail = ID_SHOWN
    if len(task_id) <= head + tail + 1:
        return task_id
    return f"{task_id[:head]}…{task_id[-tail:]}"


_GRID = _grid(list(DISPLAY_COLUMNS))
_NARROW_HIDDEN = ("mode", "task_id", "error_message")
"""Columns left out of a row narrower than 760 px, so the prompt keeps room to be read: the
opened card shows them, the Open button's tooltip names the task, and the status cell's
tooltip carries the error."""
_NARROW_WIDTHS = {"submitted_at": "3.8em", "status": "4em"}
"""A narrow row's time is brief ("13:52", "11-26") and its status a coloured dot."""
_FIT = "genlab-history-fit"
_TIME_FULL, _TIME_BRIEF = "genlab-time-full", "genlab-time-brief"
_NARROW_CSS = (
    f"<style>.{_FIT}{{container-type:inline-size}}"
    f":is(.genlab-history-row,.genlab-history-head) .{_TIME_BRIEF}{{display:none}}"
    "@container (max-width: 760px){"
    ".genlab-history-row,.genlab-history-head{grid-template-columns:"
    + " ".join(f"minmax({_NARROW_WIDTHS[n]}, {_NARROW_WIDTHS[n]})" if n in _NARROW_WIDTHS
               else _grid([n]) for n in DISPLAY_COLUMNS if n not in _NARROW_HIDDEN)
    + " !important}"
    + ",".join(f".genlab-history-row>[data-col='{n}'],.genlab-history-head>[data-col='{n}']"
               for n in _NARROW_HIDDEN)
    + f"{{display:none}}:is(.genlab-history-row,.genlab-history-head) .{_TIME_FULL}"
    f"{{display:none}}:is(.genlab-history-row,.genlab-history-head) .{_TIME_BRIEF}"
    "{display:inline}"
    ".genlab-history-row>[data-col='status']>span{font-size:0 !important;"
    "padding:0 !important;width:10px !important;height:10px !important;"
    "border-radius:50% !important;display:inline-block !important;"
    "vertical-align:middle !important}}</style>"
)
_ROW_CSS = (
    f"display:grid;grid-template-columns:{_GRID};column-gap:6px;align-items:center;"
    f"font-size:90%;color:{TEXT};min-width:0"
)
_CELL_CSS = "overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0"
_BUTTON_WIDTH = "4.4em"


def header_html() -> str:
    """The headings of the panel's rows, on the same grid."""
    def shown(name: str, heading: str) -> str:
        if name != "submitted_at":
            return escape(heading)
        return (f"<span class='{_TIME_FULL}'>{escape(heading)}</span>"
                f"<span class='{_TIME_BRIEF}'>time</span>")

    cells = "".join(
        f"<div data-col='{escape(name)}' style='{_CELL_CSS};font-weight:600;"
        f"{'text-align:right' if name in _RIGHT else ''}'>{shown(name, heading)}</div>"
        for name, heading in DISPLAY_COLUMNS.items()
    )
    return (f"{_NARROW_CSS}<div class='genlab-history-head' style='{_ROW_CSS};padding-bottom:2px;"
            f"border-bottom:1px solid {BORDER}'>{cells}</div>")


def row_html(row: Mapping[str, str], today: date | None = None) -> str:
    """One row of :meth:`genlab.History.recent` on one line, every text escaped and whole in
    its cell's tooltip (times in UTC; see :func:`short_time` and :func:`short_id`).

    Example:
        >>> page = row_html({"prompt": "<b>kite</b> " * 20, "credits": ""})
        >>> "title='&lt;b&gt;kite" in page, f"title='{NO_PRICE}'><span" in page
        (True, True)
    """
    cells = []
    for name in DISPLAY_COLUMNS:
        value = row.get(name) or ""
        css = _CELL_CSS + (";text-align:right" if name in _RIGHT else "")
        if name == "status" and value:
            error = row.get("error_message") or ""
            shown, tip = status_badge(value), f"{value}: {error}" if error else value
        elif name == "submitted_at" and value:
            shown = (f"<span class='{_TIME_FULL}'>{escape(short_time(value, today))}</span>"
                     f"<span class='{_TIME_BRIEF}'>"
                     f"{escape(short_time(value, today, brief=True))}</span>")
            tip = f"{value} UTC"
        elif name == "task_id" and value:
            shown, tip = escape(short_id(value)), value
        elif value:
            shown, tip = escape(value), value
        else:
            shown, tip = text(EMPTY, MUTED), NO_PRICE if name == "credits" else ""
        title = f" title='{escape(tip)}'" if tip else ""
        cells.append(f"<div data-col='{escape(name)}' style='{css}'{title}>{shown}</div>")
    return f"<div class='genlab-history-row' style='{_ROW_CSS}'>{''.join(cells)}</div>"


class _Row:
    """One row's widgets, kept and refilled on every refresh (no widget churn)."""

    def __init__(self) -> None:
        self.task_id = ""
        self.button = widgets.Button(
            description="Open",
            layout=widgets.Layout(width=_BUTTON_WIDTH, min_width=_BUTTON_WIDTH, height="26px",
                                  padding="0 4px"),
        )
        self.button.add_class("genlab-open")
        self.line = widgets.HTML(layout=widgets.Layout(flex="1 1 0%", min_width="0"))
        self.line.add_class(_FIT)
        self.box = widgets.HBox([self.button, self.line],
                                layout=widgets.Layout(align_items="center", min_width="0"))
        self.box.add_class("genlab-history-line")

    def fill(self, row: Mapping[str, str], opened: str | None) -> None:
        task_id = row.get("task_id") or ""
        self.task_id = task_id
        markup = row_html(row)
        if self.line.value != markup:
            self.line.value = markup
        self.button.disabled = not task_id
        self.button.tooltip = (f"Show task {task_id}: its card and kept media" if task_id
                               else "Never became a task: nothing to open")
        self.button.description = "Close" if task_id and task_id == opened else "Open"


class HistoryPanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Recent tasks of ``history`` (a :class:`genlab.History`), with filters and refresh;
    "Open" on a row shows that task's card with its kept media.

    Example:
        panel = HistoryPanel(client.history)
        panel.set_filter(model="video-a", status="succeeded")
        panel.show_task(task_id)     # what clicking the row's Open does

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> panel = HistoryPanel(history, limit=10)
        >>> panel.refresh()  # reads the history again; a notebook shows the panel
        >>> history.close()
    """

    def __init__(self, history: TaskJournal, *, limit: int = 20) -> None:
        super().__init__()
        self.add_class("genlab-history")
        self.history = history
        self.limit = limit
        self._work = Background.shared()
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
        self.table = widgets.HTML()  # the headings, or the message when there is no row
        self.rows: list[_Row] = []
        self.rows_box = widgets.VBox(layout=widgets.Layout(min_width="0"))
        self.card = widgets.HTML(layout=widgets.Layout(max_width="100%"))
        self.card.add_class("genlab-history-card")
        self.opened: str | None = None
        self._holding = False
        # One refresh at a time: a background refresh must not overwrite a newer filter's.
        self._lock = threading.Lock()
        self.model.observe(self._filtered, "value")
        self.status.observe(self._filtered, "value")
        self.available = isinstance(history, History)
        if self.available:
            head = widgets.HBox([
                widgets.HTML(layout=widgets.Layout(width=_BUTTON_WIDTH, min_width=_BUTTON_WIDTH)),
                self.table,
            ], layout=widgets.Layout(min_width="0"))
            self.table.layout = widgets.Layout(flex="1 1 0%", min_width="0")
            self.table.add_class(_FIT)
            self.children = [
                widgets.HBox([self.model, self.status, self.refresh_button],
                             layout=widgets.Layout(flex_flow="row wrap")),
                head, self.rows_box,
            ]
            self.refresh()
        else:
            self.table.value = (
                "<i>The history panel needs a genlab History: "
                "<code>genlab.Client(history=genlab.History())</code>, or "
                "<code>genlab.connect()</code>, which keeps one.</i>"
            )
            self.children = [self.table]

    @property
    def markup(self) -> str:
        """Everything the panel shows as text: the headings (or message) and every row."""
        shown = [self.table.value]
        shown += [row.line.value for row in self.rows if row.box in self.rows_box.children]
        if self.card in self.rows_box.children:
            shown.append(self.card.value)
        return "".join(shown)

    def follow(self, tabs: widgets.Tab) -> None:
        """Refresh whenever this panel's tab is opened (tasks may have come from anywhere)."""

        def shown(change: Mapping[str, object]) -> None:
            index = change.get("new")
            if isinstance(index, int) and 0 <= index < len(tabs.children) \
                    and tabs.children[index] is self:
                self.refresh()

        tabs.observe(shown, "selected_index")

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
                found = history.recent(self.limit, model=model, status=status, cut=False)
            except Exception as exc:  # shown, never raised: this runs in widget callbacks
                self.table.value = "<i>The history could not be read: " + escape(exc) + "</i>"
                self.rows_box.children = []
                return
            self.table.value = header_html() if found else "<i>No tasks yet.</i>"
            while len(self.rows) < len(found):
                row = _Row()
                row.button.on_click(lambda _b, row=row: self._toggle(row.task_id))
                self.rows.append(row)
            for row, values in zip(self.rows, found, strict=False):
                row.fill(values, self.opened)
            self._lay_out(len(found))

    def _lay_out(self, count: int) -> None:
        boxes: list[widgets.Widget] = []
        for row in self.rows[:count]:
            boxes.append(row.box)
            if self.opened is not None and row.task_id == self.opened:
                boxes.append(self.card)
        if tuple(boxes) != tuple(self.rows_box.children):
            self.rows_box.children = boxes

    def _toggle(self, task_id: str) -> None:
        if task_id and task_id == self.opened:
            self.hide_task()
        else:
            self.show_task(task_id)

    def show_task(self, task_id: str) -> None:
        """Show the task's card, with its kept media, under its row (read on a worker)."""
        history = self.history
        if not isinstance(history, History) or not task_id:
            return
        self.opened = task_id
        self.card.value = text(f"Opening task {task_id}…", MUTED, tag="div")
        self.refresh()

        def shown() -> str:
            record = history.record(task_id)
            if record is None:
                return text(f"The history has no task {task_id}.", MUTED, tag="div")
            return record_html(record, served=True)  # inside a widget

        def done(markup: str) -> None:
            if self.opened == task_id:
                self.card.value = markup

        def failed(exc: BaseException) -> None:
            if self.opened == task_id:
                self.card.value = text(f"The task could not be shown: {exc}", MUTED, tag="div")

        self._work.run(shown, on_done=done, on_error=failed)

    def hide_task(self) -> None:
        """Close the opened card."""
        self.opened = None
        self.card.value = ""
        self.refresh()
