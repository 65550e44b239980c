"""A forecast of a task's duration, and the chance per second of it finishing (its hazard).

A :class:`Prediction` is a distribution of seconds from creation to completion: ``offset``
plus ``median * exp(r)``, where ``r`` is either normal with spread ``sigma`` or, once enough
tasks have finished, drawn from the residuals actually seen (``shape``) smoothed by ``sigma``.
The learned shape matters: a service whose durations vary within a fixed band never finishes
before the band opens, and a schedule that knows it spends no polls there.

Example:
    >>> p = Prediction(median=20.0, sigma=0.2)
    >>> round(p.quantile(0.5), 1), p.quantile(0.95) > 20.0
    (20.0, True)
    >>> round(p.shifted(5.0).quantile(0.5), 1)
    25.0
    >>> band = Prediction(median=20.0, sigma=0.02, shape=(-0.2, -0.1, 0.0, 0.1, 0.2))
    >>> band.hazard(12.0) < 1e-6 < band.hazard(20.0)  # nothing finishes before the band
    True
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

_NORMAL = statistics.NormalDist()
_ROOT2 = math.sqrt(2.0)
_ROOT2PI = math.sqrt(2.0 * math.pi)


@dataclass(frozen=True, slots=True)
class Prediction:
    """Seconds from creation to completion: ``offset + median * exp(r)``.

    Attributes:
        median: the median seconds of the varying part.
        sigma: spread of ``r`` in log space (0.1: most tasks within about +-20 %); with a
            ``shape``, the smoothing of each residual.
        samples: finished tasks of this model it rests on (0: a prior).
        offset: seconds added in front (a task that sat queued longer than usual).
        shape: log residuals seen (``log(actual / predicted)``) that ``r`` is drawn from;
            empty: ``r`` is normal.
    """

    median: float
    sigma: float
    samples: int = 0
    offset: float = 0.0
    shape: tuple[float, ...] = ()

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (0 < q < 1) in seconds."""
        if not self.shape:
            return self.offset + self.median * math.exp(self.sigma * _NORMAL.inv_cdf(q))
        low, high = min(self.shape) - 6 * self.sigma, max(self.shape) + 6 * self.sigma
        for _ in range(50):  # bisect the smoothed distribution in log space
            middle = (low + high) / 2
            low, high = (middle, high) if self._below(middle) < q else (low, middle)
        return self.offset + self.median * math.exp((low + high) / 2)

    def shifted(self, seconds: float) -> Prediction:
        """The same forecast, ``seconds`` later."""
        return replace(self, offset=self.offset + seconds)

    def likely_end(self) -> float:
        """Seconds by which the task has almost surely finished, if the forecast is right."""
        edge = (max(self.shape) + 2 * self.sigma) if self.shape else 1.645 * self.sigma
        return self.offset + self.median * math.exp(edge)

    def widened(self, elapsed: float) -> Prediction:
        """Still running past what the forecast allows: a plain log-normal wide enough that
        ``elapsed`` is plausible (1.5 sigma out), so the schedule backs off, not insists."""
        t = elapsed - self.offset
        if t <= self.median:
            return self
        r = math.log(t / self.median)
        edge = (max(self.shape) + 2 * self.sigma) if self.shape else 1.5 * self.sigma
        if r <= edge:
            return self
        return replace(self, sigma=max(self.sigma, r / 1.5), shape=())

    def hazard(self, t: float) -> float:
        """Chance per second of finishing just after ``t``, given it has not finished by ``t``."""
        t -= self.offset
        if t <= 0:
            return 0.0
        r = math.log(t / self.median)
        if not self.shape:
            z = r / self.sigma
            if z > 7:  # far in the tail: the Mills-ratio limit, not 0/0
                return z / (t * self.sigma)
            density = math.exp(-0.5 * z * z) / (t * self.sigma * _ROOT2PI)
            return density / (0.5 * math.erfc(z / _ROOT2))
        density = survival = 0.0
        for residual in self.shape:
            z = (r - residual) / self.sigma
            density += math.exp(-0.5 * z * z)
            survival += 0.5 * math.erfc(z / _ROOT2)
        density /= t * self.sigma * _ROOT2PI
        if survival < 1e-12 * len(self.shape):
            z = (r - max(self.shape)) / self.sigma
            return max(z, 1.0) / (t * self.sigma)
        return density / survival

    def _below(self, r: float) -> float:
        """P(residual <= r) of the smoothed shape."""
        total = sum(0.5 * math.erfc(-(r - x) / (self.sigma * _ROOT2)) for x in self.shape)
        return total / len(self.shape)
