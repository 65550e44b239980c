"""When to poll next: from the predicted distribution of the task's duration.

The schedule is pure (no I/O, no clock): ``next_delay(elapsed)`` gets the seconds since the
task was submitted and returns how long to sleep before the next poll. Its forecast (a
:class:`~genlab.client.Prediction`) is asked afresh at every step, so in a ``map`` or a
``compare`` the first completions reshape the schedule of the tasks still running.

The rule: the next poll is the earliest moment ``s`` at which ``(s - now)**2 * hazard(s)``
reaches ``2 * lag_cost``, where ``hazard(s)`` is the chance per second of the task finishing
just after ``s``. This is the spacing that minimises ``lag_cost * requests + expected lag``:
polls crowd where the task is likely to finish (how closely depends on the learned spread, not
on a fixed fraction), and thin out before it is due and late in the tail. Where the chance of
finishing within ``min_gap`` reaches ``dense_chance``, polls come every ``min_gap``, so the
likely band is covered evenly and no finish there waits longer than that. Gaps stay between
``min_gap`` and ``max_gap`` (a long task still shows progress now and then).

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
        lag_cost: seconds of lag one request is worth; smaller polls more densely.
        min_gap: the shortest delay between polls.
        max_gap: the longest delay between polls.
        queue_seconds: how long a task usually waits ``queued``; longer pushes the forecast.
        dense_chance: poll every ``min_gap`` where the chance of finishing within it is at
            least this (0: never force it).
        jitter: each delay is multiplied by a random factor in ``1 ± jitter``, so the tasks
            of a batch do not poll in lockstep.
    """

    forecast: Forecast
    scale: float = 1.0
    lag_cost: float = 0.02
    min_gap: float = 0.35
    max_gap: float = 30.0
    queue_seconds: float = 1.0
    dense_chance: float = 0.03
    jitter: float = 0.05
    rng: random.Random = field(default_factory=random.Random, repr=False)
    polls: int = field(default=0, init=False)
    queued_until: float = field(default=0.0, init=False)

    @classmethod
    def for_batch(cls, forecast: Forecast, *, scale: float = 1.0) -> PollSchedule:
        """The schedule of a task in a batch: about half the requests, a little more lag."""
        return cls(forecast, scale=scale, lag_cost=0.05, min_gap=0.8, dense_chance=0.05)

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
        # Overdue, a second of lag matters less: the cost of lag shrinks as the wait grows.
        stretch = max(1.0, (elapsed - current.offset) / (current.likely_end() - current.offset))
        delay = self._hazard_step(current.widened(elapsed), elapsed, stretch)
        wobble = 1.0 + self.jitter * (2.0 * self.rng.random() - 1.0) if self.jitter else 1.0
        low, high = self.min_gap * self.scale, self.max_gap * self.scale
        return max(MIN_DELAY, low, min(delay * wobble, high))

    def _hazard_step(self, forecast: Prediction, now: float, stretch: float) -> float:
        """The smallest gap ``d`` in [min_gap, max_gap] with ``d**2 * hazard(now + d)`` at
        least ``2 * lag_cost * stretch``: grow geometrically until it holds, then bisect."""
        target = 2.0 * self.lag_cost * self.scale * stretch
        low, high = self.min_gap * self.scale, self.max_gap * self.scale

        # A forecast resting only on a prior is too unsure for an evenly covered band to pay.
        dense = self.dense_chance if forecast.samples > 0 else 0.0

        def enough(gap: float) -> bool:
            h = forecast.hazard(now + gap)
            return gap * gap * h >= target or h * low >= dense > 0

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
