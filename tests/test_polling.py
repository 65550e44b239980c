"""Polling: the duration model, the forecast, the schedule built on it, and polling hints.

Everything here is deterministic: schedules are pure functions of elapsed time, and the wait
loop is given a ``sleep`` that records delays instead of sleeping. No assertion is on time.
"""

from __future__ import annotations

import logging
import random
import re
import statistics
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from itertools import pairwise
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from genlab import AsyncClient, ConfigurationError
from genlab.client import FixedPacing, Task, TaskRecord
from genlab.client._async import LiveLine
from genlab.client._config import resolve_config
from genlab.client._durations import DurationModel, Estimate
from genlab.client._pacing import ForecastPacing, Pacer, PollSchedule, Prediction
from genlab.client._transport import Http, poll_hint
from genlab.client.journal import DurationSample, MemoryJournal, SubmitEntry, Work

P720, P1080, P480 = 1280 * 720, 1920 * 1080, 854 * 480


def clip(seconds: float = 5.0, pixels: int = P720, model: str = "video-a") -> Work:
    return Work(model, "video", pixels, seconds)


def sample(work: Work, seconds: float, task_id: str | None = None) -> DurationSample:
    return DurationSample(work, seconds, task_id)


def polls_until(schedule: PollSchedule, finish: float, limit: int = 10_000) -> list[float]:
    """The poll times of a schedule for a task that finishes at ``finish`` (first at 0)."""
    times, t = [0.0], 0.0
    while t < finish and len(times) < limit:
        t += schedule.next_delay(t)
        times.append(t)
    return times


# --- the duration model ---------------------------------------------------------------


def test_before_any_task_finished_the_kind_prior_answers_with_a_wide_spread() -> None:
    model = DurationModel()
    video, image = model.predict(clip()), model.predict(Work("image-b", "image", 1024 * 1024))
    assert video.samples == 0 and image.samples == 0
    assert video.median == pytest.approx(30.0)  # 10 s + 4 s per output second, at 720P
    assert image.median == pytest.approx(7.0)
    assert video.sigma >= 0.4 and image.sigma >= 0.4
    assert DurationModel(scale=0.05).predict(clip()).median == pytest.approx(1.5)


def test_one_finished_720p_5s_task_predicts_1080p_10s() -> None:
    model = DurationModel()
    model.observe(sample(clip(5.0, P720), 60.0, "t1"))
    same = model.predict(clip(5.0, P720))
    bigger = model.predict(clip(10.0, P1080))
    smaller = model.predict(clip(2.0, P480))
    assert same.median == pytest.approx(60.0) and same.samples == 1
    # Twice the prior's guess for 720P 5 s, so twice its guess for 1080P 10 s too.
    assert bigger.median == pytest.approx(2 * DurationModel().predict(clip(10.0, P1080)).median)
    assert smaller.median < same.median < bigger.median
    assert bigger.sigma > same.sigma  # further from what was seen: less sure


def test_a_model_learns_its_own_fixed_and_per_second_parts() -> None:
    model = DurationModel()
    for i, d in enumerate([2, 4, 6, 8, 10, 12] * 3):
        model.observe(sample(clip(d), 20.0 + 1.0 * d, f"t{i}"))  # prior says 10 + 4/s
    assert model.predict(clip(15.0)).median == pytest.approx(35.0, rel=0.1)
    assert model.predict(clip(2.0)).median == pytest.approx(22.0, rel=0.1)


def test_a_model_learns_how_resolution_scales_it() -> None:
    model = DurationModel()
    for i in range(10):  # this model does not care about resolution at all
        model.observe(sample(clip(5.0, P480), 30.0, f"a{i}"))
        model.observe(sample(clip(5.0, P1080), 30.0, f"b{i}"))
    prior_ratio = (P1080 / P480) ** 0.55
    learned = model.predict(clip(5.0, P1080)).median / model.predict(clip(5.0, P480)).median
    assert learned < 1 + (prior_ratio - 1) / 2


def test_more_images_per_call_take_longer() -> None:
    model = DurationModel()
    model.observe(sample(Work("image-a", "image", 1024 * 1024, None, 1), 8.0, "t1"))
    one = model.predict(Work("image-a", "image", 1024 * 1024, None, 1)).median
    four = model.predict(Work("image-a", "image", 1024 * 1024, None, 4)).median
    assert four > one


def test_the_spread_is_learned_from_how_far_tasks_fell_from_the_fit() -> None:
    rng = random.Random(0)
    tight, loose = DurationModel(), DurationModel()
    for i in range(40):
        tight.observe(sample(clip(), 30.0 * rng.uniform(0.97, 1.03), f"t{i}"))
        loose.observe(sample(clip(), 30.0 * rng.uniform(0.6, 1.6), f"l{i}"))
    t, lo = tight.predict(clip()), loose.predict(clip())
    assert t.quantile(0.95) / t.quantile(0.05) < 1.3
    assert lo.quantile(0.95) / lo.quantile(0.05) > 1.8


def test_a_new_model_starts_from_how_its_kinds_other_models_ran() -> None:
    model = DurationModel()
    for i in range(5):  # video-a runs three times slower than the prior says
        model.observe(sample(clip(5.0), 90.0, f"t{i}"))
    unseen = model.predict(clip(5.0, model="video-f"))
    assert unseen.samples == 0 and unseen.median == pytest.approx(90.0, rel=0.05)
    # No image has run: the service's pace (three times slower) is the best guess there too.
    image = model.predict(Work("image-b", "image", 1024 * 1024))
    assert image.samples == 0 and image.median == pytest.approx(21.0, rel=0.05)


def test_a_new_model_is_compared_on_whole_durations_not_on_a_fits_fixed_part() -> None:
    model = DurationModel()
    for i in range(4):  # video-a: 30 s at 4 s, 34 s at 8 s, a line mostly fixed (24 + 1/s)
        model.observe(sample(clip(4.0), 30.0 * (1 + 0.01 * i), f"a{i}"))
        model.observe(sample(clip(8.0), 34.0 * (1 - 0.01 * i), f"b{i}"))
    prior = DurationModel().predict(clip(4.0, model="video-b")).median
    ran = model.predict(clip(4.0)).median / prior  # video-a ran this much slower than the prior
    unseen = model.predict(clip(4.0, model="video-b"))
    assert unseen.samples == 0
    assert unseen.median == pytest.approx(prior * ran, rel=0.25)  # not its fixed part's x2.4


def test_a_models_first_task_borrows_the_spread_its_kind_has_shown() -> None:
    rng = random.Random(1)
    model = DurationModel()
    for i in range(12):  # video-a: within +-3 % of its fit, every time
        model.observe(sample(clip(5.0), 40.0 * rng.uniform(0.97, 1.03), f"a{i}"))
    model.observe(sample(clip(5.0, model="video-b"), 50.0, "b0"))
    alone = DurationModel()
    alone.observe(sample(clip(5.0, model="video-b"), 50.0, "b0"))
    assert model.predict(clip(5.0, model="video-b")).sigma < alone.predict(
        clip(5.0, model="video-b")).sigma / 2


def _follower(tasks_per_model: int, models: tuple[str, ...], pace: dict[str, float] | None = None,
              seed: int = 2) -> DurationModel:
    """A duration model that saw ``tasks_per_model`` tasks of each model, each within +-25 %
    of its kind's prior times the model's ``pace`` (1: as the prior says)."""
    rng = random.Random(seed)
    model = DurationModel()
    for name in models:
        for i in range(tasks_per_model):
            work = clip(4.0 + 4.0 * (i % 2), model=name)
            expected = DurationModel().predict(work).median * (pace or {}).get(name, 1.0)
            model.observe(sample(work, expected * rng.uniform(0.75, 1.25), f"{name}-{i}"))
    return model


def spread(prediction: Prediction) -> float:
    """How many times longer the 95th percentile is than the 5th."""
    return prediction.quantile(0.95) / prediction.quantile(0.05)


def test_a_service_that_follows_its_priors_narrows_the_forecast_of_models_not_seen_yet() -> None:
    model = _follower(3, ("video-a", "video-b", "video-c"))
    prior = DurationModel().predict(clip(model="video-f"))
    unseen = model.predict(clip(model="video-f"))
    assert unseen.samples == 0 and unseen.learned
    assert spread(unseen) < spread(prior) ** 0.6  # narrower than the prior, not just its pace
    # No image has run: a service that keeps to its video priors is trusted on images too.
    image = Work("image-b", "image", 1024 * 1024)
    assert spread(model.predict(image)) < spread(DurationModel().predict(image)) ** 0.7
    # ... and it still covers the +-25 % its tasks vary by.
    assert unseen.quantile(0.05) < 0.8 * unseen.median and unseen.quantile(0.95) > 1.2 * (
        unseen.median)


def test_a_declared_time_scale_narrows_the_first_forecast_to_a_models_own_uncertainty() -> None:
    # The prior's spread also covers a service of unknown speed; a service that says how fast
    # it runs leaves only how far a model strays from its prior and one task's draw.
    unknown = DurationModel().predict(clip())
    declared = DurationModel()
    declared.declare(0.1)
    first = declared.predict(clip())
    assert first.samples == 0 and first.median == pytest.approx(0.1 * unknown.median)
    assert spread(first) < spread(unknown) ** 0.9  # narrower ...
    assert first.quantile(0.05) < 0.7 * first.median  # ... and still wide enough for a model
    assert first.quantile(0.95) > 1.4 * first.median  # that strays 40 % from its prior
    image = Work("image-b", "image", 1024 * 1024)
    assert spread(declared.predict(image)) < spread(DurationModel().predict(image))


def test_a_service_whose_models_scatter_about_their_priors_keeps_wide_forecasts() -> None:
    paces = {"video-a": 0.4, "video-b": 2.5, "video-c": 1.0, "video-d": 0.6}
    model = _follower(3, tuple(paces), paces)
    unseen = model.predict(clip(model="video-f"))
    assert spread(unseen) >= spread(Prediction(1.0, 0.4))  # as wide as it was, or wider


def test_a_models_few_tasks_are_read_against_how_closely_its_siblings_follow_the_priors() -> None:
    # Four models ran as the priors say; video-f's one task ran 20 % over. In such a service
    # that is more likely its draw than its pace: its next forecast lies between the two.
    model = _follower(4, ("video-a", "video-b", "video-c", "video-d"))
    prior = DurationModel().predict(clip(5.0)).median
    model.observe(sample(clip(5.0, model="video-f"), 1.2 * prior, "f0"))
    forecast = model.predict(clip(5.0, model="video-f"))
    assert forecast.samples == 1 and prior < forecast.median < 1.2 * prior
    alone = DurationModel()
    alone.observe(sample(clip(5.0, model="video-f"), 1.2 * prior, "f0"))
    assert alone.predict(clip(5.0, model="video-f")).median == pytest.approx(1.2 * prior)


def test_the_same_task_teaches_once_and_failures_teach_nothing() -> None:
    model = DurationModel()
    model.observe(sample(clip(), 30.0, "t1"))
    model.observe(sample(clip(), 90.0, "t1"))
    assert model.samples("video-a") == 1
    failed = TaskRecord(task_id="f", status="failed", model="video-a",
                        created_at="2026-01-01T00:00:00Z", completed_at="2026-01-01T00:01:00Z")
    assert DurationSample.of_record(failed) is None


def test_a_succeeded_record_shows_the_work_it_did() -> None:
    record = TaskRecord.model_validate({
        "task_id": "t1", "status": "succeeded", "model": "video-c", "kind": "video",
        "created_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:41.5Z",
        "videos": [{"url": "https://cdn/x.mp4", "width": 1920, "height": 1080, "duration": 8}],
    })
    learned = DurationSample.of_record(record)
    assert learned == DurationSample(Work("video-c", "video", P1080, 8.0, 1), 41.5, "t1")


def test_the_work_of_a_request_comes_from_the_catalog_plan() -> None:
    assert Work.of_body({"model": "video-a", "prompt": "x", "resolution": "1080P",
                         "duration": 10}) == Work("video-a", "video", P1080, 10.0, 1)
    assert Work.of_body({"model": "video-a", "duration": -1}) == Work("video-a")  # invalid


def test_history_is_read_once_and_only_when_needed() -> None:
    calls: list[int] = []

    def source() -> list[DurationSample]:
        calls.append(1)
        return [sample(clip(), 45.0, "old")]

    model = DurationModel(source=source)
    assert calls == []
    assert model.predict(clip()).median == pytest.approx(45.0)
    model.observe(sample(clip(), 45.0, "new"))
    assert calls == [1] and model.samples("video-a") == 2


def test_a_history_that_cannot_answer_leaves_the_priors(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> list[DurationSample]:
        raise OSError("database is locked")

    with caplog.at_level(logging.ERROR, logger="genlab"):
        prediction = DurationModel(source=broken).predict(clip())
    assert prediction.samples == 0 and "past durations" in caplog.text


def test_the_memory_journal_keeps_succeeded_tasks_as_samples() -> None:
    journal = MemoryJournal()
    entry = SubmitEntry(body={"model": "video-a"}, model="video-a", kind="video",
                        mode="text-to-video", credits=800, submitted_at=datetime.now(UTC))
    for task_id, status, seconds in [("a", "succeeded", 12.0), ("b", "failed", 50.0),
                                     ("c", "succeeded", 14.0)]:
        journal.submit_accepted(journal.submit_started(entry), Task(task_id=task_id))
        journal.status_changed(TaskRecord.model_validate({
            "task_id": task_id, "status": status, "model": "video-a", "kind": "video",
            "created_at": "2026-01-01T00:00:00Z",
            "completed_at": f"2026-01-01T00:00:{seconds:06.3f}Z",
        }))
    assert [(s.task_id, s.seconds) for s in journal.duration_samples()] == [
        ("c", 14.0), ("a", 12.0)]  # newest first; the failure teaches nothing
    assert len(journal.duration_samples(limit=1)) == 1


# --- the forecast ---------------------------------------------------------------------


def test_a_learned_band_has_no_chance_before_it_opens() -> None:
    band = Prediction(20.0, 0.02, shape=tuple(x / 100 for x in range(-20, 21, 4)))
    assert band.hazard(14.0) < 1e-9
    assert band.hazard(20.0) > 0.05
    assert band.hazard(24.0) > band.hazard(20.0)  # the band's end is near: finishing is likely
    assert band.quantile(0.05) == pytest.approx(20.0 * 2.718 ** -0.19, rel=0.05)


def test_a_long_queue_moves_the_forecast_later() -> None:
    p = Prediction(20.0, 0.2)
    assert p.shifted(10.0).quantile(0.5) == pytest.approx(30.0)
    assert p.shifted(10.0).hazard(15.0) < 1e-9 < p.hazard(15.0)


# --- the schedule ---------------------------------------------------------------------


def test_it_sleeps_until_the_task_may_be_done_then_polls_closely() -> None:
    schedule = PollSchedule(Prediction(30.0, 0.1, samples=20), jitter=0)  # a learned forecast
    times = polls_until(schedule, 30.0)
    assert 20.0 < times[1] < 27.0  # one sleep first
    near = [b - a for a, b in pairwise(times) if a > 27.0]
    assert max(near) <= schedule.min_gap + 1e-9


def test_polls_are_densest_where_finishing_is_likeliest() -> None:
    schedule = PollSchedule(Prediction(60.0, 0.3), jitter=0)
    gap = {t: schedule.next_delay(t) for t in (20.0, 60.0, 200.0)}
    assert gap[60.0] < gap[20.0] and gap[60.0] < gap[200.0]


def test_a_learned_narrow_spread_needs_fewer_polls_than_the_prior() -> None:
    finish = [30.0 * f for f in (0.8, 0.9, 1.0, 1.1, 1.2)]
    wide = [len(polls_until(PollSchedule(Prediction(30.0, 0.5), jitter=0), t)) for t in finish]
    narrow = [len(polls_until(PollSchedule(Prediction(30.0, 0.1), jitter=0), t)) for t in finish]
    assert sum(narrow) < sum(wide)


def test_a_learned_band_is_swept_evenly_from_one_gap_after_it_opens() -> None:
    forecast = Prediction(30.0, 0.1, samples=20)
    schedule = PollSchedule(forecast, jitter=0)
    start, end = forecast.quantile(schedule.edge), forecast.quantile(1 - schedule.edge)
    times = polls_until(schedule, end)
    inside = [t for t in times if start <= t < end]
    assert inside[0] == pytest.approx(start + schedule.min_gap, abs=1e-6)
    assert all(b - a == pytest.approx(schedule.min_gap) for a, b in pairwise(inside))
    assert len([t for t in times if t < start]) <= 4  # before the band: a few, spaced out


def test_the_band_swept_is_as_wide_as_the_learned_spread() -> None:
    def swept(sigma: float) -> int:
        schedule = PollSchedule(Prediction(30.0, sigma, samples=20), jitter=0)
        times = polls_until(schedule, 60.0)
        return sum(1 for a, b in pairwise(times) if b - a == pytest.approx(schedule.min_gap))

    assert swept(0.05) < swept(0.1) < swept(0.2)


def test_a_batch_sweeps_the_middle_of_a_prior_so_no_first_task_lags_far() -> None:
    prior = DurationModel().predict(clip())
    batch = PollSchedule.for_batch(prior)
    batch.jitter = 0
    start, end = prior.quantile(batch.prior_edge), prior.quantile(1 - batch.prior_edge)
    for finish in (start + 0.5, prior.median, end - 0.5):
        times = polls_until(batch, finish)
        assert times[-1] - finish <= batch.prior_gap + 1e-9
    times = polls_until(batch, end)
    inside = [b - a for a, b in pairwise(times) if start <= a < end - batch.prior_gap]
    assert inside and all(gap == pytest.approx(batch.prior_gap) for gap in inside)


def test_a_task_far_past_its_forecast_is_polled_ever_more_rarely() -> None:
    schedule = PollSchedule(Prediction(10.0, 0.2), jitter=0)
    times = polls_until(schedule, 600.0)
    late = [b - a for a, b in pairwise(times) if a > 50.0]
    assert late == sorted(late) and late[-1] > 5.0
    assert max(late) <= schedule.max_gap + 1e-9
    assert len(times) < 150  # a fixed 1 s poller needs 600


def test_without_history_the_first_video_is_still_polled_about_every_second() -> None:
    # The bug this issue is about: an empty history backed off to 10 s gaps.
    prior = DurationModel().predict(clip())
    for finish in (20.0, 30.0, 45.0):
        times = polls_until(PollSchedule(prior, jitter=0), finish)
        assert times[-1] - finish < 1.2
        assert len(times) < finish  # fewer requests than a fixed 1 s poller


def test_a_task_still_queued_past_the_usual_wait_moves_the_next_poll() -> None:
    forecast = Prediction(20.0, 0.1, samples=3)
    plain = PollSchedule(forecast, jitter=0)
    queued = PollSchedule(forecast, jitter=0)
    queued.observe("queued", 10.0)  # the usual queue is 1 s: 9 s late
    assert queued.prediction().quantile(0.5) == pytest.approx(29.0)
    assert queued.next_delay(10.0) > plain.next_delay(10.0) + 5.0
    plain.observe("processing", 10.0)  # processing as expected: nothing moves
    assert plain.prediction().quantile(0.5) == pytest.approx(20.0)


def test_the_forecast_is_asked_afresh_at_every_poll() -> None:
    model = DurationModel()
    work = clip()
    schedule = PollSchedule(lambda: model.predict(work), jitter=0)
    before = schedule.next_delay(5.0)
    for i in range(5):  # meanwhile, tasks of the same batch finish sooner than the prior
        model.observe(sample(work, 8.0, f"t{i}"))
    after = schedule.next_delay(5.0)
    learned = model.predict(work)
    assert after < before
    assert 5.0 + after < learned.quantile(0.5)  # due before the learned median


def test_a_batch_spends_fewer_requests_than_someone_watching() -> None:
    forecast = Prediction(30.0, 0.2)
    finish = [30.0 * f for f in (0.8, 0.9, 1.0, 1.1, 1.2)]
    watched = sum(len(polls_until(PollSchedule(forecast, jitter=0), t)) for t in finish)
    batch = sum(len(polls_until(PollSchedule.for_batch(forecast), t)) for t in finish)
    assert batch < watched


def test_a_batch_polls_nothing_between_the_submission_and_a_tasks_band() -> None:
    # A batch is judged by its p95 lag, set inside the bands: a poll seconds before a band
    # shortens only the lag of a task that finished early, which that p95 does not count.
    forecast = Prediction(40.0, 0.1, samples=5)
    batch, watched = PollSchedule.for_batch(forecast), PollSchedule(forecast, jitter=0)
    batch.jitter = 0
    start = forecast.quantile(batch.edge)
    times = polls_until(batch, forecast.median)
    assert [t for t in times if t < start] == [0.0]  # the query at submission alone
    assert times[1] == pytest.approx(start + batch.min_gap)
    assert times[-1] - forecast.median <= batch.min_gap + 1e-9
    assert len([t for t in polls_until(watched, forecast.median) if t < start]) > 1
    early = start - 5.0  # a task done before its band waits for the band's first poll
    assert polls_until(batch, early)[-1] == pytest.approx(start + batch.min_gap)


def test_a_batch_still_probes_a_bare_prior_and_polls_a_long_task_once_a_minute() -> None:
    # Nothing known of the service: a task ten times faster than the prior is found early.
    prior = DurationModel().predict(clip())
    assert not prior.learned
    batch = PollSchedule.for_batch(prior)
    batch.jitter = 0
    times = polls_until(batch, 3.0)
    assert times[-1] - 3.0 <= 0.8 * 3.0 + 1.0 and len(times) <= 5
    far = PollSchedule.for_batch(Prediction(300.0, 0.1, samples=5))
    far.jitter = 0
    before = [t for t in polls_until(far, 250.0) if t < 250.0]
    assert all(b - a <= 60.0 + 1e-9 for a, b in pairwise(before))
    assert 4 <= len(before) <= 6  # 0, 60, 120, 180, 240: nothing due before ~250 s


def test_a_service_hint_is_honoured_as_given() -> None:
    schedule = PollSchedule(Prediction(30.0, 0.1), jitter=0)
    assert schedule.next_delay(29.0, hint=7.5) == 7.5
    assert schedule.next_delay(0.0, hint=0.0) == pytest.approx(0.01)  # never a busy loop
    assert schedule.next_delay(0.0, hint=10_000.0) == 600.0


def test_scale_shrinks_every_interval() -> None:
    plain = PollSchedule(Prediction(30.0, 0.2), jitter=0)
    fast = PollSchedule(Prediction(30.0 * 0.1, 0.2), jitter=0, scale=0.1)
    for t in (0.0, 20.0, 28.0, 31.0, 45.0, 200.0):
        assert fast.next_delay(t * 0.1) == pytest.approx(plain.next_delay(t) * 0.1, rel=1e-3)


@given(
    median=st.floats(0.01, 5000),
    sigma=st.floats(0.01, 2.0),
    scale=st.floats(0.001, 10),
    elapsed=st.lists(st.floats(0, 10000), min_size=1, max_size=20),
    queued=st.floats(0, 100),
    seed=st.integers(0, 2**32),
)
def test_delays_are_always_within_their_bounds(
    median: float, sigma: float, scale: float, elapsed: list[float], queued: float, seed: int
) -> None:
    schedule = PollSchedule(Prediction(median, sigma), scale=scale, rng=random.Random(seed))
    schedule.observe("queued", queued)
    for e in elapsed:
        delay = schedule.next_delay(e)
        low = max(0.01, schedule.min_gap * scale * (1 - schedule.jitter))
        assert low - 1e-12 <= delay <= max(0.01, schedule.max_gap * scale) + 1e-9


# --- the wait loop and the service's hints --------------------------------------------


def record(status: str) -> TaskRecord:
    return TaskRecord(task_id="t1", status=status, model="video-a", kind="video")


class RecordingPacing:
    """A pacing that polls at once and notes what each pacer was told."""

    def __init__(self) -> None:
        self.told: list[tuple[str | None, float | None, bool]] = []

    def pacer(self, work: Work, *, batch: bool) -> Pacer:
        told = self.told

        class Noting:
            def next_delay(self, record: TaskRecord | None, elapsed: float,
                           hint: float | None) -> float:
                told.append((record.status if record is not None else None, hint, batch))
                return 0.0

        return Noting()


def service_with_hints(answers: list[tuple[str, str | None]]) -> httpx.MockTransport:
    """A service unlike the emulator: some task queries carry a polling hint, some do not."""
    queue = iter(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t1", "model": "video-a",
                                             "created_at": "2026-01-01T00:00:00Z"})
        status, hint = next(queue)
        body: dict[str, Any] = {"task_id": "t1", "status": status, "model": "video-a",
                                "created_at": "2026-01-01T00:00:00Z"}
        if status == "succeeded":
            body["completed_at"] = "2026-01-01T00:00:30Z"
            body["videos"] = [{"url": "https://cdn/x.mp4", "width": 1280, "height": 720,
                               "duration": 5}]
        return httpx.Response(200, json=body, headers={"Poll-After": hint} if hint else {})

    return httpx.MockTransport(handle)


async def test_the_pacer_is_told_each_record_with_the_hint_that_came_with_it() -> None:
    pacing = RecordingPacing()
    transport = service_with_hints(
        [("queued", "3"), ("processing", None), ("processing", "2"), ("succeeded", None)]
    )
    async with AsyncClient("http://service", "k", transport=transport, pacing=pacing) as client:
        done = await client.generate(model="video-a", prompt="a fox")
    assert done.succeeded
    assert pacing.told == [("queued", 3.0, False), ("processing", None, False),
                           ("processing", 2.0, False)]


async def test_a_batch_is_paced_as_a_batch() -> None:
    pacing = RecordingPacing()
    transport = service_with_hints([("processing", None), ("succeeded", None)])
    async with AsyncClient("http://service", "k", transport=transport, pacing=pacing) as client:
        [outcome] = await client.map([{"model": "video-a", "prompt": "a fox"}])
    assert outcome.ok and pacing.told == [("processing", None, True)]


def test_the_fixed_pacer_polls_at_its_interval_unless_the_service_hints() -> None:
    pacer = FixedPacing(1.5).pacer(clip(), batch=True)
    assert [pacer.next_delay(record("processing"), t, None) for t in (0.0, 1.5, 3.0)] == [1.5] * 3
    assert pacer.next_delay(record("processing"), 4.5, 0.25) == 0.25
    with pytest.raises(ConfigurationError, match="positive number of seconds"):
        FixedPacing(0)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "4"}, 4.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"Poll-After": "2"}, 2.0),
        ({"X-Poll-After": "1.5"}, 1.5),
        ({"Retry-After": "-3"}, 0.0),
        ({"Retry-After": "whenever"}, None),
        ({}, None),
    ],
)
def test_poll_hints_are_read_from_any_of_the_usual_headers(
    headers: dict[str, str], expected: float | None
) -> None:
    assert poll_hint(headers) == expected


def test_a_retry_after_date_becomes_seconds_from_now() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    hint = poll_hint({"Retry-After": later})
    assert hint is not None and 25.0 < hint <= 30.0


def hinting_service(hint: str, answers: list[str]) -> Callable[[httpx.Request], httpx.Response]:
    """A service unlike the emulator: it sends a polling hint with every task query."""
    statuses = iter(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t1", "model": "video-a",
                                             "created_at": "2026-01-01T00:00:00Z"})
        status = next(statuses)
        body: dict[str, Any] = {"task_id": "t1", "status": status, "model": "video-a",
                                "created_at": "2026-01-01T00:00:00Z"}
        if status == "succeeded":
            body["completed_at"] = "2026-01-01T00:00:30Z"
            body["videos"] = [{"url": "https://cdn/x.mp4", "width": 1280, "height": 720,
                               "duration": 5}]
        return httpx.Response(200, json=body, headers={"Poll-After": hint})

    return handle


async def test_the_transport_returns_the_hint_with_the_answer() -> None:
    transport = httpx.MockTransport(hinting_service("2.5", ["processing"]))
    http = Http(resolve_config("http://service", "k"), transport)
    try:
        reply = await http.get("/v1/videos/tasks/t1", dict, what="record")
        assert reply.hint == 2.5 and reply.value["status"] == "processing"
    finally:
        await http.aclose()


async def test_a_client_waits_as_long_as_the_service_hints() -> None:
    # Without the hint the prior would sleep ~20 s before the second poll, past the deadline.
    service = hinting_service("0.01", ["queued", "processing", "processing", "succeeded"])
    async with AsyncClient("http://service", "k", transport=httpx.MockTransport(service),
                           wait_timeout=10.0) as client:
        task = await client.submit(model="video-a", prompt="a fox")
        done = await client.wait(task)
    assert done.succeeded
    assert client.durations.samples("video-a") == 1  # and it learned from it


# --- the client's model ---------------------------------------------------------------


async def test_a_batch_learns_from_its_first_completions(
    client_app: Any, client_key: str, client_options: dict[str, Any]
) -> None:
    asked: list[int] = []

    class Spy(MemoryJournal):
        def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
            asked.append(limit)
            return super().duration_samples(limit)

    async with AsyncClient(
        "http://emulator", client_key, transport=httpx.ASGITransport(app=client_app),
        history=Spy(), **client_options,
    ) as client:
        work = Work.of_body({"model": "image-d", "prompt": "x", "resolution": "512"})
        assert client.durations.predict(work).samples == 0
        outcomes = await client.map(
            [{"model": "image-d", "prompt": f"kite {i}", "resolution": "512"} for i in range(6)],
            concurrency=3,
        )
        learned = client.durations.predict(work)
    assert all(o.ok for o in outcomes)
    assert asked == [1000]  # the history is read once, not per wait
    assert learned.samples == 6
    seconds = [o.record.seconds for o in outcomes if o.record and o.record.seconds]
    assert learned.median == pytest.approx(statistics.median(seconds), rel=0.2)


# --- a service unlike the prior: its declared pace, its first tasks, the first poll -------


def test_a_service_ten_times_faster_than_the_prior_is_found_within_its_first_task() -> None:
    # Nothing known: no history, no declared time scale. The prior says ~30 s and 7 s.
    for work, finish in ((clip(), 3.0), (Work("image-b", "image", 1024 * 1024), 0.75)):
        prior = DurationModel().predict(work)
        assert not prior.learned and prior.median > 9 * finish
        times = polls_until(PollSchedule(prior, jitter=0), finish)
        assert times[-1] - finish <= 0.4 * finish + 0.5  # not after the prior's ~30 s
        assert len(times) <= 5


def test_the_first_poll_schedule_costs_no_more_than_a_1s_poller_at_the_priors_pace() -> None:
    prior = DurationModel().predict(clip())
    for finish in (20.0, 30.0, 45.0):
        times = polls_until(PollSchedule(prior, jitter=0), finish)
        assert times[-1] - finish < 1.2
        assert len(times) <= finish


def test_one_finished_task_sets_the_pace_of_every_model_and_kind() -> None:
    model = DurationModel()
    model.observe(sample(clip(5.0), 3.0, "t1"))  # 10x faster than the prior's 30 s
    image = model.predict(Work("image-b", "image", 1024 * 1024))
    other = model.predict(clip(4.0, P1080, model="video-c"))
    assert image.samples == 0 and image.learned
    assert image.median == pytest.approx(0.7, rel=0.05)  # the 7 s prior, 10x faster
    assert other.median == pytest.approx(DurationModel().predict(clip(4.0, P1080)).median / 10,
                                         rel=0.05)


def test_estimates_are_within_2x_of_the_emulator_from_the_first_finished_task_on() -> None:
    from genlab.catalog import plan_output, validate
    from genlab.emulator._tasks import TaskBook, generation_seconds

    def emulated(body: dict[str, Any]) -> float:  # seconds at time scale 0.1
        request = validate({**body, "prompt": "x"})
        return 0.1 * (TaskBook.QUEUE_SECONDS + generation_seconds(
            request, plan_output(request), "task_00000001"))

    first = {"model": "video-a", "duration": 5, "resolution": "720P"}
    model = DurationModel()
    model.observe(sample(Work.of_body({**first, "prompt": "x"}), emulated(first), "t1"))
    for body in ({"model": "image-b"}, {"model": "image-d", "resolution": "512"},
                 {"model": "image-c", "resolution": "2K"},
                 {"model": "video-b", "duration": 4, "resolution": "480P"},
                 {"model": "video-c", "duration": 4, "resolution": "1080P"}):
        estimate = model.estimate(Work.of_body({**body, "prompt": "x"}))
        assert estimate.learned
        assert 0.5 < estimate / emulated(body) < 2.0, body


def test_a_batch_learns_from_its_first_finished_task() -> None:
    # Three tasks of a batch, on a service about ten times faster than the priors (30, 39
    # and 22 s; video-f five times). The first to finish (video-a, at 3 s) teaches the pace
    # to the others.
    def run(learn: bool) -> dict[str, float]:
        model = DurationModel()
        pacing = ForecastPacing(model.predict)
        works = {"video-a": clip(5.0), "video-c": clip(4.0, P1080, model="video-c"),
                 "video-f": clip(3.0, model="video-f")}
        finish = {"video-a": 3.0, "video-c": 3.9, "video-f": 4.2}
        pacers = {name: pacing.pacer(work, batch=True) for name, work in works.items()}
        due = dict.fromkeys(works, 0.0)
        seen: dict[str, float] = {}
        while len(seen) < len(works):
            name = min((n for n in works if n not in seen), key=lambda n: due[n])
            now = due[name]
            if now >= finish[name]:
                seen[name] = now - finish[name]
                if learn:
                    model.observe(sample(works[name], finish[name], name))
                continue
            due[name] = now + pacers[name].next_delay(record("processing"), now, None)
        return seen

    learned, alone = run(learn=True), run(learn=False)
    assert learned["video-a"] == pytest.approx(alone["video-a"])  # the first one is the same
    for name in ("video-c", "video-f"):  # the rest are found sooner for what it taught
        assert learned[name] < 1.0 < alone[name]


def test_in_a_batch_a_new_model_costs_fewer_polls_on_a_service_that_keeps_to_its_priors() -> None:
    # Both services ran three video models; one kept to the priors within +-25 %, the other's
    # models ran 0.4 to 2.5 times the priors. A new model's task, 10 % over its prior, is
    # seen in time on both, at far fewer polls where the priors have proved good.
    def polls(model: DurationModel) -> tuple[int, float]:
        work = clip(5.0, model="video-f")
        finish = 1.1 * DurationModel().predict(work).median
        pacer = ForecastPacing(model.predict).pacer(work, batch=True)
        t, count = 0.0, 1
        while t < finish:
            t += pacer.next_delay(record("processing"), t, None)
            count += 1
        return count, t - finish

    paces = {"video-a": 0.4, "video-b": 2.5, "video-c": 1.0}
    (kept, kept_lag), (scattered, scattered_lag) = (
        polls(_follower(4, tuple(paces))), polls(_follower(4, tuple(paces), paces)))
    assert kept_lag <= 1.0 and scattered_lag <= 1.0
    assert kept < 0.75 * scattered


async def test_the_emulator_declares_its_time_scale_and_the_client_scales_its_priors(
    client_app: Any, client_key: str,
) -> None:
    declared = client_app.emulator.config.time_scale
    assert declared < 0.1
    async with AsyncClient("http://emulator", client_key, transport=httpx.ASGITransport(
            app=client_app)) as client:  # poll_scale left at 1: the service says how fast
        work = Work("image-b", "image", 1024 * 1024)
        assert not client.durations.estimate(work).learned
        task = await client.submit(model="image-b", prompt="a kite")
        estimate = client.durations.estimate(work)
        forecast = client.durations.predict(work)
        record = await client.wait(task)
    assert record.succeeded
    assert estimate.learned and estimate == pytest.approx(7.0 * declared)
    assert forecast.pace == declared  # its poll intervals shrink with it
    assert PollSchedule(forecast, jitter=0).scale_of(forecast) == declared


@pytest.mark.parametrize("value", [None, "fast", "0", "-1", "inf", "nan"])
async def test_a_service_without_a_readable_time_scale_keeps_the_priors(
    value: str | None,
) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        headers = {"Genlab-Time-Scale": value} if value is not None else {}
        return httpx.Response(200, headers=headers, json={
            "task_id": "t1", "model": "video-a", "created_at": "2026-01-01T00:00:00Z"})

    async with AsyncClient("http://service", "k",
                           transport=httpx.MockTransport(handle)) as client:
        await client.submit(model="video-a", prompt="a fox")
        estimate = client.durations.estimate(clip())
    assert not estimate.learned and estimate == pytest.approx(30.0)


@pytest.mark.parametrize(
    ("expected", "shown"),
    [
        (Estimate(26.0, learned=False), r"first guess: about 2\d s more \(nothing learned yet\)"),
        (Estimate(26.0, learned=True), r"expected in about 2\d s"),
        (Estimate(-1.0, learned=False), r"longer than a first guess \(nothing learned yet\)"),
        (Estimate(-1.0, learned=True), r"any moment now"),
        (26.0, r"expected in about 2\d s"),
    ],
)
def test_the_live_line_says_whether_its_estimate_is_learned_or_a_first_guess(
    expected: float, shown: str
) -> None:
    line = LiveLine("t1", "video-a", expected=expected, show=False)
    assert re.search(shown, line.text())
    assert ("first guess" in line.text()) == (getattr(expected, "learned", True) is False)
