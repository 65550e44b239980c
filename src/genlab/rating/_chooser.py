"""Which pair to show next: the one whose vote narrows the widest interval, every competitor
early.

A leaderboard is settled when every competitor's interval is narrow; the widest one decides
when that is. So the rule, in order:

1. **Everyone early.** While some competitor that still has a pair to show has not been in a
   vote yet, only pairs with such a competitor are considered (two unseen ones first).
2. **Narrow the widest interval.** Under the fit's own covariance of the strengths (centred,
   as a leaderboard shows them), the competitor whose strength is least certain is found, and
   the pair whose vote is expected to shrink that competitor's variance the most is chosen:
   one vote between ``a`` and ``b`` adds ``p (1 - p)`` of information along ``a - b`` (``p``
   the fit's chance that ``a`` wins), which lowers competitor ``i``'s variance by
   ``w v_i² / (1 + w s)`` (``v = Σ (e_a - e_b)``, ``s`` the variance of ``a - b``: a rank-one
   update). In practice: the least known competitor against an opponent of close estimated
   strength whose own strength is well known. A lopsided pair teaches little (``p (1 - p)``
   is small), and so does a pair of two competitors the votes already place.
3. **Then the most learnt overall:** the pair that lowers the variances' sum the most.
4. **Spread the prompts.** Among equal pairs, the prompt voted on least so far; then chance
   (seeded).

This is active sampling as the arenas do it (choose where the intervals are widest rather than
uniformly at random). On simulated raters with known strengths it needs about 0.8 times the
votes of uniform random pairs until every interval is within 50 points
(``benchmarks/bench_rating.py``); the best fixed design for those strengths, known in advance,
needs 0.83 times, so little more is to be had there.

Example:
    >>> import numpy as np
    >>> chooser = Chooser(4, first=np.array([0, 0, 1]), second=np.array([1, 3, 2]),
    ...                   prompts=np.array([0, 0, 0]), rng=np.random.default_rng(0))
    >>> wins = np.zeros((4, 4)); wins[0, 1], wins[1, 0], wins[1, 2], wins[2, 1] = 20, 18, 9, 9
    >>> wins[0, 3] = wins[3, 0] = 1   # 3 has two votes: its interval is the widest
    >>> int(chooser.next(wins, np.zeros((4, 4)), np.array([True, True, True])))
    1
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from genlab.report import strengths

_FOCUS = 4.0  # each variance weighs (its share of the largest) ** this: the widest lead


class Chooser:
    """Picks the next candidate pair (by index) from the votes so far.

    Args:
        competitors: how many competitors there are.
        first, second: each candidate's two competitors (codes below ``competitors``).
        prompts: each candidate's prompt (a code), to spread votes over prompts.
        rng: breaks the last ties.

    Example:
        >>> import numpy as np
        >>> chooser = Chooser(3, first=np.array([0, 0]), second=np.array([1, 2]),
        ...                   prompts=np.array([0, 0]), rng=np.random.default_rng(0))
        >>> nothing = np.zeros((3, 3))
        >>> chooser.next(nothing, nothing, np.array([False, True]))  # only the second is left
        1
        >>> chooser.next(nothing, nothing, np.array([False, False])) is None
        True
    """

    def __init__(
        self,
        competitors: int,
        first: NDArray[np.intp],
        second: NDArray[np.intp],
        prompts: NDArray[np.intp],
        rng: np.random.Generator,
    ) -> None:
        self.size = competitors
        self.first = np.asarray(first, dtype=np.intp)
        self.second = np.asarray(second, dtype=np.intp)
        self.prompts = np.asarray(prompts, dtype=np.intp)
        self.rng = rng

    def next(
        self,
        wins: NDArray[np.float64],
        ties: NDArray[np.float64],
        available: NDArray[np.bool_],
        prompt_votes: NDArray[np.float64] | None = None,
    ) -> int | None:
        """The index of the candidate to show next among ``available`` ones; None if none is.

        Args:
            wins, ties: the votes so far (:func:`genlab.report.vote_counts`).
            available: which candidates may be shown.
            prompt_votes: votes so far per prompt code (default: none).
        """
        where = np.flatnonzero(available)
        if not len(where):
            return None
        a, b = self.first[where], self.second[where]
        seen = (wins + wins.T + ties).sum(axis=1) > 0
        unseen = (~seen[a]).astype(np.int8) + (~seen[b]).astype(np.int8)
        if unseen.max() > 0:  # 1. everyone early: two unseen competitors first
            keep = unseen == unseen.max()
            where, a, b = where[keep], a[keep], b[keep]
        fitted = strengths(wins, ties)
        cov = fitted.covariance
        centred = cov - cov.mean(axis=0) - cov.mean(axis=1)[:, None] + cov.mean()
        p = 1 / (1 + np.exp(fitted.theta[b] - fitted.theta[a]))
        information = p * (1 - p)
        spread = centred[a, a] + centred[b, b] - 2 * centred[a, b]
        gain = information / (1 + information * spread)
        lowered = (centred[:, a] - centred[:, b]) ** 2  # each variance's fall, over ``gain``
        variance = np.diag(centred)
        narrows = gain * ((variance / variance.max()) ** _FOCUS @ lowered)  # 2.
        overall = gain * lowered.sum(axis=0)  # 3.
        used = (prompt_votes[self.prompts[where]] if prompt_votes is not None
                else np.zeros(len(where)))
        chance = self.rng.random(len(where))
        # Scores within a part in a million of the best count as equal; then 3 and 4.
        order = np.lexsort((chance, used, -_rounded(overall), -_rounded(narrows)))
        return int(where[order[0]])


def _rounded(score: NDArray[np.float64]) -> NDArray[np.float64]:
    """``score`` relative to its best, to a part in a million (so near-equal scores tie)."""
    rounded: NDArray[np.float64] = np.round(score / max(float(score.max()), 1e-12), 6)
    return rounded
