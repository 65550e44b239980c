"""How long a task will take: a small duration model per model, learned from finished tasks.

Each model's time from creation to completion is modelled as::

    seconds = (fixed + per_second * output_seconds) * (pixels / reference) ** gamma * count ** delta

with ``fixed`` and ``per_second`` fitted per model, ``gamma`` (how resolution tier scales the
work) refined per model once it has run at more than one tier, and a log-normal spread learned
from how far finished tasks fell from the fit. So one finished video-a 720P 5 s task already
predicts video-a 1080P 10 s, and the prediction sharpens as tasks finish.

Before any task of a model has finished, the prior of its kind is used, with a wide spread,
set to how fast this service runs as soon as anything shows it: the kind's other models
against their priors when some have run, else any model's (a service ten times faster than
the priors is ten times faster at images and videos alike). Priors are in real-service
seconds and multiplied by ``scale`` (a sped-up emulator: 0.05), or by the time scale the
service declares (:meth:`DurationModel.declare`; the emulator's ``Genlab-Time-Scale``).

How wide that prior is, is learned too (empirical Bayes): each model that ran tests the
forecast a new model would have had, its pace against the pace the others set (or against
the priors at the declared time scale). From those tests the model estimates ``tau``, how far
this service's models stray from where their kind's pace puts them. A service that keeps to
its priors narrows every new model's forecast after a few tasks, images included when only
videos ran; and a model's own first tasks are read against it (a few tasks of a model
in such a service say more about their draw than about the model). A service whose models
scatter keeps its forecasts wide.

Example:
    >>> model = DurationModel()
    >>> clip = Work("video-a", "video", pixels=1280 * 720, seconds=5.0)
    >>> model.predict(clip).samples  # nothing learned yet: the video prior
    0
    >>> model.observe(DurationSample(clip, 60.0, task_id="t1"))
    >>> round(model.predict(clip).median, 1)
    60.0
    >>> longer = Work("video-a", "video", pixels=1920 * 1080, seconds=10.0)
    >>> model.predict(longer).median > 60.0
    True
"""

from __future__ import annotations

import logging
import math
import statistics
import threading
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from genlab.catalog import DEFAULT_DURATION
from genlab.client._config import TaskRecord
from genlab.client._pacing import Prediction, Work

logger = logging.getLogger("genlab")

REFERENCE_PIXELS = {"video": 1280 * 720, "image": 1024 * 1024}
"""The pixel count a prior's ``fixed`` and ``per_second`` refer to (720P; a 1K square)."""


@dataclass(frozen=True, slots=True)
class DurationSample:
    """One succeeded task: the work it did and its seconds from creation to completion.

    Example:
        >>> DurationSample(Work("image-b", "image"), 7.5).seconds
        7.5
    """

    work: Work
    seconds: float
    task_id: str | None = None

    @classmethod
    def of_record(cls, record: TaskRecord) -> DurationSample | None:
        """The sample a record teaches: None unless it succeeded with both timestamps."""
        seconds = record.seconds
        if not record.succeeded or seconds is None or seconds <= 0 or not record.model:
            return None
        return cls(Work.of_record(record), seconds, record.task_id)


@dataclass(frozen=True, slots=True)
class KindPrior:
    """What a kind's tasks are assumed to take before any has finished (real seconds)."""

    fixed: float
    per_second: float
    gamma: float
    delta: float
    sigma: float


PRIORS: dict[str, KindPrior] = {
    # A 5 s 720P clip in about half a minute; images in a few seconds. Wide (sigma 0.5:
    # 90 % within x0.44..x2.3), since another service may be quite unlike the emulator.
    "video": KindPrior(fixed=10.0, per_second=4.0, gamma=0.55, delta=0.0, sigma=0.5),
    "image": KindPrior(fixed=7.0, per_second=0.0, gamma=0.35, delta=0.35, sigma=0.5),
}
UNKNOWN_PRIOR = KindPrior(fixed=20.0, per_second=0.0, gamma=0.0, delta=0.0, sigma=0.8)
KIND_SIGMA = 0.8  # a prior's spread, set by the kind's other models' pace
SERVICE_SIGMA = 0.9  # ... set by other kinds' pace only

NOISE_PRIOR = 0.25  # the spread assumed of one model's tasks, before residuals say otherwise
FIDELITY_PRIOR = 0.3  # how far a model is assumed to run from where its kind's pace puts it
FIDELITY_LOG_SD = 1.0  # ... held loosely: the spread (in log) of that assumption
FIDELITY_GRID = tuple(0.01 * 1.15**i for i in range(36))  # the values of it weighed (to ~1.3)
NOISE_WEIGHT = 2.0  # ... worth this many residuals
SHAPE_WEIGHT = 2.0  # pseudo-samples holding fixed/per_second to the prior's ratio
GAMMA_WEIGHT = 1.0  # shrinkage of a model's own gamma toward its kind's
MIN_SIGMA = 0.05
REACH_PIXELS = 0.5  # spread added per log-unit of pixels beyond the tiers a model ran at
REACH_SECONDS = 0.25  # ... and per log-unit of output seconds beyond the lengths it ran
MIN_SHAPE = 8  # residuals of a kind needed before their shape replaces the normal
SHAPE_PER_MODEL = 40  # newest residuals of each model in its kind's shape
SHAPE_POINTS = 24  # quantiles of the shape a forecast carries


@dataclass(frozen=True, slots=True)
class _Fit:
    fixed: float
    per_second: float
    gamma: float
    noise: float
    n: int
    pixels: tuple[float, float]  # log-pixel range seen
    seconds: tuple[float, float]  # log1p output-second range seen
    typical: Work  # the median work seen, standing in for what a bare task id does not say


class DurationModel:
    """Per-model duration fits, refitted as samples arrive. Thread-safe.

    Args:
        samples: finished tasks to start from.
        scale: multiplies the priors (not what is learned); 0.05 for a 20x emulator.
        window: the newest samples kept per model.
        source: called once, on first use, for more samples (a client passes its history's
            ``duration_samples``, so an unused client never reads its history). A source that
            fails is logged and the model starts from what it has.

    Example:
        >>> DurationModel().predict(Work("image-b", "image")).median
        7.0
    """

    def __init__(
        self,
        samples: Iterable[DurationSample] = (),
        *,
        scale: float = 1.0,
        window: int = 200,
        source: Callable[[], Iterable[DurationSample]] | None = None,
    ) -> None:
        self.scale = scale
        self._declared: float | None = None
        self._source = source
        self._lock = threading.Lock()
        self._samples: defaultdict[str, deque[DurationSample]] = defaultdict(
            lambda: deque(maxlen=window)
        )
        self._kinds: dict[str, str] = {}
        self._fits: dict[str, _Fit] = {}
        self._residuals: dict[str, tuple[float, ...]] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._version = 0  # bumped by every refit: what the cached fidelity was learned from
        # (version, prior scale, declared) -> each model's pace and tau2 (see _fidelity_of)
        self._fidelity: tuple[tuple[int, float, bool], dict[str, float], float | None] | None = None
        for sample in samples:
            self._add(sample)
        for name in list(self._samples):
            self._refit(name)

    def observe(self, sample: DurationSample | None) -> None:
        """Learn from one finished task (None and already-seen task ids are ignored)."""
        if sample is None:
            return
        with self._lock:
            self._load()
            if self._add(sample):
                self._refit(sample.work.model)

    def declare(self, time_scale: float) -> None:
        """The service said how fast it runs against the real service (0.1: ten times
        faster): priors are scaled by it, in place of ``scale``, and forecasts carry it as the
        pace of their poll intervals. A value that is not a positive number is ignored."""
        if isinstance(time_scale, int | float) and 0 < time_scale < math.inf:
            self._declared = float(time_scale)

    @property
    def prior_scale(self) -> float:
        """What the priors are multiplied by: the declared time scale, else ``scale``."""
        return self._declared if self._declared is not None else self.scale

    def estimate(self, work: Work) -> Estimate:
        """The forecast's median seconds, saying whether anything of this service backs it.

        Example:
            >>> model = DurationModel()
            >>> model.estimate(Work("image-b", "image")).learned
            False
            >>> model.declare(0.1)
            >>> round(model.estimate(Work("image-b", "image")), 2), model.estimate(
            ...     Work("image-b", "image")).learned
            (0.7, True)
        """
        forecast = self.predict(work)
        return Estimate(forecast.median + forecast.offset, learned=forecast.learned)

    def predict(self, work: Work) -> Prediction:
        """The forecast for ``work``: its model's fit, else its kind's prior."""
        forecast = self._predict(work)
        return replace(forecast, pace=self._declared) if self._declared is not None else forecast

    def _predict(self, work: Work) -> Prediction:
        with self._lock:
            self._load()
            kind = work.kind or self._kinds.get(work.model)
            fit = self._fits.get(work.model)
            if fit is None:
                if kind == "video" and work.seconds is None:
                    work = replace(work, seconds=float(DEFAULT_DURATION))
                return self._from_prior(work, kind)
            if work.pixels is None or (work.seconds is None and fit.typical.seconds):
                work = replace(
                    work,
                    pixels=work.pixels or fit.typical.pixels,
                    seconds=work.seconds if work.seconds is not None else fit.typical.seconds,
                )
            prior = PRIORS.get(kind or "", UNKNOWN_PRIOR)
            median = self._shape(fit.fixed, fit.per_second, fit.gamma, prior.delta, work, kind)
            # Parameter uncertainty shrinks with samples; extrapolating beyond the tiers and
            # lengths seen adds some.
            reach = _outside(_log_pixels(work, kind), fit.pixels) * REACH_PIXELS + _outside(
                math.log1p(work.seconds or 0.0), fit.seconds
            ) * REACH_SECONDS
            noise = self._noise_of(kind)
            median, unsure = self._shrunk(work.model, fit, median, noise, work, kind)
            shape = self._shape_of(kind)
            if len(shape) < MIN_SHAPE:
                sigma = math.sqrt(noise**2 + unsure + reach**2)
                return Prediction(median, max(MIN_SIGMA, sigma), fit.n)
            # The residuals seen (pooled over the kind's models) give the shape; each is
            # smoothed by the usual kernel width plus what this model's median is unsure of.
            kernel = 0.9 * statistics.pstdev(shape) * len(shape) ** -0.2
            sigma = math.sqrt(kernel**2 + unsure + reach**2)
            return Prediction(median, max(MIN_SIGMA / 2, sigma), fit.n, shape=_points(shape))

    def samples(self, model: str) -> int:
        """How many finished tasks of ``model`` the fit rests on."""
        with self._lock:
            self._load()
            return len(self._samples.get(model, ()))

    # --- fitting ---------------------------------------------------------------------

    def _load(self) -> None:
        source, self._source = self._source, None
        if source is None:
            return
        try:
            added = [sample.work.model for sample in source() if self._add(sample)]
        except Exception:  # a history problem must not stop a wait: start from the priors
            logger.exception("genlab: could not read past durations from the history")
            return
        for name in set(added):
            self._refit(name)

    def _shape_of(self, kind: str | None) -> tuple[float, ...]:
        """The kind's residuals, each model's widened for the fit it came from (a model's own
        fit sits closer to its samples than to its next task: by ``sqrt(n / (n - 1))``)."""
        return tuple(
            r * math.sqrt(n / (n - 1))
            for m, rs in self._residuals.items()
            if self._kinds.get(m) == kind and (n := self._fits[m].n) > 1
            for r in rs
        )

    def _noise_of(self, kind: str | None) -> float:
        """The spread of one task about its model's fit, pooled over the kind's models (each
        model's first task only fixes its fit, so counts ``n - 1``) and held to the prior.
        A kind none of whose models has run twice borrows the service's other kinds'."""
        squares, freedom = NOISE_WEIGHT * NOISE_PRIOR**2, NOISE_WEIGHT
        for everyone in (False, True):
            for m, fit in self._fits.items():
                if (everyone or self._kinds.get(m) == kind) and fit.n > 1:
                    squares += fit.noise**2 * fit.n
                    freedom += fit.n - 1
            if freedom > NOISE_WEIGHT:
                break
        return math.sqrt(squares / freedom)

    # --- how closely this service follows its priors (empirical Bayes) ----------------

    def _centre(self, kind: str | None, paces: dict[str, float], tau2: float,
                without: str | None = None) -> tuple[float, float] | None:
        """Where a model of ``kind`` is expected to run against its kind's prior (log), and
        how unsure that is (a variance): the mean pace of the kind's other models, else of
        the service's other models, else 0 when the service declared its time scale (the
        priors at that scale); None when nothing says it (an unknown service's first model).

        ``k`` models' mean pace misses a new model's by its own ``tau2`` plus the mean's
        variance ``(tau2 + v) / k``, with ``v`` the mean variance of one model's pace measured
        from its ``n`` tasks (``noise**2 / n``); only the second part is returned here."""
        others = {m: d for m, d in paces.items() if m != without}
        mine = [m for m in others if self._kinds.get(m) == kind]
        chosen = mine or list(others)
        if not chosen:
            return (0.0, 0.0) if self._declared is not None else None
        v = statistics.fmean(self._noise_of(self._kinds.get(m)) ** 2 / self._fits[m].n
                             for m in chosen)
        return statistics.fmean(others[m] for m in chosen), (tau2 + v) / len(chosen)

    def _fidelity_of(self) -> tuple[dict[str, float], float | None]:
        """Each model's pace against its kind's prior (log), and ``tau2``: the variance of a
        model's pace about where its kind's pace puts it, learned from the models that ran
        (None before any model could be compared with a pace set without it).

        The model: a model's pace is ``c + u``, ``c`` the pace of the service (what
        :meth:`_centre` estimates), ``u ~ N(0, tau2)`` the model's own deviation. Each model
        ``m`` that ran is a forecast test: its pace less the centre set by the others,
        ``e = d_m - c_-m``, is normal with variance ``tau2 (1 + 1/k) + v_m + v/k`` (its own
        deviation, the centre's; ``v_m = noise**2 / n_m`` from its finished tasks, the
        residuals). ``tau2`` is weighed on a grid of values by the likelihood of every
        model's ``e`` times a log-normal prior about ``FIDELITY_PRIOR``; the answer is its
        posterior mean in log (``exp(2 E[log tau])``, not pulled up by the prior's long tail).
        A service whose models land within a few percent of their priors narrows ``tau2``
        after a few models; one whose models scatter keeps it wide. Cached until the next
        refit (or a newly declared time scale).
        """
        scale = self.prior_scale
        key = (self._version, scale, self._declared is not None)
        if self._fidelity is not None and self._fidelity[0] == key:
            return self._fidelity[1], self._fidelity[2]
        paces = {m: self._pace(m, f, scale) for m, f in self._fits.items()}
        tests = []  # (e, v_m, mean v of the centre, k) per model with a centre without it
        for m, fit in self._fits.items():
            kind = self._kinds.get(m)
            centre = self._centre(kind, paces, 0.0, without=m)
            if centre is None:
                continue
            c, v_centre = centre  # with tau2 = 0: v / k, the centre's own measuring error
            others = [o for o in paces if o != m]
            k = len([o for o in others if self._kinds.get(o) == kind]) or len(others)
            v_m = self._noise_of(kind) ** 2 / fit.n
            tests.append((paces[m] - c, v_m, v_centre, k))
        tau2: float | None = None
        if tests:
            weights = []
            for tau in FIDELITY_GRID:
                t2 = tau * tau
                log_w = -0.5 * (math.log(tau / FIDELITY_PRIOR) / FIDELITY_LOG_SD) ** 2
                for e, v_m, v_centre, k in tests:
                    var = t2 * (1 + (1 / k if k else 0.0)) + v_m + v_centre
                    log_w -= 0.5 * (math.log(var) + e * e / var)
                weights.append(log_w)
            top = max(weights)
            ws = [math.exp(w - top) for w in weights]
            log_tau = sum(w * math.log(t) for w, t in zip(ws, FIDELITY_GRID, strict=True))
            tau2 = math.exp(2 * log_tau / sum(ws))
        self._fidelity = (key, paces, tau2)
        return paces, tau2

    def _shrunk(self, model: str, fit: _Fit, median: float, noise: float, work: Work,
                kind: str | None) -> tuple[float, float]:
        """A fitted model's median, drawn toward where its kind's pace puts it, and the
        variance (log) left in that median.

        Its ``n`` tasks measure its pace with variance ``noise**2 / n``; the centre ``c``
        set by the other models (with variance ``w_c``) places it within ``tau2``. The
        posterior of a normal mean: precisions add, ``P = n / noise**2 + 1 / tau2``, and the
        median is the precision-weighted mean of the two, ``a = (n / noise**2) / P`` on the
        model's own fit; what is left unsure is ``1 / P + (1 - a)**2 w_c``. A service that
        follows its priors (small ``tau2``) thus needs few tasks of a model to place it well;
        with nothing to compare (``tau2`` not learned yet) it is the fit alone,
        ``noise**2 / n``.
        """
        own = noise**2 / fit.n
        paces, tau2 = self._fidelity_of()
        centre = self._centre(kind, paces, tau2 or 0.0, without=model) if tau2 else None
        if centre is None or tau2 is None:
            return median, own
        c, w_c = centre
        precision = 1 / own + 1 / tau2
        a = (1 / own) / precision
        guessed = self._prior_median(work, kind, self.prior_scale) * math.exp(c)
        shrunk = math.exp(a * math.log(median) + (1 - a) * math.log(guessed))
        return shrunk, 1 / precision + (1 - a) ** 2 * w_c

    def _add(self, sample: DurationSample) -> bool:
        if sample.seconds <= 0 or not sample.work.model:
            return False
        if sample.task_id is not None:
            if sample.task_id in self._seen:
                return False
            self._seen[sample.task_id] = None
            if len(self._seen) > 10_000:
                self._seen.popitem(last=False)
        self._samples[sample.work.model].append(sample)
        if sample.work.kind:
            self._kinds[sample.work.model] = sample.work.kind
        return True

    def _shape(
        self, fixed: float, per_second: float, gamma: float, delta: float, work: Work,
        kind: str | None,
    ) -> float:
        base = fixed + per_second * (work.seconds or 0.0)
        images = math.exp(delta * math.log(max(1, work.count)))
        return max(1e-6, base * math.exp(gamma * _log_pixels(work, kind)) * images)

    def _from_prior(self, work: Work, kind: str | None) -> Prediction:
        prior = PRIORS.get(kind or "", UNKNOWN_PRIOR)
        median = self._prior_median(work, kind, self.prior_scale)
        # Other models, each compared with its own kind's prior on the work it did, say how
        # this service runs (whole durations, not ``fixed`` alone: a fit may split them
        # differently from the prior). The kind's own models say it best; without any, the
        # service's other kinds do: a fast service is fast at everything.
        ratios, tau2 = self._fidelity_of()
        mine = [r for m, r in ratios.items() if self._kinds.get(m) == kind]
        informed = self._declared is not None
        centre = self._centre(kind, ratios, tau2) if tau2 is not None else None
        if centre is not None and tau2 is not None:
            # Learned how closely models follow their priors: the kind's (else the service's)
            # pace, missed by a new model's own deviation (tau2) and the centre's error, plus
            # one task's noise about its model: the kind's residuals when enough, else normal.
            c, w_c = centre
            shape = self._shape_of(kind)
            if len(shape) >= MIN_SHAPE:
                kernel = 0.9 * statistics.pstdev(shape) * len(shape) ** -0.2
                return Prediction(median * math.exp(c), math.sqrt(kernel**2 + tau2 + w_c), 0,
                                  shape=_points(shape), informed=True)
            sigma = math.sqrt(self._noise_of(kind) ** 2 + tau2 + w_c)
            return Prediction(median * math.exp(c), sigma, 0, informed=True)
        if mine:
            return Prediction(median * math.exp(statistics.fmean(mine)),
                              prior.sigma * KIND_SIGMA, 0, informed=True)
        if ratios:
            return Prediction(median * math.exp(statistics.fmean(ratios.values())),
                              prior.sigma * SERVICE_SIGMA, 0, informed=True)
        if informed:
            # Nothing ran yet, but the service declared its time scale: the priors at that
            # scale are the centre, missed by a new model's deviation at the fidelity's prior
            # (tau) and one task's noise, as after the first tasks, only not yet learned. The
            # prior's own spread also covers a service of unknown speed, which this is not.
            sigma = math.sqrt(self._noise_of(kind) ** 2 + FIDELITY_PRIOR**2)
            return Prediction(median, min(prior.sigma, sigma), 0, informed=True)
        return Prediction(median, prior.sigma, 0, informed=informed)

    def _pace(self, model: str, fit: _Fit, scale: float) -> float:
        """How much slower than its kind's prior ``model`` ran, on the work it did (log)."""
        kind = self._kinds.get(model)
        prior = PRIORS.get(kind or "", UNKNOWN_PRIOR)
        ran = self._shape(fit.fixed, fit.per_second, fit.gamma, prior.delta, fit.typical, kind)
        return math.log(ran / self._prior_median(fit.typical, kind, scale))

    def _prior_median(self, work: Work, kind: str | None, scale: float) -> float:
        """What ``kind``'s prior, at ``scale``, says ``work`` takes."""
        prior = PRIORS.get(kind or "", UNKNOWN_PRIOR)
        return self._shape(prior.fixed * scale, prior.per_second * scale, prior.gamma,
                           prior.delta, work, kind)

    def _refit(self, model: str) -> None:
        self._version += 1
        samples = list(self._samples[model])
        kind = self._kinds.get(model)
        prior = PRIORS.get(kind or "", UNKNOWN_PRIOR)
        gamma = prior.gamma
        fixed, per_second = self._fit_line(samples, prior, gamma, kind)
        logs = [_log_pixels(s.work, kind) for s in samples]
        centre = statistics.fmean(logs)
        if max(logs) - min(logs) > 0.1:  # ran at more than one tier: learn its own gamma
            residuals = [
                math.log(s.seconds / self._shape(fixed, per_second, gamma, prior.delta, s.work,
                                                 kind))
                for s in samples
            ]
            spread = [x - centre for x in logs]
            gamma += sum(x * r for x, r in zip(spread, residuals, strict=True)) / (
                sum(x * x for x in spread) + GAMMA_WEIGHT
            )
            gamma = min(1.5, max(0.0, gamma))
            fixed, per_second = self._fit_line(samples, prior, gamma, kind)
        errors = [
            math.log(s.seconds / self._shape(fixed, per_second, gamma, prior.delta, s.work, kind))
            for s in samples
        ]
        self._residuals[model] = tuple(errors[-SHAPE_PER_MODEL:])
        noise = math.sqrt(statistics.fmean(e * e for e in errors))  # pooled in _noise_of
        lengths = [math.log1p(s.work.seconds or 0.0) for s in samples]
        pixels = [s.work.pixels for s in samples if s.work.pixels]
        seconds = [s.work.seconds for s in samples if s.work.seconds is not None]
        typical = Work(
            model,
            kind,
            int(statistics.median(pixels)) if pixels else None,
            statistics.median(seconds) if seconds else None,
        )
        self._fits[model] = _Fit(
            fixed, per_second, gamma, noise, len(samples),
            (min(logs), max(logs)), (min(lengths), max(lengths)), typical,
        )

    def _fit_line(
        self, samples: list[DurationSample], prior: KindPrior, gamma: float, kind: str | None
    ) -> tuple[float, float]:
        """``fixed`` and ``per_second`` of one model at a given ``gamma``.

        The scale comes from the median ratio to the prior's shape (robust to a slow outlier);
        with several output lengths seen, a least-squares line pulled toward that scaled shape
        (``SHAPE_WEIGHT`` pseudo-samples) lets the model's own fixed/per-second split show.
        """
        ys = [
            s.seconds / self._shape(1.0, 0.0, gamma, prior.delta, s.work, kind) for s in samples
        ]
        ds = [s.work.seconds or 0.0 for s in samples]
        ratio = math.exp(
            statistics.median(
                math.log(y / (prior.fixed + prior.per_second * d)) for y, d in zip(ys, ds,
                                                                                    strict=True)
            )
        )
        fixed, per_second = prior.fixed * ratio, prior.per_second * ratio
        if prior.per_second <= 0 or max(ds) - min(ds) < 1.0:
            return fixed, per_second
        # Weighted least squares of y = a + b*d with the prior line as pseudo-points at the
        # mean length: 2x2 normal equations.
        w = SHAPE_WEIGHT
        d0 = statistics.fmean(ds)
        xs = [*ds, d0, d0 + 1.0]
        ts = [*ys, fixed + per_second * d0, fixed + per_second * (d0 + 1.0)]
        ws = [1.0] * len(ds) + [w / 2, w / 2]
        sw = sum(ws)
        mx = sum(wi * x for wi, x in zip(ws, xs, strict=True)) / sw
        my = sum(wi * t for wi, t in zip(ws, ts, strict=True)) / sw
        sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(ws, xs, strict=True))
        sxy = sum(wi * (x - mx) * (t - my) for wi, x, t in zip(ws, xs, ts, strict=True))
        b = sxy / sxx if sxx > 0 else per_second
        a = my - b * mx
        if a <= 0 or b < 0:  # a line the shape cannot be: keep the scaled prior
            return fixed, per_second
        return a, b


class Estimate(float):
    """Seconds a task will likely take, and whether this service's own tasks (or its declared
    time scale) back it (``learned``) or it is only a prior.

    Example:
        >>> guess = Estimate(26.0, learned=False)
        >>> guess + 1.0, guess.learned
        (27.0, False)
    """

    learned: bool

    def __new__(cls, seconds: float, *, learned: bool) -> Estimate:
        made = super().__new__(cls, seconds)
        made.learned = learned
        return made


def _log_pixels(work: Work, kind: str | None) -> float:
    reference = REFERENCE_PIXELS.get(kind or work.kind or "")
    if not work.pixels or reference is None:
        return 0.0
    return math.log(work.pixels / reference)


def _points(shape: tuple[float, ...]) -> tuple[float, ...]:
    """A shape's quantiles stand for it: the same shape at a fixed, small cost per poll."""
    if len(shape) > SHAPE_POINTS:
        return tuple(statistics.quantiles(shape, n=SHAPE_POINTS + 1, method="inclusive"))
    return shape


def _outside(value: float, seen: tuple[float, float]) -> float:
    low, high = seen
    return max(0.0, low - value, value - high)
