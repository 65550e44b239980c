"""When to poll next: one small interface, a fixed-interval pacer and the forecast pacer.

A :class:`Pacer` paces the polls of one task. ``next_delay(record, elapsed, hint)`` gets the
record the last poll read (None when that poll failed), the seconds since the task was
submitted, and the service's polling hint that came with that answer; it returns the seconds
to sleep before the next poll. That call is the whole boundary between the wait loop and the
polling policy. A :class:`Pacing` makes one pacer per task: ``pacing.pacer(work, batch=...)``,
where ``batch`` says the task is one of a batch (``map``, ``compare``), watched as a whole.

* :class:`FixedPacing` polls every ``interval`` seconds (a service's hint still wins): the
  plain loop a person would write, and the oracle the forecast pacer is measured against.
* :class:`ForecastPacing` (a client's default) schedules polls around when the task will likely
  finish: a :class:`Prediction` from the client's
  :class:`~genlab.client._durations.DurationModel`, turned into delays by a
  :class:`PollSchedule`.

A :class:`Prediction` is a distribution of seconds from creation to completion: ``offset``
plus ``median * exp(r)``, where ``r`` is either normal with spread ``sigma`` or, once enough
tasks have finished, drawn from the residuals actually seen (``shape``) smoothed by ``sigma``.
The learned shape matters: a service whose durations vary within a fixed band never finishes
before the band opens, and a schedule that knows it spends no polls there.

Example:
    >>> pacer = FixedPacing(2.0).pacer(Work("image-b", "image"), batch=False)
    >>> pacer.next_delay(None, 0.0, None), pacer.next_delay(None, 2.0, 0.5)
    (2.0, 0.5)
    >>> p = Prediction(median=20.0, sigma=0.2)
    >>> round(p.quantile(0.5), 1), p.quantile(0.95) > 20.0
    (20.0, True)
    >>> band = Prediction(median=20.0, sigma=0.02, shape=(-0.2, -0.1, 0.0, 0.1, 0.2))
    >>> band.hazard(12.0) < 1e-6 < band.hazard(20.0)  # nothing finishes before the band
    True

The forecast schedule (:class:`PollSchedule`):
When to poll next: from the predicted distribution of the task's duration.

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

A bare prior (nothing known of this service: no task of it has finished, and it declared no
time scale) may be far off: a service ten times faster finishes before the prior expects
anything. So until the prior's median, polls also come at geometric *probes* (``probe_first``
seconds, then each ``probe_ratio`` times the time elapsed): such a service is found within
its first task, at a couple of requests more than the prior's own schedule and fewer than a
1 s poller at the prior's pace. One finished task of any model then sets the pace for all.

Someone waiting for one task is watching it; a batch (``map``, ``compare``) is watched as a
whole, so :meth:`PollSchedule.for_batch` trades a little lag for fewer requests.

What the record shows moves the forecast: a task seen still ``queued`` after the usual
``queue_seconds`` pushes the whole forecast later by the excess. A polling hint from the
service (``Retry-After`` or ``Poll-After`` on a task query) replaces the delay of that poll.

``scale`` multiplies every interval and cost (not the forecast, which is measured): tests and
benchmarks against a sped-up emulator pass e.g. ``scale=0.05``. A service that declares its
time scale (the forecast's ``pace``) sets it instead.

Example:
    >>> s = PollSchedule(Prediction(median=30.0, sigma=0.15, samples=5), jitter=0)
    >>> first = s.next_delay(0.0)  # one sleep until the task may be done
    >>> 15 < first < 26
    True
    >>> s.next_delay(30.0) < 1.0  # close together where it is most likely to finish
    True
    >>> bare = PollSchedule(Prediction(median=30.0, sigma=0.5), jitter=0)
    >>> [round(bare.next_delay(t), 2) for t in (0.0, 1.0, 5.0)]  # probes, for a faster service
    [1.0, 1.0, 2.0]
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from genlab._errors import ConfigurationError
from genlab._wire import TaskRecord, VideoResult
from genlab.catalog import RequestBase, plan_output, validate


@dataclass(frozen=True, slots=True)
class Work:
    """What a task asks of the service, as far as its duration goes.

    Attributes:
        model: the model name ("" when not known yet).
        kind: ``"video"`` or ``"image"`` (None when not known yet).
        pixels: width x height of one output, or None.
        seconds: output seconds of a video, or None.
        count: outputs per call (image-a's ``n``).

    Example:
        >>> Work.of_body({"model": "video-a", "prompt": "a fox", "duration": 8}).seconds
        8.0
    """

    model: str
    kind: str | None = None
    pixels: int | None = None
    seconds: float | None = None
    count: int = 1

    @classmethod
    def of_request(cls, request: RequestBase) -> Work:
        """The work of a validated request, from the catalog's output plan."""
        plan = plan_output(request)
        return cls(
            request.model_name, request.kind, plan.width * plan.height, plan.duration, plan.count
        )

    @classmethod
    def of_body(cls, body: Mapping[str, Any]) -> Work:
        """The work of a request body; only its model when the catalog no longer accepts it."""
        try:
            return cls.of_request(validate(dict(body), warn=False))
        except Exception:  # an old body the catalog has moved on from still has a model
            return cls(str(body.get("model") or ""))

    @classmethod
    def of_record(cls, record: TaskRecord) -> Work:
        """The work a succeeded record shows it did (its first result's size and length)."""
        results = record.results
        first = results[0] if results else None
        pixels = first.width * first.height if first and first.width and first.height else None
        seconds = first.duration if isinstance(first, VideoResult) else None
        return cls(record.model, record.kind, pixels, seconds, max(1, len(results)))


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
        informed: a prior set to what this service showed (its declared time scale, or its
            other models' finished tasks); False: a prior that knows nothing of the service.
        pace: the time scale the service declared (0.1: ten times faster than the real
            service); a schedule scales its intervals by it in place of its own ``scale``.
    """

    median: float
    sigma: float
    samples: int = 0
    offset: float = 0.0
    shape: tuple[float, ...] = ()
    informed: bool = False
    pace: float | None = None

    @property
    def learned(self) -> bool:
        """True when it rests on finished tasks of this service (this model's or others'),
        or on the service's declared time scale; False for a bare prior."""
        return self.samples > 0 or self.informed

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


MIN_DELAY = 0.01
MAX_HINT = 600.0  # seconds: a hint beyond this is taken as this (the wait's deadline still rules)

Forecast = Prediction | Callable[[], Prediction]


@dataclass(slots=True)
class PollSchedule:
    """Poll intervals for one task. See the module docstring for the rule.

    Attributes:
        forecast: the predicted duration from creation, or a callable asked at every step.
        scale: multiplies ``lag_cost``, ``min_gap``, ``max_gap``, ``queue_seconds`` and the
            probes; a forecast's ``pace`` (the service's declared time scale) replaces it.
        lag_cost: seconds of lag one request is worth outside the band; smaller polls more
            densely.
        prior_lag_cost: the same while the forecast rests on no finished task of its model
            (a prior, bare or set to the service's pace): its probes find a service faster
            than the prior, and these polls are for one at the prior's pace.
        min_gap: the delay between polls across a learned forecast's likely band (the
            longest wait a finish there sees), and the shortest delay anywhere.
        prior_gap: the same for a forecast resting only on a prior.
        edge: a learned forecast's band runs from its ``edge`` to its ``1 - edge`` quantile.
        prior_edge: the same for a prior (0: a prior's band is not swept).
        max_gap: the longest delay between polls.
        queue_seconds: how long a task usually waits ``queued``; longer pushes the forecast.
        probe_first, probe_ratio: while the forecast is a bare prior (nothing known of this
            service), polls also come at ``probe_first`` seconds and then each ``probe_ratio``
            times the time elapsed, up to the prior's median: a service many times faster than
            the prior is found within its first task, at a few requests' cost (0: no probes).
        jitter: delays are shortened (in the band) or moved (outside it) by a random fraction
            up to this, so the tasks of a batch do not poll in lockstep.
        approach: poll before the band opens by the hazard rule; False: nothing between the
            query at submission and the band but the probes of a bare prior (and a poll every
            ``max_gap``). A batch's lag goal is its p95, set inside the bands: a poll seconds
            before a band shortens only lags the p95 does not count.
    """

    forecast: Forecast
    scale: float = 1.0
    lag_cost: float = 0.05
    prior_lag_cost: float = 0.025
    min_gap: float = 0.38
    prior_gap: float = 0.6
    edge: float = 0.03
    prior_edge: float = 0.0
    max_gap: float = 30.0
    queue_seconds: float = 1.0
    probe_first: float = 1.0
    probe_ratio: float = 1.4
    jitter: float = 0.05
    approach: bool = True
    rng: random.Random = field(default_factory=random.Random, repr=False)
    polls: int = field(default=0, init=False)
    queued_until: float = field(default=0.0, init=False)

    @classmethod
    def for_batch(cls, forecast: Forecast, *, scale: float = 1.0) -> PollSchedule:
        """The schedule of a task in a batch: fewer requests, a little more lag.

        A batch is judged by its p95 lag, which is set inside the bands, where most tasks
        finish: so nothing is polled between the query at submission and a task's band (a
        bare prior still probes, for a service faster than it), and a request is worth more
        lag in a late task's tail than for one watched task (``lag_cost`` 0.1, 0.15 on a
        prior). A batch's first tasks rest on priors, so their band is swept too (its central
        70 %): otherwise the first task of each model would be the slow one of the batch. A
        learned band runs from the 3 % to the 97 % quantile: a finish before it waits for the
        band's first poll, and the forecasts of a batch's later tasks are narrow once its
        first ones finished (the duration model learns how closely the service follows its
        priors), so few do. A task still far from its band is polled once a minute (one
        watched, every 30 s): a batch shows each task's status, not a live wait.
        """
        return cls(forecast, scale=scale, lag_cost=0.1, prior_lag_cost=0.15, min_gap=0.9,
                   prior_gap=0.9, edge=0.03, prior_edge=0.15, max_gap=60.0, probe_first=1.0,
                   probe_ratio=1.8, approach=False)

    def observe(self, status: str, elapsed: float) -> None:
        """Tell the schedule what a poll at ``elapsed`` seconds showed."""
        if status == "queued":
            self.queued_until = max(self.queued_until, elapsed)

    def prediction(self) -> Prediction:
        """The forecast as it stands, moved later by a long queue."""
        current = self.forecast() if callable(self.forecast) else self.forecast
        excess = self.queued_until - self.queue_seconds * self.scale_of(current)
        if excess > 0:
            current = current.shifted(excess)
        return current

    def scale_of(self, forecast: Prediction) -> float:
        """The intervals' scale: the service's declared pace when it declared one."""
        return forecast.pace if forecast.pace is not None and forecast.pace > 0 else self.scale

    def next_delay(self, elapsed: float, hint: float | None = None) -> float:
        """Seconds to sleep before the next poll, given seconds elapsed since submission.

        ``hint``: the service's own advice (seconds), honoured as given.
        """
        self.polls += 1
        if hint is not None and hint >= 0:
            return max(MIN_DELAY, min(hint, MAX_HINT))
        current = self.prediction()
        scale = self.scale_of(current)
        learned = current.samples > 0
        gap = (self.min_gap if learned else self.prior_gap) * scale
        edge = self.edge if learned else self.prior_edge
        start, end = (
            (current.quantile(edge), current.quantile(1.0 - edge)) if edge > 0 else (math.inf,) * 2
        )
        if start <= elapsed < end:  # the likely band: swept evenly, one gap at a time
            wobble = 1.0 - self.jitter * self.rng.random() if self.jitter else 1.0
            return max(MIN_DELAY, min(gap * wobble, self._probe(current, elapsed, scale)))
        if elapsed < start and not self.approach:  # straight to the band's first poll
            wobble = 1.0 - self.jitter * self.rng.random() if self.jitter else 1.0
            delay = min(start + gap * wobble - elapsed, self.max_gap * scale)
            return max(MIN_DELAY, min(delay, self._probe(current, elapsed, scale)))
        # Overdue, a second of lag matters less: the cost of lag shrinks as the wait grows.
        stretch = max(1.0, (elapsed - current.offset) / (current.likely_end() - current.offset))
        cost = (self.lag_cost if learned else self.prior_lag_cost) * scale * stretch
        delay = self._hazard_step(current.widened(elapsed), elapsed, cost, gap, scale)
        if elapsed < start:  # the band's first poll comes one gap after it opens
            delay = min(delay, start + gap - elapsed)
        wobble = 1.0 + self.jitter * (2.0 * self.rng.random() - 1.0) if self.jitter else 1.0
        low = min(self.min_gap, self.prior_gap) * scale * (1 - self.jitter)
        paced = max(MIN_DELAY, low, min(delay * wobble, self.max_gap * scale))
        return max(MIN_DELAY, min(paced, self._probe(current, elapsed, scale)))

    def _probe(self, forecast: Prediction, elapsed: float, scale: float) -> float:
        """The delay to the next probe of a bare prior (inf: none): geometric from
        ``probe_first``, so an unknown service's speed is found early, in few requests."""
        if forecast.learned or self.probe_first <= 0 or elapsed >= forecast.quantile(0.5):
            return math.inf
        first = self.probe_first * scale
        return max(first, elapsed * (self.probe_ratio - 1.0))

    def _hazard_step(
        self, forecast: Prediction, now: float, cost: float, low: float, scale: float
    ) -> float:
        """The smallest gap ``d`` in [low, max_gap] with ``d**2 * hazard(now + d)`` at least
        ``2 * cost``: grow geometrically until it holds, then bisect."""
        target = 2.0 * cost
        high = self.max_gap * scale

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


class Pacer(Protocol):
    """Paces the polls of one task (see the module docstring)."""

    def next_delay(self, record: TaskRecord | None, elapsed: float, hint: float | None) -> float:
        """Seconds to sleep before the next poll.

        Args:
            record: what the last poll read; None when it failed (network, unreadable).
            elapsed: seconds since the task was submitted.
            hint: the service's polling hint on the last answer (seconds), or None.
        """
        ...


class Pacing(Protocol):
    """Makes the pacer of each task a client waits for."""

    def pacer(self, work: Work, *, batch: bool) -> Pacer:
        """The pacer for one task doing ``work``; ``batch`` when it is one of a batch."""
        ...


@dataclass(frozen=True, slots=True)
class FixedPacing:
    """Poll every ``interval`` seconds; a service's hint is honoured as given.

    Example:
        client = genlab.AsyncClient(pacing=FixedPacing(1.0))

    Example:
        >>> FixedPacing(2.0).interval
        2.0
    """

    interval: float = 1.0

    def __post_init__(self) -> None:
        if not self.interval > 0:
            raise ConfigurationError(
                f"FixedPacing(interval=...) must be a positive number of seconds, got "
                f"{self.interval!r}"
            )

    def pacer(self, work: Work, *, batch: bool) -> Pacer:
        return _Fixed(self.interval)


@dataclass(frozen=True, slots=True)
class _Fixed:
    interval: float

    def next_delay(self, record: TaskRecord | None, elapsed: float, hint: float | None) -> float:
        if hint is not None and hint >= 0:
            return max(MIN_DELAY, min(hint, MAX_HINT))
        return self.interval


class ForecastPacing:
    """Polls scheduled from a forecast of each task's duration (see :class:`PollSchedule`).

    Args:
        predict: the forecast of a task's duration (a client passes its
            ``DurationModel.predict``, which learns from every task the client sees finish and
            from the durations source given to the client).
        scale: multiplies every interval (0.05 against a 20x emulator).
    """

    def __init__(self, predict: Callable[[Work], Prediction], *, scale: float = 1.0) -> None:
        self.predict = predict
        self.scale = scale

    def pacer(self, work: Work, *, batch: bool) -> Pacer:
        def forecast() -> Prediction:  # asked afresh at every poll: a batch's finishes teach
            return self.predict(work)

        make = PollSchedule.for_batch if batch else PollSchedule
        return _Scheduled(make(forecast, scale=self.scale))


@dataclass(slots=True)
class _Scheduled:
    schedule: PollSchedule

    def next_delay(self, record: TaskRecord | None, elapsed: float, hint: float | None) -> float:
        if record is not None:
            self.schedule.observe(record.status, elapsed)
        return self.schedule.next_delay(elapsed, hint)


__all__ = [
    "FixedPacing",
    "ForecastPacing",
    "Pacer",
    "Pacing",
    "PollSchedule",
    "Prediction",
    "Work",
]
