"""When to poll next: from the predicted distribution of the task's duration.

The schedule is pure (no I/O, no clock): ``next_delay(elapsed)`` gets the seconds since the
task was submitted and returns how long to sleep before the next poll. Its forecast (a
:class:`~genlab.client.Prediction`) is asked afresh at every step, so in a ``map`` or a
``compare`` the first completions reshape the schedule of the tasks still running.

The rule has two parts. Across the likely band (the forecast's ``edge`` to ``1 - edge``
quantiles, so as wide as the learned spread says, not a fixed fraction) polls come every
``min_gap``: no finish there waits longer than that, and the first poll in the band comes one
gap after it opens. Outside it (before the band, and in the tail of a task running late) the
next poll is the earliest moment ``s`` at which ``(s - now)**2 * hazard(s)`` reaches
``2 * lag_cost``, where ``hazard(s)`` is the chance per second of the task finishing just after
``s``: the spacing that minimises ``lag_cost * requests + expected lag``, so polls thin out
before a task is due and late in its tail. A forecast resting only on a prior is swept with
``prior_gap`` between its ``prior_edge`` quantiles (0: not swept, only the hazard rule). Gaps
stay within ``max_gap`` (a long task still shows progress now and then).

Someone waiting for one task is watching it; a batch (``map``, ``compare``) is watched as a
whole, so :meth:`PollSchedule.for_batch` trades a little lag for fewer requests.

What the record shows moves the forecast: a task seen still ``queued`` after the usual
``queue_seconds`` pushes the whole forecast later by the excess. A polling hint from the
service (``Retry-After`` or ``Poll-After`` on a task query) replaces the delay of that poll.

``scale`` multiplies every interval and cost (not the forecast, which is measured): tests and
benchmarks against a sped-up emulator pass e.g. ``scale=0.05``.

Example:
    >>> from genlab.client import Prediction
    >>> s = PollSchedule(Prediction(median=30.0, sigma=0.15), jitter=0)
    >>> first = s.next_delay(0.0)  # one sleep until the task may be done
    >>> 15 < first < 26
    True
    >>> s.next_delay(30.0) < 1.0  # close together where it is most likely to finish
    True
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from genlab.client._forecast import Prediction

MIN_DELAY = 0.01
MAX_HINT = 600.0  # seconds: a hint beyond this is taken as this (the wait's deadline still rules)

Forecast = Prediction | Callable[[], Prediction]


@dataclass(slots=True)
class PollSchedule:
    """Poll intervals for one task. See the module docstring for the rule.

    Attributes:
        forecast: the predicted duration from creation, or a callable asked at every step.
        scale: multiplies ``lag_cost``, ``min_gap``, ``max_gap`` and ``queue_seconds``.
        lag_cost: seconds of lag one request is worth outside the band; smaller polls more
            densely.
        min_gap: the delay between polls across a learned forecast's likely band (the
            longest wait a finish there sees), and the shortest delay anywhere.
        prior_gap: the same for a forecast resting only on a prior.
        edge: a learned forecast's band runs from its ``edge`` to its ``1 - edge`` quantile.
        prior_edge: the same for a prior (0: a prior's band is not swept).
        max_gap: the longest delay between polls.
        queue_seconds: how long a task usually waits ``queued``; longer pushes the forecast.
        jitter: delays are shortened (in the band) or moved (outside it) by a random fraction
            up to this, so the tasks of a batch do not poll in lockstep.
    """

    forecast: Forecast
    scale: float = 1.0
    lag_cost: float = 0.02
    min_gap: float = 0.3
    prior_gap: float = 0.6
    edge: float = 0.03
    prior_edge: float = 0.0
    max_gap: float = 30.0
    queue_seconds: float = 1.0
    jitter: float = 0.05
    rng: random.Random = field(default_factory=random.Random, repr=False)
    polls: int = field(default=0, init=False)
    queued_until: float = field(default=0.0, init=False)

    @classmethod
    def for_batch(cls, forecast: Forecast, *, scale: float = 1.0) -> PollSchedule:
        """The schedule of a task in a batch: fewer requests, a little more lag.

        A batch's first tasks rest on priors, so their band is swept too (its central 80 %):
        otherwise the first task of each model would be the slow one of the batch.
        """
        return cls(forecast, scale=scale, lag_cost=0.05, min_gap=0.9, prior_gap=0.8,
                   edge=0.05, prior_edge=0.1)

    def observe(self, status: str, elapsed: float) -> None:
        """Tell the schedule what a poll at ``elapsed`` seconds showed."""
        if status == "queued":
            self.queued_until = max(self.queued_until, elapsed)

    def prediction(self) -> Prediction:
        """The forecast as it stands, moved later by a long queue."""
        current = self.forecast() if callable(self.forecast) else self.forecast
        excess = self.queued_until - self.queue_seconds * self.scale
        if excess > 0:
            current = current.shifted(excess)
        return current

    def next_delay(self, elapsed: float, hint: float | None = None) -> float:
        """Seconds to sleep before the next poll, given seconds elapsed since submission.

        ``hint``: the service's own advice (seconds), honoured as given.
        """
        self.polls += 1
        if hint is not None and hint >= 0:
            return max(MIN_DELAY, min(hint, MAX_HINT))
        current = self.prediction()
        learned = current.samples > 0
        gap = (self.min_gap if learned else self.prior_gap) * self.scale
        edge = self.edge if learned else self.prior_edge
        start, end = (
            (current.quantile(edge), current.quantile(1.0 - edge)) if edge > 0 else (math.inf,) * 2
        )
        if start <= elapsed < end:  # the likely band: swept evenly, one gap at a time
            wobble = 1.0 - self.jitter * self.rng.random() if self.jitter else 1.0
            return max(MIN_DELAY, gap * wobble)
        # Overdue, a second of lag matters less: the cost of lag shrinks as the wait grows.
        stretch = max(1.0, (elapsed - current.offset) / (current.likely_end() - current.offset))
        delay = self._hazard_step(current.widened(elapsed), elapsed, stretch, gap)
        if elapsed < start:  # the band's first poll comes one gap after it opens
            delay = min(delay, start + gap - elapsed)
        wobble = 1.0 + self.jitter * (2.0 * self.rng.random() - 1.0) if self.jitter else 1.0
        low = min(self.min_gap, self.prior_gap) * self.scale * (1 - self.jitter)
        return max(MIN_DELAY, low, min(delay * wobble, self.max_gap * self.scale))

    def _hazard_step(self, forecast: Prediction, now: float, stretch: float, low: float) -> float:
        """The smallest gap ``d`` in [min_gap, max_gap] with ``d**2 * hazard(now + d)`` at
        least ``2 * lag_cost * stretch``: grow geometrically until it holds, then bisect."""
        target = 2.0 * self.lag_cost * self.scale * stretch
        high = self.max_gap * self.scale

        def enough(gap: float) -> bool:
            return gap * gap * forecast.hazard(now + gap) >= target

        if enough(low):
            return low
        below, gap = low, low
        while gap < high:
            gap = min(high, gap * 1.5)
            if enough(gap):
                break
            below = gap
        else:
            return high
        for _ in range(12):
            middle = (below + gap) / 2
            below, gap = (below, middle) if enough(middle) else (middle, gap)
        return gap
