"""The durable task history: every submission, its status changes, results and credits.

Example:
    >>> import genlab, tempfile, os
    >>> history = genlab.History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> history.df().empty
    True

With a client::

    history = genlab.History()                  # .genlab/history.sqlite, or $GENLAB_HISTORY
    client = genlab.Client(history=history)     # genlab.connect() does this for you
    client.generate(model="image-b", prompt="a kite")
    history.df()                                # one row per submission, proper dtypes
    history.summary(by="model")                 # runs, success rate, p50/p95, credits
    history.recent(10)                          # the newest rows, as text for a table
    history.resume(client)                      # after a crash: finish what was submitted
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Unpack

from genlab._errors import GenlabError
from genlab._wire import Task, TaskRecord
from genlab.client import AsyncClient, Client
from genlab.display import EMPTY, MUTED, escape, table
from genlab.display import styled as styled_html
from genlab.history._columns import COLUMNS, DISPLAY_COLUMNS, FRAME_COLUMNS, Column
from genlab.history._copy import Copied, copy_history
from genlab.history._location import DEFAULT_PATH
from genlab.history._spend import SPEND_COLUMNS, SpendBy, spend
from genlab.history._store import Journal, default_path
from genlab.history._summary import SUMMARY_COLUMNS, normalized, summarize
from genlab.history._views import PROMPT_SHOWN, Filters, display_text, frame

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler

logger = logging.getLogger("genlab")

__all__ = [
    "COLUMNS",
    "DEFAULT_PATH",
    "DISPLAY_COLUMNS",
    "FRAME_COLUMNS",
    "DisplayFrame",
    "PROMPT_SHOWN",
    "SPEND_COLUMNS",
    "SUMMARY_COLUMNS",
    "Column",
    "Copied",
    "Filters",
    "History",
    "ResumeOutcome",
    "SpendBy",
    "copy_history",
    "default_path",
    "display_text",
    "normalized",
    "spend",
    "styled",
    "summarize",
]


class ResumeOutcome:
    """What :meth:`History.resume` did for one task: its final record, the error, or the
    process already waiting on it (``leased_by``, e.g. ``ana@lab-3/4121/9f2c01ab``)."""

    __slots__ = ("error", "leased_by", "record", "task_id")

    def __init__(
        self, task_id: str, record: TaskRecord | None, error: BaseException | None,
        leased_by: str | None = None,
    ):
        self.task_id = task_id
        self.record = record
        self.error = error
        self.leased_by = leased_by

    @property
    def status(self) -> str:
        if self.record is not None:
            return self.record.status
        if self.leased_by is not None:
            return f"waited on by {self.leased_by}"
        return f"error: {type(self.error).__name__}" if self.error else "unknown"

    def __repr__(self) -> str:
        return f"ResumeOutcome({self.task_id!r}, {self.status!r})"


def _display_frame_class() -> type[pd.DataFrame]:
    import pandas as pd

    class DisplayFrame(pd.DataFrame):
        """A DataFrame that a notebook shows formatted; its values are untouched."""

        @property
        def _constructor(self) -> type[DisplayFrame]:
            return DisplayFrame

        def _repr_html_(self) -> str | None:
            # Prompts and errors came from people and the service: text cells and labels are
            # escaped (a Styler shows them as markup otherwise); numbers keep their formats.
            text: list[Hashable] = [
                c for c, kind in zip(self.columns, self.dtypes, strict=True)
                if kind.kind not in "iufcbmM"
            ]
            try:
                page = styled(self).format(escape, subset=text, na_rep=EMPTY)
                page = page.format_index(escape, axis=0).format_index(escape, axis=1)
                return page.to_html(max_rows=pd.get_option("display.max_rows"))
            except (ImportError, AttributeError):  # Styler needs jinja2: the usual table
                shown: str | None = pd.DataFrame(self)._repr_html_()  # type: ignore[operator]
                return shown

    return DisplayFrame


_FRAME: list[type[pd.DataFrame]] = []


def DisplayFrame(data: pd.DataFrame) -> pd.DataFrame:  # noqa: N802  # a class to its callers
    """``data``, shown formatted in notebooks (see :func:`styled`), with the same values.

    ``History.df()`` and ``History.summary()`` return one. Slices and copies keep the
    display; ``pd.DataFrame(frame)`` gives a plain one.

    Example:
        >>> import pandas as pd
        >>> frame = DisplayFrame(pd.DataFrame({"credits": pd.array([800, None], "Int64")}))
        >>> frame["credits"].tolist(), "–" in frame[["credits"]]._repr_html_()
        ([800, <NA>], True)
    """
    if not _FRAME:  # made on first use: importing genlab.history does not import pandas
        _FRAME.append(_display_frame_class())
    return _FRAME[0](data)


def styled(data: pd.DataFrame) -> Styler:
    """``data`` formatted for people: seconds to 0.1, credits and counts whole, rates as
    percentages, times to the second, missing values as a dash ("–").

    Example:
        >>> import pandas as pd
        >>> page = styled(pd.DataFrame({"total_seconds": [12.345], "credits": [800.0]})).to_html()
        >>> ">12.3<" in page, ">800<" in page
        (True, True)
    """
    formats: dict[Any, Any] = {}
    for name, column in data.items():
        key, kind = str(name), column.dtype.kind
        if key == "success_rate":
            formats[name] = "{:.0%}"
        elif key.endswith("seconds"):
            formats[name] = "{:.1f}"
        elif kind in "iu" or (kind == "f" and (key == "credits" or key in SUMMARY_COLUMNS)):
            formats[name] = "{:,.0f}"
        elif kind == "M":
            formats[name] = lambda moment: moment.strftime("%Y-%m-%d %H:%M:%S")
    return data.style.format(formats, na_rep="–")


class History(Journal):
    """The journal as a DataFrame, its summaries, and resuming after a restart.

    Args:
        location: a SQLite file (a path or ``sqlite:///path``), or a team's PostgreSQL
            database (``postgresql://user@host:5432/db``, needs ``genlab[team]``); None reads
            ``$GENLAB_HISTORY``, else ``.genlab/history.sqlite`` in the working directory.
            Several notebooks, processes and machines may write to it at once.
        project: recorded with every submission, for ``df(project=...)``; default
            ``$GENLAB_PROJECT``.
        lease_seconds: how long a crashed process's tasks stay its own before ``resume``
            elsewhere takes them over.
    """

    def __repr__(self) -> str:
        return f"History({self.location!r})"
    def _repr_html_(self) -> str:
        # What a cell shows for `history`: where it is, and its newest rows as the panel does.
        rows = self.recent(10)
        note = styled_html(
            f"the newest {len(rows)}; <code>.df()</code> has every task, "
            "<code>.summary()</code> the totals", MUTED,
        )
        shown = table(DISPLAY_COLUMNS, rows, wrapped={"prompt"}, empty="No tasks yet.")
        return (
            f"<div class='genlab-history'><b>History</b> <code>{escape(self.location)}</code>"
            f"<br>{note}<div>{shown}</div></div>"
        )

    def df(self, **filters: Unpack[Filters]) -> pd.DataFrame:
        """Every submission as a row, oldest first, filtered as asked.

        Timestamps are timezone-aware datetimes (UTC); ``credits`` and counts are nullable
        integers; ``queue_seconds``, ``processing_seconds`` and ``total_seconds`` are derived.
        ``state`` says what is known of the submission itself: ``sending`` (no answer yet, or
        the process died while sending), ``accepted``, ``uncertain`` (it may have been billed
        without a task id) or ``refused``.

        Keyword Args:
            model: one model or several.
            status: one task status or several.
            tag: one tag or several.
            since: submitted at or after (a datetime, an ISO 8601 string or epoch seconds).
            until: submitted before (same forms).

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> list(history.df(model=["video-a", "video-b"], since="2026-11-01").columns[:3])
            ['task_id', 'model', 'kind']
            >>> history.close()
        """
        return DisplayFrame(frame(self, filters))

    def summary(
        self, by: str | Sequence[str] = "model", **filters: Unpack[Filters]
    ) -> pd.DataFrame:
        """Per group: runs, succeeded, failed, invalid, other (uncertain, refused, running),
        success rate, p50/p95 seconds from creation to completion of the succeeded runs,
        credits billed (where priced) and how many had no price.

        The same table as ``genlab.report.summarize(history.df(**filters), by)``; see
        :func:`genlab.history.summarize`. Filters are those of :meth:`df`.

        Example:
            history.summary(by=["model", "resolution"], tag="sweep-1")
        """
        return DisplayFrame(summarize(self.df(**filters), by))

    def spend(self, by: SpendBy = "model") -> pd.DataFrame:
        """Credits spent (published prices), estimated (assumed prices of unpriced runs) and
        saved by reuse, per ``"model"``, UTC ``"day"`` or ``"tag"``; see :func:`spend`.

        Example:
            history.spend(by="day")
            genlab.report.plot_spend(history.spend())   # the chart
        """
        return DisplayFrame(spend(self, by))

    def recent(
        self, limit: int = 20, *, model: str | None = None, status: str | None = None
    ) -> list[dict[str, str]]:
        """The newest submissions first, as text ready for a table (the history panel's rows).

        Each row maps the names of :data:`DISPLAY_COLUMNS` to text: ``""`` where a value is
        missing, seconds with one decimal, times as ``YYYY-MM-DD HH:MM:SS`` (UTC), and prompts
        cut to :data:`PROMPT_SHOWN` characters.

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> history.recent(5, model="video-a")
            []
            >>> history.close()
        """
        table = frame(self, {"model": model, "status": status}, newest=limit)
        shown = {name: [display_text(name, v) for v in table[name]] for name in DISPLAY_COLUMNS}
        return [{name: shown[name][i] for name in shown} for i in reversed(range(len(table)))]

    async def aresume(
        self, client: AsyncClient, *, timeout: float | None = None, concurrency: int = 8
    ) -> list[ResumeOutcome]:
        """Wait for every task that was accepted but not seen to the end, and record it.

        Uncertain submissions (no task id) cannot be resumed; they stay visible in ``df()``
        with ``state == "uncertain"``. Nothing is ever submitted again. A task another live
        process is waiting on (its lease) is left to it and reported with ``leased_by``.
        """
        rows, elsewhere = self.claim_unfinished()
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(row: Mapping[str, Any]) -> ResumeOutcome:
            task = _task_of(row)
            async with gate:
                try:
                    record = await client.wait(task, timeout=timeout, raise_on_failure=False)
                except GenlabError as exc:
                    return ResumeOutcome(task.task_id, None, exc)
            self._record_if_needed(client.history, record)
            return ResumeOutcome(task.task_id, record, None)

        done = list(await asyncio.gather(*(one(r) for r in rows)))
        return done + _leased(elsewhere)

    def resume(self, client: Client, *, timeout: float | None = None) -> list[ResumeOutcome]:
        """The blocking :meth:`aresume`, for a :class:`genlab.Client`.

        Example:
            client = genlab.connect()
            for outcome in client_history.resume(client):
                print(outcome)
        """
        if isinstance(client, AsyncClient):
            raise TypeError("with an AsyncClient use: await history.aresume(client)")
        outcomes = []
        rows, elsewhere = self.claim_unfinished()
        futures = [
            (_task_of(r), client.wait_future(_task_of(r), timeout=timeout, raise_on_failure=False))
            for r in rows
        ]
        for task, future in futures:
            try:
                record = future.result(timeout=None if timeout is None else timeout + 30)
            except GenlabError as exc:
                outcomes.append(ResumeOutcome(task.task_id, None, exc))
                continue
            self._record_if_needed(client.history, record)
            outcomes.append(ResumeOutcome(task.task_id, record, None))
        return outcomes + _leased(elsewhere)

    def _record_if_needed(self, journal: object, record: TaskRecord) -> None:
        # A client journaling into this very history has recorded it already.
        if journal is not self:
            self.status_changed(record)


def _leased(rows: Sequence[Mapping[str, Any]]) -> list[ResumeOutcome]:
    return [ResumeOutcome(r["task_id"], None, None, r["lease_owner"]) for r in rows]


def _task_of(row: Mapping[str, Any]) -> Task:
    created = row["created_at"]
    return Task(
        task_id=row["task_id"],
        model=row["model"],
        kind=row["kind"],
        created_at=datetime.fromtimestamp(created, UTC) if created is not None else None,
    )
