"""Which pair to show next: the one a vote would teach the most about, every competitor early.

The rule, in order:

1. **Everyone early.** While some competitor that still has a pair to show has not been in a
   vote yet, only pairs with such a competitor are considered (two unseen ones first).
2. **The least certain outcome.** Among the pairs of competitors left, the one whose vote the
   current fit is least sure of: the chance of either outcome, p(1 - p), times the variance of
   the two strengths' difference under the fit's own covariance
   (:meth:`genlab.report.Strengths.outcome_uncertainty`). Evenly matched pairs whose order is
   still unsettled come first; a pair already voted on many times, or one far apart, waits.
3. **Spread the prompts.** Among that pair's results, the prompt voted on least so far; then
   chance (seeded).

A vote's outcome is never random in this sense, but it is uncertain to the fit: asking where
the fit is unsure is what active ranking does (it needs far fewer votes than random pairs
for the same confidence in the order).

Example:
    >>> import numpy as np
    >>> chooser = Chooser(4, first=np.array([0, 2]), second=np.array([1, 3]),
    ...                   prompts=np.array([0, 0]), rng=np.random.default_rng(0))
    >>> wins = np.zeros((4, 4)); wins[0, 1], wins[1, 0], wins[2, 3] = 20, 18, 1
    >>> int(chooser.next(wins, np.zeros((4, 4)), np.array([True, True])))  # 2 v 3: one vote
    1
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from genlab.report import strengths


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
        teach = strengths(wins, ties).outcome_uncertainty()[a, b]  # 2.
        used = (prompt_votes[self.prompts[where]] if prompt_votes is not None
                else np.zeros(len(where)))
        chance = self.rng.random(len(where))
        # Scores within a part in a million of the best count as equal; then 3.
        order = np.lexsort((chance, used, -np.round(teach / max(teach.max(), 1e-12), 6)))
        return int(where[order[0]])
