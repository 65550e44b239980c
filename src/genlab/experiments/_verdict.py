"""A verdict on two prompt versions of an experiment: better, worse or undecided, with how
sure, from people's votes or from a scorer, cell against cell.

Pairs are the experiment's own: the baseline's and the candidate's cells of one model, one set
of variables and one seed. Each such pair is one observation, however many votes it has, so
a rater who votes on the same pair five times does not count five times.

``metric="votes"`` (people's blind votes; ``genlab.rate(exp)``): a pair goes to the version its
votes prefer (the wins of each side among that pair's votes; "tie" and "both bad" prefer
neither); a pair whose votes are even counts for neither. The effect is the candidate's share
of the pairs that went to a side, with an exact binomial (Clopper-Pearson) interval: a sign
test on paired cells.

``metric=`` a scorer's name (``"sharpness"``): the effect is the median over pairs of the
candidate's score minus the baseline's, with its distribution-free interval from the order
statistics of those differences (the interval the sign test gives; exact, whatever shape the
differences have, ties and zeros included). Higher is better, except for the scorers of
:data:`genlab.media.scores.LOWER_IS_BETTER` (``frozen``, ``black``).

The outcome is ``"better"`` when the interval (at ``1 - alpha``) lies wholly on the
candidate's side of no difference, ``"worse"`` when wholly on the baseline's, else
``"undecided"``: on two versions that are the same, each is said at most ``alpha / 2`` of
the time (benchmarks/bench_gate.py measures it).

Example:
    >>> cells = [{"prompt_name": "kite", "prompt_version": v, "model": "image-b",
    ...           "variables": {"s": s}, "seed": 1, "task_id": f"t{v}{s}"}
    ...          for v in (1, 2) for s in range(8)]
    >>> votes = [(f"t2{s}", f"t1{s}", "left") for s in range(8)]   # people prefer kite@2
    >>> found = verdict_of(cells, ("kite", 1), ("kite", 2), votes=votes)
    >>> found.outcome, found.n, round(found.effect, 2), round(found.interval[0], 2)
    ('better', 8, 1.0, 0.63)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from genlab.display import ERROR, MUTED, NEUTRAL, SUCCESS, TEXT, badge, escape
from genlab.experiments._prompt import prompt
from genlab.history import JUDGE_PREFIX, History
from genlab.media.scores import LOWER_IS_BETTER

Outcome = Literal["better", "worse", "undecided"]
VOTES = "votes"
"""The metric of people's votes (the default)."""

_WIN = {"left": 1, "right": -1, "tie": 0, "both bad": 0}
_COLOURS = {"better": SUCCESS, "worse": ERROR, "undecided": NEUTRAL}


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether ``candidate`` is better than ``baseline``, and how sure (see the module).

    Attributes:
        outcome: ``"better"``, ``"worse"`` or ``"undecided"``.
        effect: for votes, the candidate's share of the pairs that went to a side (0.5: no
            difference); for a scorer, the median of candidate minus baseline (0: none).
            NaN when there is nothing to go on.
        interval: the effect's interval at ``1 - alpha``.
        n: the pairs of cells the effect rests on (for votes, those that went to a side).
        metric, baseline, candidate, alpha: what was asked.
        null: the effect of no difference (0.5 or 0.0).
        test: the test, in words.
        counts: for votes, ``candidate`` and ``baseline`` (pairs each won), ``even`` (pairs
            with votes that went to neither) and ``votes``; for a scorer, ``pairs`` and
            ``higher`` (the candidate's scores above the baseline's).

    Example:
        >>> cells = [{"task_id": f"{m}{v}", "model": m, "prompt_name": "kite",
        ...           "prompt_version": v} for m in "abcdef" for v in (1, 2)]
        >>> sharp = {f"{m}{v}": {"sharpness": float(v)} for m in "abcdef" for v in (1, 2)}
        >>> found = verdict_of(cells, ("kite", 1), ("kite", 2), metric="sharpness",
        ...                    scores=sharp)
        >>> found.outcome, found.effect, found.n
        ('better', 1.0, 6)
        >>> print(found)
        kite@2 against kite@1: better: median sharpness change +1 over 6 paired cells (95 % interval +1 to +1)
    """  # noqa: E501

    outcome: Outcome
    effect: float
    interval: tuple[float, float]
    n: int
    metric: str
    baseline: str
    candidate: str
    alpha: float
    null: float
    test: str
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def sentence(self) -> str:
        """The verdict in one line, for people (the gate prints it)."""
        level = f"{100 * (1 - self.alpha):g} %"
        low, high = self.interval
        if self.metric == VOTES:
            c = self.counts
            if not self.n:
                said = (f"no paired cells with a decisive vote yet ({c.get('votes', 0)} vote(s)"
                        f" between the two versions, {c.get('even', 0)} pair(s) even)")
            else:
                said = (f"people preferred {self.candidate} in {c.get('candidate', 0)} of "
                        f"{self.n} paired cells ({100 * self.effect:.0f} %, {level} interval "
                        f"{100 * low:.0f}-{100 * high:.0f} %; {c.get('even', 0)} even, "
                        f"{c.get('votes', 0)} vote(s))")
        elif not self.n:
            said = f"no paired cells with both {self.metric} scores"
        else:
            said = (f"median {self.metric} change {self.effect:+.4g} over {self.n} paired "
                    f"cells ({level} interval {_bound(low)} to {_bound(high)})")
        return f"{self.candidate} against {self.baseline}: {self.outcome}: {said}"

    def __str__(self) -> str:
        return self.sentence

    def _repr_html_(self) -> str:
        low, high = self.interval
        shown = (f"{100 * self.effect:.0f} %" if self.metric == VOTES and self.n
                 else "–" if not self.n else f"{self.effect:+.4g}")
        span = (f"{100 * low:.0f}–{100 * high:.0f} %" if self.metric == VOTES
                else f"{_bound(low)} to {_bound(high)}")
        what = ("candidate's share of decisive paired cells" if self.metric == VOTES
                else f"median change in {self.metric}")
        rows = [("effect", f"{shown} <span style='color:{MUTED}'>({escape(what)})</span>"),
                (f"{100 * (1 - self.alpha):g} % interval", escape(span)),
                ("paired cells", str(self.n)),
                ("test", escape(self.test))]
        body = "".join(f"<tr><th style='text-align:left;padding:2px 12px 2px 0;"
                       f"font-weight:normal;color:{MUTED}'>{k}</th>"
                       f"<td style='padding:2px 0'>{v}</td></tr>" for k, v in rows)
        return (f"<div class='genlab-verdict' style='color:{TEXT}'>"
                f"<div><b>{escape(self.candidate)}</b> against <b>{escape(self.baseline)}</b>"
                f" ({escape(self.metric)}): {badge(self.outcome, _COLOURS[self.outcome])}</div>"
                f"<table style='border-collapse:collapse;margin-top:4px'>{body}</table>"
                f"<div style='color:{MUTED};font-size:90%'>{escape(self.sentence)}</div></div>")


def _bound(value: float) -> str:
    return "–∞" if value == -math.inf else "∞" if value == math.inf else f"{value:+.4g}"


Ref = tuple[str, int]


def verdict_of(
    cells: Iterable[Mapping[str, Any]],
    baseline: Ref,
    candidate: Ref,
    *,
    metric: str = VOTES,
    alpha: float = 0.05,
    votes: Iterable[tuple[str, str, str]] = (),
    scores: Mapping[str, Mapping[str, float | None]] | None = None,
    higher_is_better: bool | None = None,
) -> Verdict:
    """The verdict from an experiment's cells (``History.experiment_cells``) and either the
    votes between their tasks (``(left task, right task, answer)``) or their scores
    (task -> scorer -> value); see the module.

    Raises:
        ValueError: ``alpha`` not between 0 and 1.

    Example:
        >>> cells = [{"task_id": f"{m}{v}", "model": m, "prompt_name": "kite",
        ...           "prompt_version": v} for m in "abcdef" for v in (1, 2)]
        >>> votes = [(f"{m}2", f"{m}1", "left") for m in "abcdef"]  # version 2 won each
        >>> found = verdict_of(cells, ("kite", 1), ("kite", 2), votes=votes)
        >>> found.outcome, found.counts["candidate"], [round(x, 2) for x in found.interval]
        ('better', 6, [0.54, 1.0])
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    pairs = _pairs(cells, baseline, candidate)
    names = f"{baseline[0]}@{baseline[1]}", f"{candidate[0]}@{candidate[1]}"
    if metric == VOTES:
        return _by_votes(pairs, votes, alpha, names)
    lower = metric in LOWER_IS_BETTER if higher_is_better is None else not higher_is_better
    return _by_scores(pairs, scores or {}, metric, alpha, names, lower)


def _pairs(cells: Iterable[Mapping[str, Any]], baseline: Ref, candidate: Ref
           ) -> list[tuple[str, str]]:
    """(baseline task, candidate task) of each model, variables and seed both have."""
    sides: dict[str, dict[Ref, str]] = {}
    for cell in cells:
        task = cell.get("task_id")
        if not task:
            continue
        place = json.dumps([cell.get("model"), cell.get("variables") or {}, cell.get("seed")],
                           sort_keys=True, default=str)
        ref = (str(cell.get("prompt_name")), int(cell.get("prompt_version") or 0))
        sides.setdefault(place, {})[ref] = str(task)
    return [(found[baseline], found[candidate]) for found in sides.values()
            if baseline in found and candidate in found]


def _by_votes(pairs: Sequence[tuple[str, str]], votes: Iterable[tuple[str, str, str]],
              alpha: float, names: tuple[str, str]) -> Verdict:
    from scipy.stats import binomtest

    net = {frozenset(pair): 0 for pair in pairs}
    candidates = {c for _, c in pairs}
    voted: set[frozenset[str]] = set()
    counted = 0
    for left, right, answer in votes:
        key = frozenset((str(left), str(right)))
        if key not in net:
            continue
        counted += 1
        voted.add(key)
        win = _WIN.get(str(answer), 0)
        net[key] += win if str(left) in candidates else -win
    won = sum(1 for v in net.values() if v > 0)
    lost = sum(1 for v in net.values() if v < 0)
    n = won + lost
    if n:
        found = binomtest(won, n).proportion_ci(confidence_level=1 - alpha, method="exact")
        low, high, effect = float(found.low), float(found.high), won / n
    else:
        low, high, effect = 0.0, 1.0, math.nan
    outcome: Outcome = "better" if low > 0.5 else "worse" if high < 0.5 else "undecided"
    return Verdict(outcome, effect, (low, high), n, VOTES, names[0], names[1], alpha, 0.5,
                   "sign test on paired cells (exact binomial, Clopper-Pearson interval)",
                   {"candidate": won, "baseline": lost,
                    "even": len(voted) - n, "votes": counted})


def _by_scores(pairs: Sequence[tuple[str, str]],
               scores: Mapping[str, Mapping[str, float | None]], metric: str, alpha: float,
               names: tuple[str, str], lower_is_better: bool) -> Verdict:
    differences = []
    for base, cand in pairs:
        a, b = scores.get(base, {}).get(metric), scores.get(cand, {}).get(metric)
        if a is None or b is None or math.isnan(a) or math.isnan(b):
            continue
        differences.append(float(b) - float(a))
    differences.sort()
    n = len(differences)
    low, high = median_interval(differences, alpha)
    effect = _median(differences) if n else math.nan
    up, down = ("worse", "better") if lower_is_better else ("better", "worse")
    outcome: Outcome = up if low > 0 else down if high < 0 else "undecided"  # type: ignore[assignment]
    direction = "lower" if lower_is_better else "higher"
    return Verdict(outcome, effect, (low, high), n, metric, names[0], names[1], alpha, 0.0,
                   f"sign test on paired cells' {metric} differences (order-statistic "
                   f"interval of the median; {direction} is better)",
                   {"pairs": n, "higher": sum(1 for d in differences if d > 0)})


def median_interval(values: Sequence[float], alpha: float) -> tuple[float, float]:
    """The distribution-free interval of the median of sorted ``values`` at ``1 - alpha``
    or more (the order statistics the sign test inverts); unbounded when there are too few.

    Example:
        >>> median_interval([float(v) for v in range(1, 11)], 0.05)
        (2.0, 9.0)
        >>> median_interval([1.0, 2.0, 3.0], 0.05)
        (-inf, inf)
    """
    from scipy.stats import binom

    n = len(values)
    depth = 0  # the largest k with P(Binomial(n, 1/2) <= k - 1) <= alpha / 2
    while depth + 1 <= n // 2 and binom.cdf(depth, n, 0.5) <= alpha / 2:
        depth += 1
    if depth == 0:
        return -math.inf, math.inf
    return float(values[depth - 1]), float(values[n - depth])


def _median(values: Sequence[float]) -> float:
    n = len(values)
    middle = n // 2
    return values[middle] if n % 2 else (values[middle - 1] + values[middle]) / 2


Raters = str | Sequence[str] | None


def verdict_in(
    history: History,
    experiment: str,
    baseline: str | Ref,
    candidate: str | Ref,
    *,
    metric: str = VOTES,
    alpha: float = 0.05,
    raters: Raters = None,
    higher_is_better: bool | None = None,
) -> Verdict:
    """The verdict on two prompt versions of ``experiment`` as ``history`` holds it (what
    ``exp.verdict`` and ``genlab gate`` say).

    Args:
        baseline, candidate: ``"kite@2"`` (an alias too: ``"kite@best"``), a version number
            when the experiment has one prompt (``"2"``, ``"v2"``), or ``(name, version)``.
        metric: ``"votes"`` or a scorer's name the experiment scored.
        raters: whose votes count: people's (None, the default), ``"judges"`` (every
            ``judge:...`` rater), or names (``["ana", "judge:sharper@1"]``).
        higher_is_better: for a scorer; None reads it from the scorer
            (:data:`genlab.media.scores.LOWER_IS_BETTER`).

    Raises:
        LookupError: no such experiment, or a version it does not have.
        ValueError: a metric it has no scores for, or a bad ``alpha``.

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> history.plan_cells("kites", [
        ...     {"cell": f"{m}{v}", "prompt_name": "kite", "prompt_version": v, "variables": {},
        ...      "model": m, "seed": 1, "address": f"{m}{v}"} for m in "abcdef" for v in (1, 2)])
        12
        >>> for m in "abcdef":
        ...     for v in (1, 2):
        ...         history.cell_task("kites", f"{m}{v}", f"task_{m}{v}")
        ...         history.save_scores(f"task_{m}{v}", {"sharpness": 10.0 + v})
        >>> found = verdict_in(history, "kites", "kite@1", "kite@2", metric="sharpness")
        >>> found.outcome, found.n
        ('better', 6)
        >>> history.close()
    """
    cells = history.experiment_cells(experiment)
    if not cells:
        known = ", ".join(history.experiments()) or "none"
        raise LookupError(f"no experiment {experiment!r} in {history.location} (experiments: "
                          f"{known})")
    base, cand = resolve_version(history, cells, baseline), resolve_version(history, cells,
                                                                           candidate)
    tasks = [str(c["task_id"]) for c in cells if c.get("task_id")]
    if metric == VOTES:
        frame = history.rating_frame(["rater", "left_task", "right_task", "answer"],
                                     tasks=tasks)
        who = frame["rater"].fillna("").astype(str)
        if raters is None:
            keep = ~who.str.startswith(JUDGE_PREFIX)
        elif raters == "judges":
            keep = who.str.startswith(JUDGE_PREFIX)
        else:
            keep = who.isin([raters] if isinstance(raters, str) else list(raters))
        frame = frame[keep]
        votes = zip(frame["left_task"].astype(str), frame["right_task"].astype(str),
                    frame["answer"].astype(str), strict=True)
        return verdict_of(cells, base, cand, metric=VOTES, alpha=alpha, votes=votes)
    scores = history.scores(tasks)
    if not any(metric in found for found in scores.values()):
        scored = sorted({s for found in scores.values() for s in found})
        raise ValueError(f"experiment {experiment!r} has no {metric!r} scores; the metric is "
                         f"'votes' or one of its scorers: {', '.join(scored) or 'none'}")
    return verdict_of(cells, base, cand, metric=metric, alpha=alpha, scores=scores,
                      higher_is_better=higher_is_better)


def resolve_version(history: History, cells: Sequence[Mapping[str, Any]], ref: str | Ref
                    ) -> Ref:
    """``ref`` as (prompt name, version) among ``cells``' versions (see :func:`verdict_in`).

    Raises:
        LookupError: none of the versions, or several.

    Example:
        >>> cells = [{"prompt_name": "kite", "prompt_version": 1},
        ...          {"prompt_name": "kite", "prompt_version": 2}]
        >>> resolve_version(None, cells, "kite@2"), resolve_version(None, cells, "v1")
        (('kite', 2), ('kite', 1))
    """
    have = sorted({(str(c["prompt_name"]), int(c["prompt_version"])) for c in cells})
    if isinstance(ref, tuple):
        wanted: list[Ref] = [ref]
    else:
        text = str(ref).strip()
        name, _, at = text.rpartition("@")
        at = at[1:] if at[:1] in "vV" and at[1:].isdigit() else at
        names = [name] if name else list(dict.fromkeys(n for n, _ in have))
        wanted = []
        for each in names:
            if at.isdigit():
                wanted.append((each, int(at)))
                continue
            try:
                found = prompt(f"{each}@{at}", history=history)
            except LookupError:
                continue
            wanted.append((found.name, found.version))
    found_refs = [w for w in wanted if w in have]
    if len(found_refs) != 1:
        shown = ", ".join(f"{n}@{v}" for n, v in have)
        why = "matches several" if found_refs else "matches none"
        raise LookupError(f"{ref!r} {why} of this experiment's versions ({shown})")
    return found_refs[0]
