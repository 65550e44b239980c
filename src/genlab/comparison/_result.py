"""The result of a comparison: its table and the views people look at."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from genlab.client import TaskRecord
from genlab.comparison._plan import Plan
from genlab.display import escape
from genlab.history import DisplayFrame, History
from genlab.report import (
    HTML,
    Fetch,
    Leaderboard,
    ReportFile,
    gallery,
    leaderboard,
    plot_summary,
    summarize,
    summary_html,
    write_report,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class Comparison:
    """The result of :func:`compare`: one row per run, with views for people.

    Attributes:
        df: one row per run: ``run``, ``prompt``, ``model``, ``kind``, one column per
            parameter (empty where the model has no such field), ``repeat``, ``status``
            (succeeded, failed, invalid, timeout, uncertain, refused, error), ``error``,
            ``mode``, ``task_id``, ``credits`` (estimate), ``seconds`` (creation to
            completion), ``result_url``, ``cover_url``, ``width``, ``height``,
            ``media_seconds``, ``paths`` (saved or kept files), ``tag`` and ``reused`` (an earlier
            result filled the cell at zero credits; :meth:`to_html` counts its credits as
            saved).
        swept: the parameters that were swept; they are gallery columns next to the model.
        money_line: what was printed before the runs.
        runs: the grid's cells in ``df``'s order (:class:`Run`: each with its validated
            request, or the catalog's message for an invalid one).
        records: each row's final task record, or None.
        fetch: reads a result's media for the gallery and the report (``compare`` gives its
            client's ``fetch_media``); None reads saved files only.
        history: the :class:`genlab.History` the runs were recorded in (None for a client
            without one): people's votes on the results (``genlab.rate(cmp)``) go there, and
            :meth:`leaderboard` and :meth:`to_html` read them back.

    Example:
        >>> from genlab.comparison._plan import plan
        >>> grid = plan(["a kite"], ["image-b"], {})
        >>> cmp = Comparison(pd.DataFrame({"model": ["image-b"], "status": ["succeeded"]}),
        ...                  grid=grid, records=[None])
        >>> cmp
        <Comparison of 1 runs: 1 succeeded; 1 run: no published price, so no estimate>
        >>> cmp.columns
        ['model']

        What ``genlab.compare`` returns is used like this::

            cmp.summary()                  # per model: runs, success rate, p50/p95 s, credits
            cmp.gallery()                  # prompts down, models (and swept params) across
            cmp.plot()                     # latency and credits per model
            cmp.to_html("comparison.html") # one self-contained file
            genlab.rate(cmp)               # blind votes between the results, then:
            cmp.leaderboard()              # which model people prefer, with intervals
    """

    def __init__(
        self,
        df: pd.DataFrame,
        *,
        grid: Plan,
        records: Sequence[TaskRecord | None],
        tag: str | None = None,
        fetch: Fetch | None = None,
        history: History | None = None,
    ) -> None:
        self.df = DisplayFrame(df)  # shown with rounded seconds and dashes; values as given
        self.params = grid.params
        self.swept = grid.swept
        self.estimate = grid.estimate
        self.money_line = grid.money_line
        self.runs = list(grid.runs)  # the grid's cells, each with its validated request
        self.records = list(records)
        self.tag = tag
        self.fetch = fetch
        self.history = history
        # Fetched media by URL: the gallery and the report each fetch a result once.
        self._media: dict[str, bytes] = {}

    @property
    def columns(self) -> list[str]:
        """What the gallery's columns are made of: the model, then each swept parameter."""
        return ["model", *self.swept]

    def __repr__(self) -> str:
        counts = self.df["status"].value_counts()
        shown = ", ".join(f"{n} {status}" for status, n in counts.items())
        return f"<Comparison of {len(self.df)} runs: {shown}; {self.money_line}>"

    def _repr_html_(self) -> str:
        # What a cell shows for `cmp`: the cost line and the summary; media stay in gallery().
        return (
            f"<p>{escape(self.money_line)}</p>{summary_html(self.summary())}"
            "<p><code>.gallery()</code> shows the media, <code>.plot()</code> the charts, "
            "<code>.to_html(path)</code> writes a report, <code>.df</code> has every run.</p>"
        )

    def summary(self, by: str | Sequence[str] = "model") -> pd.DataFrame:
        """Per model: runs, succeeded, failed, invalid, other, success rate, p50/p95 seconds,
        credits, unpriced runs and ``as_asked``, the share of results delivered as asked
        (over those whose media were measured; NA where none were); see
        :func:`genlab.report.summarize`.

        Example:
            cmp.summary(by=["model", "duration"])
        """
        return DisplayFrame(summarize(self.df, by))

    def gallery(self, **options: Any) -> HTML:
        """Prompts down, models (and swept parameters) across, media embedded in each cell.

        Options are those of :func:`genlab.report.gallery_html`.
        """
        options.setdefault("cols", self.columns)
        options.setdefault("cache", self._media)
        options.setdefault("fetch", self.fetch)
        return gallery(self.df, **options)

    def plot(self, by: str | Sequence[str] = "model") -> Figure:
        """A figure with latency (p50/p95) and credits per model."""
        return plot_summary(self.df, by)

    def ratings(self) -> pd.DataFrame:
        """People's votes between this comparison's results (``genlab.rate(cmp)``), from its
        history; empty without one."""
        if self.history is None:
            return DisplayFrame(pd.DataFrame(columns=["answer", "left_model", "right_model"]))
        tasks = self.df["task_id"].dropna().astype(str).tolist()
        return self.history.ratings(tasks=tasks)

    def leaderboard(self, by: str | Sequence[str] = "model", **options: Any) -> Leaderboard:
        """The models ranked by people's votes on these results (see
        :func:`genlab.report.leaderboard`); a model with results nobody compared yet is listed
        as unrated.

        Example:
            genlab.rate(cmp)        # vote, then
            cmp.leaderboard()       # .chart(), .heatmap(), .matrix
            cmp.leaderboard(min_gold_accuracy=0.8).notes   # careless raters' votes left out
        """
        succeeded = self.df.loc[self.df["status"] == "succeeded", "model"]
        if by == "model" or list(by) == ["model"]:
            options.setdefault("models", sorted(set(succeeded.dropna().astype(str))))
        votes = self.ratings()
        if options.get("min_gold_accuracy") is not None and self.history is not None:
            # Gold votes (read apart) say whose votes to leave out; they are never counted.
            gold = self.history.ratings(gold=True)
            real = gold["left_task"].where(gold["gold"] == "left", gold["right_task"])
            tasks = set(self.df["task_id"].dropna().astype(str))
            votes = pd.concat([votes, gold[real.isin(tasks)]], ignore_index=True)
        return leaderboard(votes, by, **options)

    def to_html(
        self, path: str | os.PathLike[str], *, title: str = "genlab comparison"
    ) -> ReportFile:
        """Write one self-contained HTML file: summary, charts, spend, the leaderboard of
        people's votes (when there are any) and gallery. Returns its path (a notebook shows
        it as a link to the file).

        Example:
            cmp.to_html("out/comparison.html")
        """
        return write_report(
            self.df,
            path,
            title=title,
            intro=self.money_line,
            cols=self.columns,
            fetch=self.fetch,
            cache=self._media,
            ratings=self.ratings(),
        )
