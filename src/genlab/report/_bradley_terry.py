"""The Bradley-Terry fit behind leaderboards and the rater: strengths from pairwise votes.

Votes are counted in a matrix: ``wins[i, j]`` is how often ``i`` was preferred to ``j`` and
``ties[i, j]`` (symmetric) how often neither was (a tie, or both bad). The strengths are the
maximum-likelihood Bradley-Terry fit of choix (``ilsr_pairwise_dense``) with a tie counted as
half a win for each side, as the public arenas count them, plus one virtual tie on every pair
that was compared: a prior that keeps a model that won every vote at a finite score (and
shrinks scores from a handful of votes toward each other) while weighing nothing next to real
votes. Only competitors connected by votes can be placed on one scale: :func:`ranked` finds
them.

Scores are on an Elo-like scale (:data:`ELO_BASE` at the mean, :data:`ELO_SCALE` points per
logit): a 400-point lead means ten-to-one odds of being preferred, as in the arenas.

Example:
    >>> import numpy as np
    >>> wins = np.array([[0, 30], [10, 0]], dtype=float)
    >>> theta = fit(wins, np.zeros((2, 2)))
    >>> [round(float(s)) for s in elo(theta)]
    [1093, 907]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.float64]

ELO_BASE = 1000.0
"""The score of a competitor of average strength."""
ELO_SCALE = 400.0 / math.log(10.0)
"""Points per logit: 400 points is ten-to-one odds, as on the arenas' leaderboards."""
PRIOR_TIES = 1.0
"""Virtual ties added to each compared pair (half a win each way)."""
PRIOR_VARIANCE = 1.0
"""The prior variance of a strength (logits²) for the fit's own covariance: what is believed
of a competitor before any vote (about ±170 points)."""

_ITERATIONS = 2000
_TOLERANCE = 1e-5  # logits, summed over competitors: a few thousandths of a point


def counts(
    left: NDArray[np.intp], right: NDArray[np.intp], outcome: NDArray[np.int8], size: int
) -> tuple[Matrix, Matrix]:
    """The ``wins`` and ``ties`` matrices of votes given as index arrays.

    ``outcome`` is 1 where the left side was preferred, -1 the right side, 0 neither.

    Example:
        >>> import numpy as np
        >>> wins, ties = counts(np.array([0, 0, 1]), np.array([1, 1, 0]),
        ...                     np.array([1, 0, 1], dtype=np.int8), 2)
        >>> wins.tolist(), ties.tolist()
        ([[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]])
    """
    winner = np.where(outcome > 0, left, right)
    loser = np.where(outcome > 0, right, left)
    decided = outcome != 0
    wins = np.bincount(
        winner[decided] * size + loser[decided], minlength=size * size
    ).astype(np.float64).reshape(size, size)
    tied = ~decided
    ties = np.bincount(
        left[tied] * size + right[tied], minlength=size * size
    ).astype(np.float64).reshape(size, size)
    return wins, ties + ties.T


def ranked(wins: Matrix, ties: Matrix) -> NDArray[np.bool_]:
    """The competitors that votes connect into one ranking: the largest group of competitors
    linked by comparisons (by votes, when two groups are as large); none without votes.

    Example:
        >>> import numpy as np
        >>> wins = np.zeros((4, 4)); wins[0, 1] = wins[2, 3] = wins[3, 2] = 1
        >>> ranked(wins, np.zeros((4, 4))).tolist()
        [False, False, True, True]
    """
    played = (wins + wins.T + ties) > 0
    size = len(played)
    if not played.any():
        return np.zeros(size, dtype=bool)
    labels = _groups(played)
    votes = (wins + wins.T + ties).sum(axis=1)
    best, best_key = -1, (-1, -1.0)
    for label in np.unique(labels):
        members = labels == label
        if not played[members].any():
            continue  # a competitor without votes is a group of its own, never ranked
        key = (int(members.sum()), float(votes[members].sum()))
        if key > best_key:
            best, best_key = int(label), key
    return np.asarray(labels == best, dtype=bool)


def _groups(linked: NDArray[np.bool_]) -> NDArray[np.intp]:
    # Connected groups by spreading each competitor's label to those it met, as long as that
    # lowers a label: as many rounds as the longest chain of votes, each a matrix operation.
    labels = np.arange(len(linked))
    while True:
        met = np.where(linked, labels[None, :], len(linked)).min(axis=1)
        lower = np.minimum(labels, met)
        if np.array_equal(lower, labels):
            return labels
        labels = lower


def _prior(wins: Matrix, ties: Matrix) -> Matrix:
    """The prior's virtual ties: :data:`PRIOR_TIES` on each pair that was compared."""
    played: Matrix = np.where((wins + wins.T + ties) > 0, PRIOR_TIES, 0.0)
    return played


def fit(
    wins: Matrix, ties: Matrix, initial: Matrix | None = None, *, prior: bool = True
) -> Matrix:
    """Bradley-Terry strengths (logits, mean zero) of competitors that :func:`ranked` connects;
    give only such competitors (index the matrices with its mask first).

    ``initial`` starts the iteration (a bootstrap starts from the full fit: fewer steps).
    ``prior=False`` when ``ties`` already hold the prior's virtual ties (the bootstrap's).
    """
    import choix

    size = len(wins)
    if size == 1:
        return np.zeros(1)
    scores = wins + (ties + (_prior(wins, ties) if prior else 0.0)) / 2
    try:
        theta = choix.ilsr_pairwise_dense(
            scores, initial_params=initial, max_iter=_ITERATIONS, tol=_TOLERANCE
        )
    except RuntimeError:  # did not settle from there: start afresh, which always converges
        theta = choix.ilsr_pairwise_dense(
            scores, max_iter=_ITERATIONS * 5, tol=_TOLERANCE * 10
        )
    centred: Matrix = np.asarray(theta, dtype=np.float64)
    centred -= centred.mean()
    return centred


def elo(theta: Matrix) -> Matrix:
    """Strengths (logits) as scores on the Elo-like scale."""
    return ELO_BASE + ELO_SCALE * theta


def bootstrap(
    wins: Matrix, ties: Matrix, theta: Matrix, rounds: int, rng: np.random.Generator
) -> Matrix:
    """Strengths refitted on ``rounds`` reweightings of the votes, each centred; shape
    ``(rounds, competitors)``.

    A Bayesian bootstrap (Rubin 1981): each vote gets a random weight (Dirichlet, as many in
    total as there were votes) instead of being drawn 0, 1, 2 ... times, and so does each of
    the prior's virtual ties. With many votes it gives the intervals the usual bootstrap gives
    (the arenas'); with a handful, no vote ever drops out, so a competitor never vanishes from
    a resample, and a pair whose votes all agree (2 of 2) still gets an interval as wide as
    two votes deserve instead of none. Per pair and outcome the weights add up to a Gamma
    draw, so it costs the same for 100 votes as for 100,000.
    """
    size = len(wins)
    i, j = np.triu_indices(size, 1)
    cells = np.concatenate([wins[i, j], wins[j, i], ties[i, j]])
    total = cells.sum()
    samples = np.empty((rounds, size))
    if total == 0 or size < 2:
        samples[:] = theta
        return samples
    drawn = rng.gamma(np.broadcast_to(cells, (rounds, len(cells))))
    drawn *= total / drawn.sum(axis=1, keepdims=True)
    prior = _prior(wins, ties)[i, j]
    virtual = rng.gamma(np.broadcast_to(prior, (rounds, len(prior))))
    pairs = len(i)
    for r in range(rounds):
        w = np.zeros((size, size))
        t = np.zeros((size, size))
        w[i, j] = drawn[r, :pairs]
        w[j, i] = drawn[r, pairs:2 * pairs]
        t[i, j] = t[j, i] = drawn[r, 2 * pairs:] + virtual[r]
        samples[r] = fit(w, t, initial=theta, prior=False)
    return samples


def covariance(wins: Matrix, ties: Matrix, theta: Matrix) -> Matrix:
    """The fit's own covariance of the strengths (Laplace: the inverse of the likelihood's
    curvature plus the prior's, :data:`PRIOR_VARIANCE`); works for any competitors, voted on
    or not (a competitor without votes keeps the prior's variance)."""
    n = wins + wins.T + ties
    n = n + (n > 0) * PRIOR_TIES
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    weight = n * p * (1.0 - p)
    np.fill_diagonal(weight, 0.0)
    hessian = np.diag(weight.sum(axis=1)) - weight + np.eye(len(theta)) / PRIOR_VARIANCE
    inverse: Matrix = np.asarray(np.linalg.inv(hessian), dtype=np.float64)
    return inverse


def win_probability(theta: Matrix) -> Matrix:
    """``P[i, j]``: the chance that ``i`` is preferred to ``j`` under the fit."""
    p: Matrix = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    return p


def percentile_interval(samples: Matrix, level: float = 0.95) -> tuple[Matrix, Matrix]:
    """The bootstrap's percentile interval of each column."""
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)




@dataclass(frozen=True, slots=True)
class Strengths:
    """The current fit of some votes, as a chooser of the next pair needs it.

    Attributes:
        theta: each competitor's strength (logits; 0, the prior's mean, for one not ranked).
        covariance: the fit's own covariance of the strengths (:func:`covariance`).
        ranked: which competitors the votes connect into one ranking (:func:`ranked`).

    Example:
        >>> import numpy as np
        >>> even = Strengths(np.zeros(2), np.eye(2), np.array([True, True]))
        >>> even.outcome_uncertainty().tolist()   # p(1 - p) = 0.25 times a variance of 2
        [[-inf, 0.5], [0.5, -inf]]
    """

    theta: Matrix
    covariance: Matrix
    ranked: NDArray[np.bool_]

    def outcome_uncertainty(self) -> Matrix:
        """``U[i, j]``: how much a vote between ``i`` and ``j`` would teach: the chance of
        either outcome, ``p (1 - p)``, times the variance of their strength difference."""
        p = win_probability(self.theta)
        c = self.covariance
        d = np.diag(c)
        spread = d[:, None] + d[None, :] - 2 * c
        teach: Matrix = p * (1 - p) * spread
        np.fill_diagonal(teach, -np.inf)
        return teach


def strengths(wins: Matrix, ties: Matrix) -> Strengths:
    """Fit ``wins`` and ``ties`` (see :func:`counts`): strengths, covariance, who is ranked.

    Example:
        >>> import numpy as np
        >>> fitted = strengths(np.array([[0.0, 3, 0], [1, 0, 0], [0, 0, 0]]), np.zeros((3, 3)))
        >>> fitted.ranked.tolist(), bool(fitted.theta[0] > 0 > fitted.theta[1])
        ([True, True, False], True)
        >>> u = fitted.outcome_uncertainty()   # the unseen third is the most to learn about
        >>> bool(u[0, 2] > u[0, 1])
        True
    """
    mask = ranked(wins, ties)
    theta = np.zeros(len(wins))
    if mask.sum() > 1:
        sub = np.ix_(mask, mask)
        theta[mask] = fit(wins[sub], ties[sub])
    return Strengths(theta, covariance(wins, ties, theta), mask)
