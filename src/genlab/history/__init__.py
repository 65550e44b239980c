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
    history.tasks(ids, columns=["status"])      # some of its rows and columns
    history.summary(by="model")                 # runs, success rate, p50/p95, credits
    history.recent(10)                          # the newest rows, as text for a table
    history.resume(client)                      # after a crash: finish what was submitted
    history.ratings(tag="kites-1")              # people's blind votes (genlab.rate), a frame
    history.prompts()                           # saved prompts, their versions and aliases

How it is built: :class:`History` composes four parts, each in its own module and none
inheriting from another. The store (``_store``: the SQL tables, transactions, raw queries), the
journal the client calls (``_journal``: :class:`genlab.client.journal.SpendJournal`), the views
people and other packages read (``_views``: ``df``, ``tasks``, ``summary``, ``spend``,
``recent``; nothing outside this package writes SQL on its tables) and resume (``_resume``);
people's votes between results are a table of their own (``_ratings``); so are prompts and
their versions (``_prompts``), experiments' cells and the scores of results (``_experiments``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack

import sqlalchemy as sa

from genlab._wire import Task, TaskRecord
from genlab.client import AsyncClient, Client
from genlab.client.journal import DurationSample, PastResult, Reused, SubmitEntry
from genlab.display import EMPTY, MUTED, escape, table
from genlab.display import styled as styled_html
from genlab.history._columns import COLUMNS, DISPLAY_COLUMNS, FRAME_COLUMNS, Column
from genlab.history._copy import Copied, copy_history
from genlab.history._experiments import Experiments
from genlab.history._journal import Journal
from genlab.history._leases import Leases
from genlab.history._location import DEFAULT_PATH, default_path
from genlab.history._pending import Pending
from genlab.history._prompts import PROMPT_COLUMNS, Prompts, PromptVersion, check_name
from genlab.history._ratings import (
    ANSWERS,
    JUDGE_PREFIX,
    RATING_COLUMNS,
    Answer,
    GoldSide,
    RatingEntry,
    Ratings,
)
from genlab.history._resume import Resume, ResumeOutcome
from genlab.history._spend import SPEND_COLUMNS, SpendBy, spend
from genlab.history._store import Store
from genlab.history._summary import SUMMARY_COLUMNS, normalized, summarize
from genlab.history._views import (
    PROMPT_SHOWN,
    Filters,
    Views,
    as_text,
    display_text,
    styled,
)
from genlab.history._votes_file import votes_file
from genlab.history._who import Who
from genlab.media import MediaInfo, Result

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ANSWERS",
    "COLUMNS",
    "DEFAULT_PATH",
    "DISPLAY_COLUMNS",
    "FRAME_COLUMNS",
    "DisplayFrame",
    "JUDGE_PREFIX",
    "PROMPT_COLUMNS",
    "PROMPT_SHOWN",
    "RATING_COLUMNS",
    "SPEND_COLUMNS",
    "SUMMARY_COLUMNS",
    "Answer",
    "Column",
    "Copied",
    "Filters",
    "GoldSide",
    "History",
    "PromptVersion",
    "RatingEntry",
    "ResumeOutcome",
    "SpendBy",
    "as_text",
    "check_name",
    "copy_history",
    "default_path",
    "display_text",
    "normalized",
    "spend",
    "styled",
    "summarize",
    "votes_file",
]


def _display_frame_class() -> type[pd.DataFrame]:
    import pandas as pd

    class DisplayFrame(pd.DataFrame):
        """A DataFrame that a notebook shows formatted; its values are untouched."""

        @property
        def _constructor(self) -> type[DisplayFrame]:
            return DisplayFrame

        def __repr__(self) -> str:
            # Printed as the notebook shows it: rounded, and "–" where pandas says <NA>.
            return repr(pd.DataFrame(as_text(self)))

        def to_string(self, *args: Any, **kwargs: Any) -> str | None:  # type: ignore[override]
            shown: str | None = pd.DataFrame(as_text(self)).to_string(*args, **kwargs)
            return shown

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
    """``data``, shown formatted in notebooks (see :func:`styled`) and printed the same way
    (see :func:`as_text`: no ``<NA>``), with the same values.

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


class History:
    """The task history: the client's durable journal, its tables, and resuming after a
    restart.

    Args:
        location: a SQLite file (a path or ``sqlite:///path``), or a team's PostgreSQL
            database (``postgresql://user@host:5432/db``, needs ``genlab[team]``); None reads
            ``$GENLAB_HISTORY``, else ``.genlab/history.sqlite`` in the working directory.
            Several notebooks, processes and machines may write to it at once.
        project: recorded with every submission, for ``df(project=...)``; default
            ``$GENLAB_PROJECT``.
        lease_seconds: how long a crashed process's tasks stay its own before ``resume``
            elsewhere takes them over.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> history.df().empty, "task_id" in history.df().columns
        (True, True)
        >>> history.save_prompt("kite", "A kite at dusk").version
        1
        >>> history.close()
    """

    def __init__(
        self,
        location: str | os.PathLike[str] | None = None,
        *,
        project: str | None = None,
        lease_seconds: float = 60.0,
    ) -> None:
        self._store = Store(location)
        who = Who.here(project)
        self._leases = Leases(self._store.write, who.user, who.host, lease_seconds)
        self._pending = Pending(self._store.where, self._store.write)
        self._pending.merge()  # task ids an earlier process could not record
        self._journal = Journal(self._store, who, self._leases, self._pending)
        self._views = Views(self._store)
        self._resume = Resume(self._store, self._leases, self._pending)
        self._ratings = Ratings(self._store, who, lambda: self._journal.tag)
        self._prompts = Prompts(self._store, who)
        self._experiments = Experiments(self._store)

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

    # --- views -------------------------------------------------------------------------

    def df(self, **filters: Unpack[Filters]) -> pd.DataFrame:
        """Every submission as a row, oldest first, filtered as asked.

        Timestamps are timezone-aware datetimes (UTC); ``credits`` and counts are nullable
        integers; ``queue_seconds``, ``processing_seconds`` and ``total_seconds`` are derived.
        ``state`` says what is known of the submission itself: ``sending`` (no answer yet, or
        the process died while sending), ``accepted``, ``uncertain`` (it may have been billed
        without a task id) or ``refused``.

        Keyword Args:
            **filters: those of :class:`Filters`: ``model``, ``status``, ``tag``, ``user``,
                ``host``, ``project``, ``notebook`` (one or several each); ``since`` and
                ``until`` (a datetime, an ISO 8601 string or epoch seconds).

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> list(history.df(model=["video-a", "video-b"], since="2026-11-01").columns[:3])
            ['task_id', 'model', 'kind']
            >>> history.close()
        """
        return DisplayFrame(self._views.df(filters))

    def tasks(
        self, ids: str | Iterable[str] | None = None, *, experiment: str | None = None,
        columns: Sequence[str] | None = None, distinct: bool = False,
        **filters: Unpack[Filters],
    ) -> pd.DataFrame:
        """The tasks asked for, as rows of :meth:`df` (the same dtypes), oldest first: what
        other packages read of the history instead of writing SQL on its tables.

        Args:
            ids: only these task ids (one, or any number: they are asked for in chunks).
            experiment: only the tasks answering this experiment's cells
                (:meth:`experiment_cells`).
            columns: only these columns, in this order: any of :data:`COLUMNS`, those
                ``df()`` leaves out too (``request``, ``results``, ``media_facts``, ...);
                default those of ``df()``.
            distinct: each row once (ordered by its values), e.g. the models that ran.
            **filters: those of :meth:`df`.

        Raises:
            ValueError: a column the history does not have (the message lists them).
            TypeError: a filter that does not exist.

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> _ = history.append_many([
            ...     {"entry_id": "e1", "task_id": "t1", "model": "image-b", "kind": "image",
            ...      "state": "accepted", "status": "succeeded", "tag": "kites",
            ...      "request": "{}", "submitted_at": 1.8e9},
            ...     {"entry_id": "e2", "task_id": "t2", "model": "video-a", "kind": "video",
            ...      "state": "accepted", "status": "failed", "tag": "kites",
            ...      "request": "{}", "submitted_at": 1.8e9 + 1}])
            >>> history.tasks(["t2", "t1"], columns=["task_id", "status"]).values.tolist()
            [['t1', 'succeeded'], ['t2', 'failed']]
            >>> history.tasks(columns=["model"], distinct=True, tag="kites")["model"].tolist()
            ['image-b', 'video-a']
            >>> history.close()
        """
        return DisplayFrame(self._views.tasks(ids, experiment, columns, distinct, filters))

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
        return DisplayFrame(self._views.summary(by, filters))

    def spend(self, by: SpendBy = "model") -> pd.DataFrame:
        """Credits spent (published prices), estimated (assumed prices of unpriced runs) and
        saved by reuse, per ``"model"``, UTC ``"day"`` or ``"tag"``; see :func:`spend`.

        Example:
            history.spend(by="day")
            genlab.report.plot_spend(history.spend())   # the chart
        """
        return DisplayFrame(self._views.spend(by))

    def recent(
        self, limit: int = 20, *, model: str | None = None, status: str | None = None,
        cut: bool = True,
    ) -> list[dict[str, str]]:
        """The newest submissions first, as text ready for a table (the history panel's rows).

        Each row maps the names of :data:`DISPLAY_COLUMNS` to text: ``""`` where a value is
        missing, seconds with one decimal, times as ``YYYY-MM-DD HH:MM:SS`` (UTC), and prompts
        cut to :data:`PROMPT_SHOWN` characters (whole with ``cut=False``, for a view that
        cuts them itself and shows the rest in a tooltip).

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> history.recent(5, model="video-a")
            []
            >>> history.close()
        """
        return self._views.recent(limit, model, status, cut=cut)

    def record(self, task_id: str) -> Result | None:
        """A task as the history last saw it, as a :class:`genlab.Result`: its last known
        record, the request as sent (validated again, with its defaults), its price, the files
        kept of it (``kept``) and the facts measured of them when they were kept (``media``,
        ``mismatches``, ``as_asked``; nothing is probed again). Ready to show
        (``genlab.display(record)``); None for a task id it does not know.

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> history.record("task_unknown") is None
            True
            >>> history.close()
        """
        return self._views.record(task_id)

    # --- ratings (people's blind votes between two results; genlab.rate) ----------------

    def ratings(
        self, *, tasks: Sequence[str] | None = None, gold: bool | None = False,
        **filters: Unpack[Filters],
    ) -> pd.DataFrame:
        """Every vote not taken back, oldest first: one row per rating, with the columns of
        :data:`RATING_COLUMNS` (``rated_at`` a UTC datetime, ``winner`` the preferred side's
        model, missing for a tie or both bad; settings as JSON text).

        Keyword Args:
            tasks: only votes between two of these task ids (a comparison's).
            gold: False (the default): real votes only; True: only gold votes (a result
                against a degraded copy of itself; ``gold`` names the better side); None:
                both. Leaderboards never count gold votes.
            **filters: those of :meth:`df`, applied to the votes: ``model`` (either side is
                one of these), ``user`` (who rated), ``host``, ``project``, ``notebook``
                (where), ``tag`` (the tag recorded with the vote: the history's tag then, else
                the tag both tasks share), ``status`` (both tasks are in it), ``since`` and
                ``until`` (when rated).

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> history.ratings(model="video-a", user="ana").columns[:4].tolist()
            ['rating_id', 'rated_at', 'rater', 'answer']
            >>> history.close()
        """
        return DisplayFrame(self._ratings.frame(filters, tasks=tasks, gold=gold))

    def add_rating(self, entry: RatingEntry) -> str:
        """Record one vote (in a transaction of its own); its rating id. The rater
        (``genlab.rate``) calls this; nothing is sent to the service."""
        return self._ratings.add(entry)

    def undo_rating(self, rating_id: str) -> bool:
        """Take a vote back: its row stays, marked, and :meth:`ratings` leaves it out. False
        when there was no such vote, or it was already taken back."""
        return self._ratings.undo(rating_id)

    def rating_frame(
        self, columns: Sequence[str], *, tasks: Sequence[str] | None = None,
        gold: bool | None = False, **filters: Unpack[Filters],
    ) -> pd.DataFrame:
        """Only ``columns`` of :meth:`ratings` (a plain DataFrame; leaderboards read fewer
        columns of many votes this way); ``gold`` as for :meth:`ratings`."""
        return self._ratings.frame(filters, tasks=tasks, columns=columns, gold=gold)

    # --- prompts (genlab.prompt) and experiments (genlab.experiment) --------------------

    def prompts(self, name: str | None = None) -> pd.DataFrame:
        """Every saved prompt version (of ``name``, or of every prompt): the columns of
        :data:`PROMPT_COLUMNS` (``aliases`` comma-joined, ``created_at`` a UTC datetime).

        Example:
            >>> import tempfile, os
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> history.prompts().columns.tolist()[:4]
            ['name', 'version', 'parent', 'aliases']
            >>> history.close()
        """
        return DisplayFrame(self._prompts.frame(name))

    def save_prompt(self, name: str, template: str, parent: int | None = None) -> PromptVersion:
        """The version of prompt ``name`` with this exact text, else a new version (its
        parent ``parent``, or the newest); ``genlab.prompt`` and ``Prompt.revise`` call this."""
        return self._prompts.save(name, template, parent)

    def prompt_version(self, name: str, ref: int | str | None = None) -> PromptVersion:
        """Version ``ref`` (a number or an alias; None: the newest) of prompt ``name``.

        Raises:
            LookupError: there is no such prompt, version or alias.
        """
        return self._prompts.get(name, ref)

    def set_prompt_alias(self, name: str, alias: str, version: int) -> None:
        """Point ``alias`` (e.g. ``"best"``) of prompt ``name`` at ``version``."""
        self._prompts.alias(name, alias, version)

    def prompt_aliases(self, name: str) -> dict[str, int]:
        """Alias -> version, for prompt ``name``."""
        return self._prompts.aliases(name)

    def plan_cells(self, experiment: str, cells: Sequence[Mapping[str, Any]]) -> int:
        """Record an experiment's cells not recorded yet (keyed by ``cell``); how many."""
        return self._experiments.plan(experiment, cells)

    def experiment_cells(self, experiment: str) -> list[dict[str, Any]]:
        """An experiment's recorded cells, each with its task id once one was accepted."""
        return self._experiments.cells(experiment)

    def cell_tasks(self, experiment: str) -> dict[str, str | None]:
        """Each recorded cell of an experiment and its task id (None until one was accepted):
        :meth:`experiment_cells` without the rest, quick for thousands of cells.

        Example:
            >>> import os, tempfile
            >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> history.plan_cells("kite-study", [
            ...     {"cell": "c1", "prompt_name": "kite", "prompt_version": 1,
            ...      "variables": {}, "model": "image-b", "seed": 1, "address": "ab12"}])
            1
            >>> history.cell_task("kite-study", "c1", "task_1")
            >>> history.cell_tasks("kite-study")
            {'c1': 'task_1'}
            >>> history.close()
        """
        return self._experiments.cell_tasks(experiment)

    def cell_task(self, experiment: str, cell: str, task_id: str | None) -> None:
        """Record the task answering an experiment's cell (None: run it again)."""
        self._experiments.assign(experiment, cell, task_id)

    def experiments(self) -> list[str]:
        """The names of the experiments this history holds."""
        return self._experiments.experiments()

    def save_scores(self, task_id: str, scores: Mapping[str, float | None]) -> None:
        """Record what scorers gave a task's kept media (None: could not judge)."""
        self._experiments.save_scores(task_id, scores)

    def scores(self, task_ids: Sequence[str]) -> dict[str, dict[str, float | None]]:
        """Task id -> scorer -> value, for those of ``task_ids`` that were scored."""
        return self._experiments.scores(task_ids)

    # --- where it lives (the store) ----------------------------------------------------

    @property
    def location(self) -> str:
        """Where the history lives, as it may be shown (a database's password hidden)."""
        return self._store.location

    @property
    def backend(self) -> Literal["sqlite", "postgresql"]:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._store.backend

    @property
    def path(self) -> Path:
        """The SQLite file (for a PostgreSQL history: its local side file's folder)."""
        where = self._store.where.path
        return where if where is not None else self._pending.file.parent

    @property
    def pending_file(self) -> Path:
        """The local side file holding accepted task ids the history could not record in time."""
        return self._pending.file

    @property
    def engine(self) -> sa.Engine:
        """The SQLAlchemy engine (for queries of your own)."""
        return self._store.engine

    @property
    def lock(self) -> threading.RLock:
        """The lock serialising this object's writes (reads never wait on it)."""
        return self._store.lock

    @property
    def who(self) -> Who:
        """The user, host, project and notebook recorded with this process's submissions."""
        return self._journal.who

    def rows(self, statement: sa.Executable) -> list[sa.Row[Any]]:
        """Run a SELECT built with SQLAlchemy Core; its rows."""
        return self._store.rows(statement)

    def tuples(self, statement: sa.Executable) -> list[tuple[Any, ...]]:
        """Run a SELECT; its rows as the driver's plain tuples."""
        return self._store.tuples(statement)

    def query(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[Mapping[str, Any]]:
        """Run one SQL statement (``?`` or ``:name`` placeholders); its rows as mappings."""
        return self._store.query(sql, params)

    def append_many(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert finished rows in one transaction (imports, tests, benchmarks); how many."""
        return self._store.append_many(rows)

    def close(self) -> None:
        """Hand this process's leases back (another may resume its tasks at once), then close."""
        self._leases.release()
        self._store.close()

    # --- tags --------------------------------------------------------------------------

    @property
    def tag(self) -> str | None:
        """The tag given to submissions from now on (e.g. an experiment's name)."""
        return self._journal.tag

    @tag.setter
    def tag(self, value: str | None) -> None:
        self._journal.tag = value

    def tagging(self, tag: str) -> AbstractContextManager[None]:
        """Tag every submission made inside the ``with`` block.

        Example:
            with history.tagging("sweep-1"):
                client.generate(model="image-b", prompt="a kite")
        """
        return self._journal.tagging(tag)

    # --- the journal the client calls (genlab.client.journal.SpendJournal) -------------

    def submit_started(self, entry: SubmitEntry) -> str:
        """Record a submission before it is sent; its entry id (past ``entry.day_cap``:
        :class:`~genlab.CreditLimitError`, and nothing recorded)."""
        return self._journal.submit_started(entry)

    def submit_accepted(self, entry_id: str, task: Task) -> None:
        """Record the task id; kept in :attr:`pending_file` if the history cannot take it."""
        self._journal.submit_accepted(entry_id, task)

    def submit_uncertain(self, entry_id: str, reason: str) -> None:
        """The submission may have been billed; no answer came back."""
        self._journal.submit_uncertain(entry_id, reason)

    def submit_failed(self, entry_id: str, reason: str) -> None:
        """The service refused the submission (``state == "refused"``)."""
        self._journal.submit_failed(entry_id, reason)

    def status_changed(self, record: TaskRecord) -> None:
        """Record a task's new status (its results, error and timings)."""
        self._journal.status_changed(record)

    def results_saved(
        self,
        task_id: str,
        paths: Sequence[str | os.PathLike[str]],
        media: Sequence[MediaInfo] = (),
        mismatches: Sequence[str] = (),
    ) -> None:
        """The task's results were saved to ``paths`` (local files or storage URLs), with
        the measured facts of each kept media file and how they differ from the request
        (the ``media_*``, ``as_asked`` and ``mismatches`` columns of :meth:`df`); a call
        without facts keeps those already recorded."""
        self._journal.results_saved(task_id, paths, media, mismatches)

    def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
        """The newest ``limit`` succeeded tasks: what each produced and how long it took."""
        return self._journal.duration_samples(limit)

    def find_results(self, address: str, limit: int = 5) -> list[PastResult]:
        """Succeeded tasks of this content address, newest first."""
        return self._journal.find_results(address, limit)

    def reuse_recorded(self, address: str, model: str, note: Reused) -> None:
        """A result was reused instead of paid for again (counted in :meth:`spend`)."""
        self._journal.reuse_recorded(address, model, note)

    def day_spent(self, moment: datetime) -> int:
        """Credits counted on ``moment``'s UTC day by every process writing this history:
        submissions not refused, at their published price, else their assumed one."""
        return self._journal.day_spent(moment)

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        """The body submitted for ``task_id``, as it was sent; None for an unknown task."""
        return self._journal.request_of(task_id)

    # --- resume ------------------------------------------------------------------------

    def unfinished(self) -> list[Mapping[str, Any]]:
        """Accepted tasks not seen to the end (resumable), oldest first; then task ids kept
        in :attr:`pending_file` that could not be merged into the history yet."""
        return self._resume.unfinished()

    def claim_unfinished(self) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """Lease the unfinished tasks no live process waits on (two processes resuming at once
        never claim the same task); (claimed, held elsewhere)."""
        return self._resume.claim_unfinished()

    def uncertain(self) -> list[Mapping[str, Any]]:
        """Submissions that may have been billed without a task id."""
        return self._resume.uncertain()

    async def aresume(
        self, client: AsyncClient, *, timeout: float | None = None, concurrency: int = 8
    ) -> list[ResumeOutcome]:
        """Wait for every task that was accepted but not seen to the end, and record it.

        Uncertain submissions (no task id) cannot be resumed; they stay visible in ``df()``
        with ``state == "uncertain"``. Nothing is ever submitted again. A task another live
        process is waiting on (its lease) is left to it and reported with ``leased_by``.
        """
        return await self._resume.aresume(client, self, timeout=timeout, concurrency=concurrency)

    def resume(self, client: Client, *, timeout: float | None = None) -> list[ResumeOutcome]:
        """The blocking :meth:`aresume`, for a :class:`genlab.Client`.

        Example:
            for outcome in history.resume(genlab.connect(history=history)):
                print(outcome)
        """
        return self._resume.resume(client, self, timeout=timeout)
