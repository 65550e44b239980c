"""How far people's votes can be trusted: agreement between raters, gold accuracy, and how well a
judge or a score predicts what people prefer.

A pair's vote is read by its tasks, not by the side each was shown on: of its two task ids (in
sorted order) the first won, the second won, or neither (a tie, or both bad: both say "no side
is better", as a leaderboard counts them). Each rater's last vote on a pair counts once.

- **alpha** is Krippendorff's alpha for nominal data over those three answers, on the pairs two
  or more raters voted on: 1 is perfect agreement, 0 what raters answering at random with the
  same overall shares would reach. Its interval is a percentile bootstrap over pairs.
- **percent** is the observed agreement: the share of two raters' votes on one pair that agree.
- ``df`` has one row per rater (see :func:`agreement`), and ``flagged`` says why a rater's
  votes deserve a look: a gold accuracy below ``min_gold_accuracy``, or agreement with the
  others below ``min_agreement``.
- ``against="judge:NAME@VERSION"``: Cohen's kappa between that judge's vote and each person's
  vote on the same pairs (with its interval), and ``accuracy``, the share of people's decisive
  votes (left or right) the judge matched. ``against="<scorer>"``: ``accuracy`` is the share
  of people's decisive votes in which the side with the higher score won (pairs with equal or
  missing scores are left out).

Example:
    >>> import pandas as pd
    >>> votes = pd.DataFrame({
    ...     "rater": ["ana", "ben", "ana", "ben", "ana", "ben"],
    ...     "left_task": ["t1", "t2", "t3", "t3", "t5", "t6"],
    ...     "right_task": ["t2", "t1", "t4", "t4", "t6", "t5"],
    ...     "answer": ["left", "right", "left", "right", "right", "left"]})
    >>> found = agreement(votes, rounds=200)
    >>> found.pairs, round(found.percent, 3), round(found.alpha, 3)
    (3, 0.667, 0.444)
    >>> row = found.df.loc["ana"]
    >>> int(row["votes"]), int(row["shared_pairs"]), round(float(row["agreement"]), 3)
    (3, 3, 0.667)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from genlab.display import BORDER, ERROR, MUTED, SHADE, TEXT, escape
from genlab.history import JUDGE_PREFIX, History

AGREEMENT_COLUMNS = (
    "votes", "shared_pairs", "agreement", "gold_votes", "gold_accuracy", "seconds_per_vote",
    "flagged",
)
"""The columns of ``Agreement.df`` (indexed by rater), in order."""

_BREAK = 600.0  # seconds: a longer gap between two votes is a pause, not time spent on a vote
_MIN_GOLD = 3  # gold votes before a rater's gold accuracy may flag them
_MIN_SHARED = 5  # shared pairs before a rater's agreement with the others may flag them
_COLUMNS = ["rater", "answer", "left_task", "right_task", "rated_at", "gold"]


@dataclass(frozen=True)
class Agreement:
    """What :func:`agreement` measured; a notebook shows it as a small table.

    Attributes:
        alpha: Krippendorff's alpha (nominal) over pairs voted by two or more raters (NaN
            when there are none, or every vote is the same answer).
        interval: its bootstrap interval (``level``, over pairs).
        pairs: the pairs voted on by two or more of the raters.
        percent: the observed agreement (share of agreeing votes between two raters).
        df: one row per rater (:data:`AGREEMENT_COLUMNS`).
        level: the intervals' coverage.
        against: the judge or scorer compared with people, if any.
        kappa, kappa_interval: against a judge, Cohen's kappa with people (else None).
        accuracy, accuracy_interval: against a judge, the share of people's decisive votes
            it matched; against a scorer, the share won by the side it scored higher.
        compared: the people's votes the judge or scorer was compared on.

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"rater": ["ana", "ben", "ana", "ben"],
        ...                       "left_task": ["t1", "t2", "t3", "t3"],
        ...                       "right_task": ["t2", "t1", "t4", "t4"],
        ...                       "answer": ["left", "right", "left", "left"]})
        >>> found = agreement(votes, rounds=50)
        >>> found.pairs, found.percent, found.flagged
        (2, 1.0, [])
    """

    alpha: float
    interval: tuple[float, float]
    pairs: int
    percent: float
    df: pd.DataFrame = field(repr=False)
    level: float = 0.95
    against: str | None = None
    kappa: float | None = None
    kappa_interval: tuple[float, float] | None = None
    accuracy: float | None = None
    accuracy_interval: tuple[float, float] | None = None
    compared: int = 0

    @property
    def flagged(self) -> list[str]:
        """The raters flagged, and why, as ``df["flagged"]`` says."""
        return [str(r) for r in self.df.index[self.df["flagged"] != ""]]

    def _repr_html_(self) -> str:
        return agreement_html(self)


def agreement(
    source: History | pd.DataFrame,
    experiment: str | None = None,
    tag: str | None = None,
    raters: str | Sequence[str] | None = None,
    against: str | None = None,
    *,
    level: float = 0.95,
    rounds: int = 1000,
    seed: int | None = 0,
    min_gold_accuracy: float = 0.8,
    min_agreement: float = 0.5,
) -> Agreement:
    """How well raters agree, how they do on gold pairs, and (``against``) how a judge or a
    scorer agrees with them.

    Args:
        source: a :class:`genlab.History` (its votes, gold ones included), or a ratings
            DataFrame (``rater``, ``answer``, ``left_task``, ``right_task``; ``gold`` and
            ``rated_at`` when known).
        experiment: only votes between results of this experiment.
        tag: only votes recorded with this tag.
        raters: whose votes: names (a list, or one name); ``"judges"`` for every judge; by
            default every person (raters not named ``judge:...``).
        against: ``"judge:NAME@VERSION"`` compares that judge with the raters; the name of a
            scorer (``"sharpness"``) compares its scores with the raters' decisive votes
            (needs a History, which keeps the scores).
        level: the intervals' coverage.
        rounds: bootstrap resamples of the pairs.
        seed: makes the intervals repeatable (None: fresh each time).
        min_gold_accuracy, min_agreement: below these a rater is flagged (with at least 3
            gold votes, or 5 shared pairs).

    Returns:
        An :class:`Agreement`. Its ``df`` has one row per rater: ``votes`` (real pairs),
        ``shared_pairs`` (of those, pairs another rater voted on too), ``agreement`` (the
        share of the other raters' votes on those pairs that match this rater's),
        ``gold_votes``, ``gold_accuracy``, ``seconds_per_vote`` (median time between two
        votes, pauses over 10 minutes left out) and ``flagged`` (why, or "").

    Raises:
        ValueError: an experiment the history lacks; a scorer with no scores on the pairs;
            ``against`` a scorer with a DataFrame source.

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"rater": ["ana", "ben", "ana", "ben"],
        ...                       "left_task": ["t1", "t2", "t3", "t3"],
        ...                       "right_task": ["t2", "t1", "t4", "t4"],
        ...                       "answer": ["left", "left", "left", "left"]})
        >>> found = agreement(votes, rounds=50)  # ben's t2-over-t1 disagrees with ana
        >>> found.pairs, found.percent
        (2, 0.5)

        With a history::

            genlab.agreement(history, tag="kites")                  # raters' agreement
            genlab.agreement(history, against="judge:sharper@1")    # a judge against people
            genlab.agreement(history, against="sharpness")          # a score against people
    """
    votes = _read(source, experiment, tag)
    every = votes
    votes = _chosen(votes, raters)
    real = votes[votes["gold"].isna()]
    gold = votes[votes["gold"].notna()]
    rng = np.random.default_rng(seed)
    keys, categories, last = _oriented(real)
    table = _pair_table(keys[last], categories[last])
    alpha, percent, interval, pairs = _alpha_with_interval(table, level, rounds, rng)
    df = _per_rater(real, gold, keys, categories, last, table, min_gold_accuracy,
                    min_agreement, votes)
    found = Agreement(alpha=alpha, interval=interval, pairs=pairs, percent=percent, df=df,
                      level=level)
    if against is None:
        return found
    if against.startswith(JUDGE_PREFIX):
        return _against_judge(found, every, real, against, level, rounds, rng)
    if not isinstance(source, History):
        raise ValueError(f"against={against!r}: a scorer's values are kept in a History; "
                         "pass the history")
    return _against_scorer(found, source, real, against, level, rounds, rng)


# --- reading the votes ------------------------------------------------------------------------


def _read(source: History | pd.DataFrame, experiment: str | None, tag: str | None
          ) -> pd.DataFrame:
    if isinstance(source, History):
        votes = source.rating_frame(_COLUMNS, gold=None, **({"tag": tag} if tag else {}))
    else:
        votes = source.copy()
        if tag is not None and "tag" in votes.columns:
            votes = votes[votes["tag"] == tag]
    for name in _COLUMNS:
        if name not in votes.columns:
            votes[name] = None if name != "rated_at" else pd.NaT
    votes = votes.reset_index(drop=True)
    if experiment is not None:
        if not isinstance(source, History):
            raise ValueError("experiment= needs the History that keeps the experiment")
        tasks = {str(c["task_id"]) for c in source.experiment_cells(experiment)
                 if c.get("task_id")}
        if not tasks:
            raise ValueError(f"the history has no experiment {experiment!r} with results")
        real = votes["left_task"].where(votes["gold"] != "right", votes["right_task"])
        both = votes["left_task"].isin(tasks) & votes["right_task"].isin(tasks)
        votes = votes[both | (votes["gold"].notna() & real.isin(tasks))]
    return votes.reset_index(drop=True)


def is_judge(rater: pd.Series) -> pd.Series:
    """Which of ``rater`` (a Series of names) are judges (``judge:...``).

    Example:
        >>> is_judge(pd.Series(["ana", "judge:sharper@1", None])).tolist()
        [False, True, False]
    """
    return rater.fillna("").astype(str).str.startswith(JUDGE_PREFIX)


def _chosen(votes: pd.DataFrame, raters: str | Sequence[str] | None) -> pd.DataFrame:
    judged = is_judge(votes["rater"])
    if raters is None:
        return votes[~judged]
    if raters == "judges":
        return votes[judged]
    names = [raters] if isinstance(raters, str) else list(raters)
    return votes[votes["rater"].isin(names)]


def _oriented(votes: pd.DataFrame) -> tuple[NDArray[np.intp], NDArray[np.int8],
                                            NDArray[np.bool_]]:
    """Each vote's pair (a code), its answer by task (0: the first task in sorted order won,
    1: the second, 2: neither), and which votes are each rater's last on their pair."""
    left = votes["left_task"].astype(str).to_numpy()
    right = votes["right_task"].astype(str).to_numpy()
    first = np.where(left <= right, left, right)
    second = np.where(left <= right, right, left)
    keys, _ = pd.factorize(pd.Series(first, dtype=object) + "\x1f" + second)
    answer = votes["answer"].astype(str).to_numpy()
    won_left = answer == "left"
    won = won_left | (answer == "right")
    first_won = np.where(left <= right, won_left, ~won_left)
    categories = np.where(won, np.where(first_won, 0, 1), 2).astype(np.int8)
    order = np.argsort(pd.to_datetime(votes["rated_at"], utc=True).to_numpy(
        dtype="datetime64[ns]").astype(np.int64), kind="stable") if len(votes) else np.arange(0)
    raters = pd.factorize(votes["rater"].fillna("").astype(str))[0]
    last = np.zeros(len(votes), dtype=bool)
    seen = pd.Series(keys[order] * (raters.max(initial=0) + 1) + raters[order])
    last[order[~seen.duplicated(keep="last").to_numpy()]] = True
    return keys.astype(np.intp), categories, last


def _pair_table(keys: NDArray[np.intp], categories: NDArray[np.int8]) -> NDArray[np.float64]:
    """Per pair: how many votes said each of the three answers (pairs x 3)."""
    size = int(keys.max()) + 1 if len(keys) else 0
    counts = np.bincount(keys * 3 + categories, minlength=size * 3)
    return counts.reshape(size, 3).astype(np.float64)


# --- Krippendorff's alpha ---------------------------------------------------------------------


def _alpha_stats(table: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per pair voted by two or more: its votes m, its coincidences within an answer
    (sum of n_c (n_c - 1) / (m - 1)), its counts per answer, and its agreeing and all
    pairs of votes (for the observed agreement)."""
    m = table.sum(axis=1)
    table, m = table[m >= 2], m[m >= 2]
    same = (table * (table - 1)).sum(axis=1)
    return np.column_stack([m, same / (m - 1), table, same, m * (m - 1)])


def _alpha_of(stats: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Alpha and observed agreement from summed stats (rows: one sum each)."""
    n, diagonal, counts = stats[:, 0], stats[:, 1], stats[:, 2:5]
    expected = n * n - (counts * counts).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (n - 1) * (n - diagonal) / expected
        percent = stats[:, 5] / stats[:, 6]
    return np.where(expected > 0, alpha, np.nan), percent


def _resampled(stats: NDArray[np.float64], rounds: int, rng: np.random.Generator
               ) -> NDArray[np.float64]:
    """``rounds`` sums of ``stats`` over pairs drawn with replacement (rounds x columns).

    Pairs with the same stats are interchangeable, so how many of each kind a resample draws
    is one multinomial draw: the same distribution as drawing pairs one by one, at a cost
    that grows with the kinds of pairs (a handful) rather than with the pairs.
    """
    if not len(stats):
        return np.zeros((rounds, stats.shape[1]))
    kinds, counts = np.unique(stats, axis=0, return_counts=True)
    drawn = rng.multinomial(len(stats), counts / counts.sum(), size=rounds)
    out: NDArray[np.float64] = drawn.astype(np.float64) @ kinds
    return out


def _interval(values: NDArray[np.float64], level: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if not len(values):
        return (float("nan"), float("nan"))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def _alpha_with_interval(table: NDArray[np.float64], level: float, rounds: int,
                         rng: np.random.Generator) -> tuple[float, float, tuple[float, float],
                                                            int]:
    stats = _alpha_stats(table)
    if not len(stats):
        nan = float("nan")
        return nan, nan, (nan, nan), 0
    alpha, percent = _alpha_of(stats.sum(axis=0, keepdims=True))
    boot, _ = _alpha_of(_resampled(stats, rounds, rng))
    return float(alpha[0]), float(percent[0]), _interval(boot, level), len(stats)


# --- each rater -------------------------------------------------------------------------------


def _per_rater(
    real: pd.DataFrame, gold: pd.DataFrame, keys: NDArray[np.intp],
    categories: NDArray[np.int8], last: NDArray[np.bool_], table: NDArray[np.float64],
    min_gold: float, min_agreement: float, every: pd.DataFrame,
) -> pd.DataFrame:
    names = sorted({str(r) for r in every["rater"].dropna()})
    rater = real["rater"].fillna("").astype(str).to_numpy()
    m = table.sum(axis=1) if len(table) else np.zeros(0)
    rows = []
    correct = (gold["answer"] == gold["gold"]).to_numpy(dtype=bool)
    gold_rater = gold["rater"].astype(str).to_numpy()
    for name in names:
        mine = (rater == name) & last
        k, c = keys[mine], categories[mine]
        shared = m[k] >= 2 if len(k) else np.zeros(0, dtype=bool)
        agree = ((table[k[shared], c[shared]] - 1) / (m[k[shared]] - 1)) if shared.any() \
            else np.zeros(0)
        of_gold = gold_rater == name
        golds = int(of_gold.sum())
        accuracy = float(correct[of_gold].mean()) if golds else float("nan")
        agreement_ = float(agree.mean()) if len(agree) else float("nan")
        reasons = []
        if golds >= _MIN_GOLD and accuracy < min_gold:
            reasons.append(f"gold accuracy {accuracy:.2f}")
        if len(agree) >= _MIN_SHARED and agreement_ < min_agreement:
            reasons.append(f"agrees with others {agreement_:.2f}")
        rows.append({
            "votes": int(((rater == name)).sum()),
            "shared_pairs": int(shared.sum()),
            "agreement": agreement_,
            "gold_votes": golds,
            "gold_accuracy": accuracy,
            "seconds_per_vote": _pace(every[every["rater"] == name]["rated_at"]),
            "flagged": "; ".join(reasons),
        })
    frame = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS),
                         index=pd.Index(names, name="rater", dtype=object))
    return frame.astype({"votes": "int64", "shared_pairs": "int64", "gold_votes": "int64",
                         "agreement": "float64", "gold_accuracy": "float64",
                         "seconds_per_vote": "float64", "flagged": "object"})


def _pace(moments: pd.Series) -> float:
    times = pd.to_datetime(moments, utc=True).dropna().sort_values()
    if len(times) < 2:
        return float("nan")
    gaps = times.diff().dt.total_seconds().to_numpy()[1:]
    gaps = gaps[gaps <= _BREAK]
    return float(np.median(gaps)) if len(gaps) else float("nan")


# --- judges and scorers -----------------------------------------------------------------------


def _against_judge(found: Agreement, every: pd.DataFrame, people: pd.DataFrame, judge: str,
                   level: float, rounds: int, rng: np.random.Generator) -> Agreement:
    theirs = every[(every["rater"] == judge) & every["gold"].isna()]
    if theirs.empty:
        judges = sorted({str(r) for r in every["rater"].dropna() if str(r).startswith(
            JUDGE_PREFIX)})
        raise ValueError(f"no votes by {judge!r} (judges: {', '.join(judges) or 'none'})")
    both = pd.concat([people, theirs], ignore_index=True)
    keys, categories, last = _oriented(both)
    is_person = np.arange(len(both)) < len(people)
    judged = np.full(int(keys.max()) + 1, -1, dtype=np.int64)
    pick = ~is_person & last
    judged[keys[pick]] = categories[pick]
    use = is_person & last & (judged[keys] >= 0)
    k, person, machine = keys[use], categories[use], judged[keys[use]]
    pairs, pair_codes = np.unique(k, return_inverse=True)
    # Per pair: its 3x3 table of (person, judge) answers, then decisive votes and hits.
    cells = np.zeros((len(pairs), 11))
    np.add.at(cells, (pair_codes, person * 3 + machine), 1)
    decisive = person < 2
    np.add.at(cells[:, 9], pair_codes[decisive], 1)
    np.add.at(cells[:, 10], pair_codes[decisive & (person == machine)], 1)
    kappa = _kappa(cells[:, :9].sum(axis=0, keepdims=True))
    boot = _resampled(cells, rounds, rng)
    return _with(found, judge, level, kappa=float(kappa[0]),
                 kappa_interval=_interval(_kappa(boot[:, :9]), level),
                 accuracy=_share(cells.sum(axis=0, keepdims=True))[0],
                 accuracy_interval=_interval(_share(boot), level), compared=int(use.sum()))


def _kappa(tables: NDArray[np.float64]) -> NDArray[np.float64]:
    tables = tables.reshape(-1, 3, 3)
    n = tables.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.trace(tables, axis1=1, axis2=2) / n
        chance = (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1) / (n * n)
        return np.asarray((observed - chance) / (1 - chance), dtype=np.float64)


def _share(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(sums[:, -1] / sums[:, -2], dtype=np.float64)


def _against_scorer(found: Agreement, history: History, people: pd.DataFrame, scorer: str,
                    level: float, rounds: int, rng: np.random.Generator) -> Agreement:
    decisive = people[people["answer"].isin(["left", "right"])].reset_index(drop=True)
    tasks = sorted(set(decisive["left_task"].astype(str)) | set(decisive["right_task"]))
    scores = history.scores(tasks)
    value = {t: s.get(scorer) for t, s in scores.items()}
    left = decisive["left_task"].map(value).astype("float64").to_numpy()
    right = decisive["right_task"].map(value).astype("float64").to_numpy()
    usable = np.isfinite(left) & np.isfinite(right) & (left != right)
    if not usable.any():
        known = sorted({name for s in scores.values() for name in s})
        raise ValueError(f"no pair voted on has two different {scorer!r} scores (scorers "
                         f"on these results: {', '.join(known) or 'none'})")
    hit = (left > right) == (decisive["answer"] == "left").to_numpy()
    keys, _, _ = _oriented(decisive)
    pairs, codes = np.unique(keys[usable], return_inverse=True)
    cells = np.zeros((len(pairs), 2))
    np.add.at(cells[:, 0], codes, 1)
    np.add.at(cells[:, 1], codes, hit[usable].astype(np.float64))
    boot = _resampled(cells, rounds, rng)
    return _with(found, scorer, level, accuracy=_share(cells.sum(axis=0, keepdims=True))[0],
                 accuracy_interval=_interval(_share(boot), level), compared=int(usable.sum()))


def _with(found: Agreement, against: str, level: float, **what: Any) -> Agreement:
    accuracy = what.pop("accuracy")
    return Agreement(alpha=found.alpha, interval=found.interval, pairs=found.pairs,
                     percent=found.percent, df=found.df, level=level, against=against,
                     accuracy=float(accuracy), **what)


# --- drawn ------------------------------------------------------------------------------------

_CSS = f"""
.genlab-agreement {{ color: {TEXT}; max-width: 100%; overflow-x: auto; }}
.genlab-agreement table {{ border-collapse: collapse; margin: 4px 0; }}
.genlab-agreement th, .genlab-agreement td {{ border-bottom: 1px solid {BORDER};
  padding: 3px 8px; text-align: right; white-space: nowrap; }}
.genlab-agreement th {{ background: {SHADE}; font-weight: 600; }}
.genlab-agreement .name {{ text-align: left; }}
.genlab-agreement .flag {{ color: {ERROR}; text-align: left; white-space: normal; }}
.genlab-agreement .note {{ color: {MUTED}; font-size: 0.85em; }}
"""


def _number(value: Any, form: str) -> str:
    return "–" if value is None or value != value else format(value, form)


def agreement_html(found: Agreement) -> str:
    """An :class:`Agreement` as a small HTML table (names escaped, theme colours).

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"rater": ["<i>a</i>", "b"], "left_task": ["t1", "t1"],
        ...     "right_task": ["t2", "t2"], "answer": ["left", "left"]})
        >>> page = agreement_html(agreement(votes, rounds=10))
        >>> "&lt;i&gt;a&lt;/i&gt;" in page, "<i>" in page
        (True, False)
    """
    rows = []
    for name, row in found.df.iterrows():
        rows.append(
            f'<tr><td class="name">{escape(name)}</td><td>{row["votes"]}</td>'
            f'<td>{row["shared_pairs"]}</td><td>{_number(row["agreement"], ".0%")}</td>'
            f'<td>{row["gold_votes"]}</td><td>{_number(row["gold_accuracy"], ".0%")}</td>'
            f'<td>{_number(row["seconds_per_vote"], ".1f")}</td>'
            f'<td class="flag">{escape(row["flagged"])}</td></tr>')
    low, high = found.interval
    said = (f"Krippendorff's alpha (nominal) {_number(found.alpha, '.2f')} "
            f"({found.level:.0%} interval {_number(low, '.2f')} to {_number(high, '.2f')}) "
            f"over {found.pairs:,} pair{'' if found.pairs == 1 else 's'} voted by two or more "
            f"raters; observed agreement {_number(found.percent, '.0%')}.")
    if found.against is not None:
        acc_low, acc_high = found.accuracy_interval or (float("nan"), float("nan"))
        said += f" Against {found.against}: "
        if found.kappa is not None:
            k_low, k_high = found.kappa_interval or (float("nan"), float("nan"))
            said += (f"Cohen's kappa {_number(found.kappa, '.2f')} "
                     f"({_number(k_low, '.2f')} to {_number(k_high, '.2f')}), ")
        said += (f"agrees with {_number(found.accuracy, '.0%')} of people's decisive votes "
                 f"({_number(acc_low, '.0%')} to {_number(acc_high, '.0%')}; "
                 f"{found.compared:,} compared).")
    empty = "" if rows else "<tr><td colspan='8'>No votes yet.</td></tr>"
    return (
        f'<div class="genlab-agreement"><style>{_CSS}</style><table><tr>'
        '<th class="name">rater</th><th>votes</th><th>shared pairs</th>'
        "<th>agrees with others</th><th>gold votes</th><th>gold accuracy</th>"
        f"<th>s per vote</th><th class='name'>flagged</th></tr>{''.join(rows)}{empty}</table>"
        f'<div class="note">{escape(said)}</div></div>'
    )
