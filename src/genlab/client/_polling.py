"""When to poll next: an adaptive schedule, learned from how long similar tasks took.

The schedule is pure (no I/O, no clock): ``next_delay(elapsed)`` gets the seconds since the
task was submitted and returns how long to sleep before the next poll.

* Without a learned duration it polls soon, then backs off: ``first``, ``first*factor``, ...
  up to ``cap``, each with a little jitter so many tasks do not poll in lockstep.
* With an expected duration ``E`` (the median of earlier totals of the same model, resolution
  and duration) it sleeps until shortly before ``E``, polls every ``dense`` seconds while the
  task is likely to finish, then backs off again if it runs late.

``scale`` multiplies every interval (not ``E``, which is measured): tests and benchmarks against
a sped-up emulator pass e.g. ``scale=0.05`` so the same schedule runs twenty times faster.

Example:
    >>> s = PollSchedule(jitter=0)
    >>> [round(s.next_delay(0), 2) for _ in range(4)]
    [0.75, 1.12, 1.69, 2.53]
    >>> s = PollSchedule(expected=20.0, jitter=0)
    >>> s.next_delay(0.0), s.next_delay(15.0)  # dense from 25 % before it is due
    (15.0, 0.35)
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MIN_DELAY = 0.01


@dataclass(slots=True)
class PollSchedule:
    """Poll intervals for one task. See the module docstring for the shape.

    Attributes:
        expected: learned seconds from submission to completion, or None.
        scale: multiplies every interval (``first``, ``cap``, ``dense``, ``max_sleep``).
        first: the first delay when nothing is known.
        factor: growth of the delay between polls while backing off.
        cap: the longest delay between polls while backing off.
        dense: the delay between polls around the expected completion.
        spread: fraction of ``expected`` polled densely on each side of it.
        jitter: each backoff delay is multiplied by a random factor in ``1 ± jitter``.
        max_sleep: the longest single sleep while waiting for the expected completion, so
            long tasks still report progress now and then.
    """

    expected: float | None = None
    scale: float = 1.0
    first: float = 0.75
    factor: float = 1.5
    cap: float = 10.0
    dense: float = 0.35
    spread: float = 0.25
    jitter: float = 0.1
    max_sleep: float = 30.0
    rng: random.Random = field(default_factory=random.Random, repr=False)
    _interval: float | None = field(default=None, init=False, repr=False)
    polls: int = field(default=0, init=False)

    def next_delay(self, elapsed: float) -> float:
        """Seconds to sleep before the next poll, given seconds elapsed since submission."""
        self.polls += 1
        if self.expected is not None:
            dense = self.dense * self.scale
            lead = max(2 * dense, self.spread * self.expected)
            start, end = self.expected - lead, self.expected + lead
            if elapsed < start - dense:
                # Nothing to learn before the task is due: one long sleep (bounded, so a long
                # task still shows progress), ending just as the dense window opens.
                return max(MIN_DELAY, min(start - elapsed, self.max_sleep * self.scale))
            if elapsed < end:
                return max(MIN_DELAY, dense)
            if self._interval is None:
                # Late: back off from the dense pace, as if nothing were known.
                self._interval = dense
        return self._backoff()

    def _backoff(self) -> float:
        cap = self.cap * self.scale
        if self._interval is None:
            self._interval = self.first * self.scale
        else:
            self._interval = min(self._interval * self.factor, cap)
        wobble = 1.0 + self.jitter * (2.0 * self.rng.random() - 1.0) if self.jitter else 1.0
        return max(MIN_DELAY, min(self._interval * wobble, cap))
