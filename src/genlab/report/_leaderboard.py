"""Leaderboards: people's blind pairwise votes (``history.ratings()``) as a ranking.

One row per competitor (a model, or a model with a setting) with a Bradley-Terry score on an
Elo-like scale, its 95 % bootstrap interval, wins, losses, ties, "both bad" answers, votes and
the share of votes won, and the win-rate matrix beside it. How the scores are fitted, and why
ties count as half a win, is in :mod:`genlab.report._bradley_terry` and
``docs/spec-decisions.md``.

``rank_ub`` says what the votes support: 1 + the number of competitors whose interval lies
wholly above this one's (the arenas' convention), so competitors whose intervals overlap share
a rank. The votes are people's: a judge's (a rater named ``judge:...``) count only when asked
for (``raters="judges"``, or by name), gold votes never, and ``min_gold_accuracy`` leaves out
the votes of raters who did worse than that on gold pairs, saying so in ``board.notes``.

A competitor nobody compared yet is listed as ``unrated`` and given no score or rank; one whose
votes never link it to the others (only ever compared within a separate group) is ``not
connected``: no shared scale exists for it.

Example:
    >>> import pandas as pd
    >>> votes = pd.DataFrame({"left_model": ["image-b", "image-d", "image-b"],
    ...                       "right_model": ["image-d", "image-b", "image-d"],
    ...                       "answer": ["left", "right", "tie"]})
    >>> board = leaderboard(votes, models=["image-b", "image-d", "image-c"], rounds=50)
    >>> board.df[["rank", "rank_ub", "wins", "ties", "status"]].values.tolist()
    [[1, 1, 2, 1, 'ranked'], [2, 2, 0, 1, 'ranked'], [<NA>, <NA>, 0, 0, 'unrated']]
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
import pandas as pd

from genlab.history import ANSWERS, Filters, History
from genlab.report import _bradley_terry as bt
from genlab.report._agreement import is_judge

if TYPE_CHECKING:
    from matplotlib.figure import Figure

BOARD_COLUMNS = (
    "rank", "rank_ub", "score", "lower", "upper", "wins", "losses", "ties", "both_bad",
    "comparisons", "win_rate", "status",
)
"""The columns of a :func:`leaderboard`, in order."""

_OUTCOME = {"left": 1, "right": -1, "tie": 0, "both bad": 0}
_SIDES = ("left", "right")
# Columns that belong to the vote as a whole: in ``by`` they make separate leaderboards.
_VOTE_COLUMNS = frozenset({"prompt", "prompt_address", "tag", "rater", "host", "project",
                           "notebook"})


class Leaderboard:
    """A :func:`leaderboard`: its table (one row per competitor, best first) with the win-rate
    matrix and how it was made; a notebook shows it as a table with its intervals drawn.

    Attributes:
        df: the table, a DataFrame indexed by competitor (see :func:`leaderboard` for its
            columns); :meth:`to_pandas` gives a copy to change. The board reads as its table
            too (``board["score"]``, ``board.loc[...]``, ``len(board)``), though it is no
            DataFrame itself.
        matrix: the share of votes the row's competitor won against the column's (ties as
            half), missing where the two never met; with groups in ``by``, indexed by group
            and competitor.
        by: what names a row (``("model",)`` by default).
        level: the intervals' coverage (0.95).
        votes: how many votes the board was fitted on.
        notes: what was left out and why (a rater's votes under ``min_gold_accuracy``), for
            people; the notebook's table shows them under it.

    Example:
        board = genlab.leaderboard(history)
        board.df.loc["image-b", "score"]; board.matrix; board.chart()

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"left_model": ["video-a", "video-a", "video-b"],
        ...                       "right_model": ["video-b", "video-c", "video-c"],
        ...                       "answer": ["left", "left", "tie"]})
        >>> board = leaderboard(votes)
        >>> len(board), board.loc["video-a", ["comparisons", "win_rate"]].tolist()
        (3, [2.0, 1.0])
    """

    def __init__(
        self, df: pd.DataFrame, *, matrix: pd.DataFrame, by: tuple[str, ...], level: float,
        votes: int, notes: tuple[str, ...] = (),
    ) -> None:
        self.df = df
        self.matrix = matrix
        self.by = by
        self.level = level
        self.votes = votes
        self.notes = notes

    # It reads as the table it holds (board["score"], len(board), board.loc[...],
    # board.to_csv(...)), as when it was a DataFrame; what changes the table is the copy's.
    def __getitem__(self, key: Any) -> Any:
        return self.df[key]

    def __len__(self) -> int:
        return len(self.df)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.df)

    def __getattr__(self, name: str) -> Any:
        table = self.__dict__.get("df")
        if table is None or name.startswith("_"):
            raise AttributeError(f"'Leaderboard' object has no attribute {name!r}")
        return getattr(table, name)

    def to_pandas(self) -> pd.DataFrame:
        """The table as a DataFrame of its own (a copy: changing it leaves the board)."""
        return self.df.copy()

    def chart(self) -> Figure:
        """Scores with their intervals (a matplotlib Figure; unrated competitors named)."""
        from genlab.report._leaderboard_charts import plot_leaderboard

        return plot_leaderboard(self)

    def heatmap(self) -> Figure:
        """The win-rate matrix as a heat map (a matplotlib Figure)."""
        from genlab.report._leaderboard_charts import plot_win_rates

        return plot_win_rates(self)

    def __repr__(self) -> str:
        return repr(self.df)  # the table, as a terminal prints a DataFrame

    def _repr_html_(self) -> str:
        from genlab.report._leaderboard_html import leaderboard_html

        return leaderboard_html(self)


def leaderboard(
    source: History | pd.DataFrame,
    by: str | Sequence[str] = "model",
    *,
    models: Sequence[str] | None = None,
    level: float = 0.95,
    rounds: int = 200,
    seed: int | None = 0,
    experiment: str | None = None,
    raters: str | Sequence[str] | None = None,
    min_gold_accuracy: float | None = None,
    **filters: Unpack[Filters],
) -> Leaderboard:
    """Rank competitors by people's votes: Bradley-Terry scores on an Elo-like scale.

    Args:
        source: a :class:`genlab.History` (its :meth:`~genlab.History.ratings`, narrowed by
            ``filters``), or a ratings DataFrame (``history.ratings(...)`` or one of your own
            with ``left_model``, ``right_model`` and ``answer``).
        by: what a row is: ``"model"``; a model and settings (``["model", "duration"]``: each
            side's setting from its ``left_settings`` / ``right_settings``); with a column of
            the vote as a whole (``"prompt"``, ``"prompt_address"``, ``"tag"``, ``"rater"``
            ...), one leaderboard per value of it, fitted apart (``["prompt", "model"]``).
        models: the models to rank: votes involving others are left out, and a listed model
            without votes is shown as unrated. By default every model in the votes, and for a
            History also every model with a succeeded task (matching the ``model``, ``tag`` and
            ``project`` filters), so a model nobody compared shows as unrated.
        level: the intervals' coverage.
        rounds: bootstrap resamples of the votes for the intervals.
        seed: makes the intervals repeatable (None: fresh each time).
        experiment: only votes between two results of this experiment
            (``genlab.experiment``); each side's ``prompt_version`` (``"kite@2"``) is then a
            competitor: ``by="prompt_version"`` ranks the experiment's prompt versions.
        raters: whose votes count: names (one, or a list); ``"judges"`` for every judge (a
            rater named ``judge:...``); by default every person, no judge.
        min_gold_accuracy: leave out the votes of raters whose share of right answers on gold
            pairs is below this (raters with no gold vote are kept); ``board.notes`` says
            whose votes were left out. Gold votes themselves never count.
        **filters: for a History, those of ``History.ratings``.

    Returns:
        A :class:`Leaderboard` whose table (``board.df``) has the columns ``rank`` (1 is
        best; missing unless ranked), ``rank_ub`` (1 + the competitors whose lower bound is
        above this one's upper bound: overlapping intervals share a rank), ``score``,
        ``lower`` and ``upper`` (the interval), ``wins``, ``losses``, ``ties``, ``both_bad``,
        ``comparisons``, ``win_rate`` (ties as half) and ``status`` (``ranked``,
        ``unrated``, ``not connected``); best first.

    Raises:
        ValueError: ``by`` names no side of a vote (a model or a setting), or a column the
            votes lack.

    Example:
        board = genlab.leaderboard(history, tag="kites-1")
        board.df; board.chart(); board.heatmap(); board.matrix
        genlab.leaderboard(history, by="prompt_version", experiment="kite-study")
        genlab.leaderboard(history, min_gold_accuracy=0.8).notes   # whose votes were dropped

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"left_model": ["video-a", "video-a", "video-b"],
        ...                       "right_model": ["video-b", "video-c", "video-c"],
        ...                       "answer": ["left", "left", "tie"]})
        >>> board = leaderboard(votes)
        >>> board["rank"].to_dict()
        {'video-a': 1, 'video-c': 2, 'video-b': 3}
    """
    names = [by] if isinstance(by, str) else list(by)
    groups = [n for n in names if n in _VOTE_COLUMNS]
    sides = [n for n in names if n not in _VOTE_COLUMNS]
    if not sides:
        raise ValueError(
            f"by={names!r} names no competitor: add 'model' (or a setting such as 'duration')"
        )
    if "prompt_version" in sides and (experiment is None or not isinstance(source, History)):
        raise ValueError(
            "by='prompt_version' ranks an experiment's prompt versions: pass the history and "
            "experiment='its name'"
        )
    if isinstance(source, History):
        settings = [n for n in sides if n not in ("model", "prompt_version")]
        columns = ["answer", "left_model", "right_model", "rater",
                   *(g for g in groups if g != "rater")]
        columns += ["left_settings", "right_settings"] if settings else []
        columns += ["left_task", "right_task"] if experiment is not None else []
        votes = source.rating_frame(columns, **filters)
        golden = (source.rating_frame(["rater", "answer", "gold"], gold=True, **filters)
                  if min_gold_accuracy is not None else None)
        if experiment is not None:
            votes = _of_experiment(source, experiment, votes)
        if models is None and sides == ["model"]:
            universe = _history_models(source, filters)
        else:
            universe = list(models or [])
    else:
        votes = source
        universe = list(models or [])
        golden = None
        if "gold" in votes.columns:  # a table of every vote: gold ones are read apart
            golden = votes[votes["gold"].notna()]
            votes = votes[votes["gold"].isna()]
    votes, notes = _whose(votes, raters, golden, min_gold_accuracy)
    return _board(votes, names, groups, sides, universe, models is not None, level, rounds,
                  seed, notes)


def _whose(votes: pd.DataFrame, raters: str | Sequence[str] | None,
           golden: pd.DataFrame | None, least: float | None
           ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The votes of the raters asked for, without those of raters under ``least`` on gold
    pairs; and notes saying whose were left out."""
    if "rater" not in votes.columns:
        if raters is not None or least is not None:
            raise ValueError("the votes have no rater column: raters= and min_gold_accuracy= "
                             "need one")
        return votes, ()
    judged = is_judge(votes["rater"]).to_numpy(dtype=bool)
    if raters is None:
        votes = votes[~judged]
    elif raters == "judges":
        votes = votes[judged]
    else:
        votes = votes[votes["rater"].isin([raters] if isinstance(raters, str) else raters)]
    if least is not None and golden is None:
        raise ValueError("min_gold_accuracy needs the gold votes: pass the history, or a "
                         "table of every vote (history.ratings(gold=None))")
    if least is None or golden is None or golden.empty:
        return votes, ()
    right = (golden["answer"] == golden["gold"]).groupby(golden["rater"]).mean()
    notes = []
    for name, share in right.sort_index().items():
        dropped = int((votes["rater"] == name).sum())
        if share < least and dropped:
            notes.append(f"left out {dropped} vote{'' if dropped == 1 else 's'} of "
                         f"{name} (gold accuracy {share:.2f}, below {least:g})")
    low = [name for name, share in right.items() if share < least]
    return votes[~votes["rater"].isin(low)], tuple(notes)


def _of_experiment(history: History, experiment: str, votes: pd.DataFrame) -> pd.DataFrame:
    # Votes between two of the experiment's results; each side named by its prompt version.
    refs = {str(c["task_id"]): f"{c['prompt_name']}@{c['prompt_version']}"
            for c in history.experiment_cells(experiment) if c.get("task_id")}
    if not refs:
        raise ValueError(f"the history has no experiment {experiment!r} with results "
                         f"(experiments: {', '.join(history.experiments()) or 'none'})")
    inside = votes["left_task"].isin(list(refs)) & votes["right_task"].isin(list(refs))
    votes = votes[inside].reset_index(drop=True)
    return votes.assign(left_prompt_version=votes["left_task"].map(refs),
                        right_prompt_version=votes["right_task"].map(refs))


def _history_models(history: History, filters: Filters) -> list[str]:
    # Each model once, not df(): a team's history may hold 100,000 tasks.
    found = history.tasks(columns=["model"], distinct=True, status="succeeded",
                          model=filters.get("model"), tag=filters.get("tag"),
                          project=filters.get("project"))
    return sorted(str(model) for model in found["model"])


def _side_values(votes: pd.DataFrame, side: str, name: str) -> pd.Series:
    column = f"{side}_{name}"
    if column in votes.columns:
        return votes[column].reset_index(drop=True)
    raw = f"{side}_settings"
    if raw not in votes.columns:
        raise ValueError(f"the votes have no {column} (nor {raw} to read {name!r} from)")
    values = [json.loads(text).get(name) if isinstance(text, str) else None
              for text in votes[raw].tolist()]
    return pd.Series(values, dtype=object)


def _keys(parts: list[pd.Series]) -> list[Hashable]:
    if len(parts) == 1:
        return list(parts[0])
    return list(zip(*(p.tolist() for p in parts), strict=True))


def _board(
    votes: pd.DataFrame, names: list[str], groups: list[str], sides: list[str],
    universe: list[str], only_listed: bool, level: float, rounds: int, seed: int | None,
    notes: tuple[str, ...] = (),
) -> Leaderboard:
    strange = sorted(set(votes["answer"].dropna().unique()) - set(ANSWERS))
    if strange:
        raise ValueError(f"unknown answer(s) {strange}; answers are {list(ANSWERS)}")
    for g in groups:
        if g not in votes.columns:
            raise ValueError(f"the votes have no {g!r} column")
    votes = votes.reset_index(drop=True)
    if only_listed:
        keep = votes["left_model"].isin(universe) & votes["right_model"].isin(universe)
        votes = votes[keep].reset_index(drop=True)
    count = len(votes)
    keys = _keys([_side_values(votes, "left", n) for n in sides])
    keys += _keys([_side_values(votes, "right", n) for n in sides])
    extra: list[Hashable] = list(universe) if sides == ["model"] else []
    # Competitors as codes: those voted on first, then the listed ones nobody compared.
    codes, found = pd.factorize(pd.Series([*keys, *extra], dtype=object))
    labels: list[Hashable] = list(found)
    left, right, extra_codes = codes[:count], codes[count:2 * count], codes[2 * count:]
    # A vote between two results of one competitor (two repeats of a model) ranks nothing.
    differ = left != right
    left, right, votes = left[differ], right[differ], votes[differ].reset_index(drop=True)
    count = len(votes)
    outcome = votes["answer"].map(_OUTCOME).to_numpy(dtype=np.int8)
    bad = (votes["answer"] == "both bad").to_numpy(dtype=bool)
    if groups:
        group_codes, group_values = pd.factorize(
            pd.Series(_keys([votes[g] for g in groups]), dtype=object))
        chosen = [(np.flatnonzero(group_codes == i), value)
                  for i, value in enumerate(group_values)]
    else:
        chosen = [(np.arange(count), ())]
    rng = np.random.default_rng(seed)
    frames, matrices = [], []
    for take, value in chosen:
        members = np.unique(np.concatenate([left[take], right[take], extra_codes]))
        local = np.full(len(labels), -1, dtype=np.intp)
        local[members] = np.arange(len(members))
        frame, matrix = _fit_group(
            local[left[take]], local[right[take]], outcome[take], bad[take],
            [labels[i] for i in members], level, rounds, rng,
        )
        if groups:
            prefix = value if isinstance(value, tuple) else (value,)
            for part in (frame, matrix):
                part.index = pd.MultiIndex.from_tuples(
                    [(*prefix, *(c if isinstance(c, tuple) else (c,))) for c in part.index],
                    names=[*groups, *sides],
                )
        frames.append(frame)
        matrices.append(matrix)
    table = pd.concat(frames) if frames else _empty(groups, sides)
    if not groups:
        table.index = _index(table.index, sides)
    elif frames and list(table.index.names) != names:
        table = table.reorder_levels(names)
    matrix = pd.concat(matrices) if len(matrices) != 1 else matrices[0]
    return Leaderboard(table, matrix=matrix, by=tuple(names), level=level, votes=count,
                       notes=notes)


def _empty(groups: list[str], sides: list[str]) -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples([], names=[*groups, *sides])
    return pd.DataFrame({c: pd.Series([], dtype=_DTYPES[c]) for c in BOARD_COLUMNS},
                        index=index)


_DTYPES = {"rank": "Int64", "rank_ub": "Int64", "score": "Float64", "lower": "Float64",
           "upper": "Float64",
           "wins": "Int64", "losses": "Int64", "ties": "Int64", "both_bad": "Int64",
           "comparisons": "Int64", "win_rate": "Float64", "status": "string"}


def _index(index: pd.Index, sides: list[str]) -> pd.Index:
    made: pd.Index
    if len(sides) == 1:
        made = pd.Index(list(index), name=sides[0])
    else:
        made = pd.MultiIndex.from_tuples(list(index), names=sides)
    return made


def _fit_group(
    left: np.ndarray[Any, Any], right: np.ndarray[Any, Any], outcome: np.ndarray[Any, Any],
    bad: np.ndarray[Any, Any], competitors: list[Hashable], level: float, rounds: int,
    rng: np.random.Generator,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    size = len(competitors)
    wins, ties = bt.counts(left, right, outcome, size)
    mask = bt.ranked(wins, ties)
    score = np.full(size, np.nan)
    lower = np.full(size, np.nan)
    upper = np.full(size, np.nan)
    if mask.any():
        sub = np.ix_(mask, mask)
        theta = bt.fit(wins[sub], ties[sub])
        samples = bt.bootstrap(wins[sub], ties[sub], theta, rounds, rng)
        low, high = bt.percentile_interval(bt.elo(samples), level)
        score[mask], lower[mask], upper[mask] = bt.elo(theta), low, high
    both = np.bincount(np.concatenate([left[bad], right[bad]]), minlength=size)
    n = wins + wins.T + ties
    played = n.sum(axis=1)
    status = np.where(mask, "ranked", np.where(played > 0, "not connected", "unrated"))
    # Best first; then the unconnected and the unrated, most compared first.
    order = np.lexsort((-played, np.where(mask, -score, 0.0), ~mask))
    ranked = int(mask.sum())
    rank = [i + 1 if i < ranked else None for i in range(size)]
    # 1 + those whose interval lies wholly above this one's: overlapping intervals share it.
    above = (lower[order][None, :] > upper[order][:, None]).sum(axis=1) + 1
    rank_ub = [int(above[i]) if i < ranked else None for i in range(size)]
    rate = np.divide(wins.sum(axis=1) + ties.sum(axis=1) / 2, played,
                     out=np.full(size, np.nan), where=played > 0)
    index = pd.Index([competitors[i] for i in order], dtype=object, tupleize_cols=False)
    columns: dict[str, Any] = {
        "rank": rank,
        "rank_ub": rank_ub,
        "score": score[order],
        "lower": lower[order],
        "upper": upper[order],
        "wins": wins.sum(axis=1)[order],
        "losses": wins.sum(axis=0)[order],
        "ties": (ties.sum(axis=1) - both)[order],
        "both_bad": both[order],
        "comparisons": played[order],
        "win_rate": rate[order],
        "status": status[order],
    }
    frame = pd.DataFrame(
        {c: pd.array(_clean(v, _DTYPES[c]), dtype=_DTYPES[c]) for c, v in columns.items()},
        index=index,
    )
    rates = np.divide(wins + ties / 2, n, out=np.full((size, size), np.nan), where=n > 0)
    matrix = pd.DataFrame(rates[np.ix_(order, order)], index=index, columns=index.copy())
    return frame, matrix


def _clean(values: Any, dtype: str) -> Any:
    if dtype == "Int64" and isinstance(values, np.ndarray):
        return np.rint(values).astype(np.int64)
    if dtype == "Float64" and isinstance(values, np.ndarray):
        return [None if np.isnan(v) else float(v) for v in values]
    return values

