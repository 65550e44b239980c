"""genlab's client against the service at its limits, over real HTTP on loopback: each class of
behaviour is played by an emulator profile (``genlab serve --profile NAME``), and each test
asserts what a person sees and what the service created and billed (its ledger)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from genlab import (
    AsyncClient,
    AuthenticationError,
    Client,
    InvalidParameterError,
    NotFoundError,
    QuotaExceededError,
    SubmissionUncertainError,
    UnreadableResponseError,
)
from genlab.client import FixedPacing
from genlab.client.journal import MemoryJournal
from genlab.emulator import ProfileHandle, start_profile

KEY = "sk-profiles-client-91f0"
IMAGE = {"model": "image-b", "prompt": "a red kite"}
FAST: dict[str, Any] = {"retry_wait_initial": 0.01, "retry_wait_max": 0.05,
                        "pacing": FixedPacing(0.02), "wait_timeout": 120}


def serve(name: str, **options: Any) -> Iterator[ProfileHandle]:
    with start_profile(name, api_key=KEY, time_scale=0.02, seed=5, **options) as handle:
        handle.controls.quiet()  # each test switches on what it is about
        yield handle


@pytest.fixture
def capped() -> Iterator[ProfileHandle]:
    yield from serve("capped")


@pytest.fixture
def sloppy() -> Iterator[ProfileHandle]:
    yield from serve("sloppy")


def client(service: ProfileHandle, **options: Any) -> Client:
    return Client(service.base_url, KEY, **{**FAST, **options})


# --- concurrency caps -----------------------------------------------------------------------


@pytest.mark.parametrize("retry_after", [1.0, None], ids=["retry-after", "no-retry-after"])
async def test_a_map_of_12_against_a_cap_of_3_creates_each_request_once(
    capped: ProfileHandle, retry_after: float | None
) -> None:
    capped.controls.cap, capped.controls.cap_retry_after = 3, retry_after
    requests = [{**IMAGE, "prompt": f"kite number {i}"} for i in range(12)]
    async with AsyncClient(capped.base_url, KEY, **FAST) as c:
        outcomes = await c.map(requests)  # concurrency 4, above the cap
    assert [o.ok for o in outcomes] == [True] * 12, [o.error for o in outcomes]
    ledger = capped.ledger()
    assert len(ledger) == 12 and len({e["task_id"] for e in ledger}) == 12
    assert sorted(o.task_id or "" for o in outcomes) == sorted(
        capped.real_id(e["task_id"]) for e in ledger)
    refused = capped.controls.played["capped"]
    print(f"\ncap 3, Retry-After {retry_after}: {(12 + refused) / 12:.2f} submits per task "
          f"({refused} refused)")
    assert refused >= 1


def test_the_studios_single_submits_wait_for_room_too(capped: ProfileHandle) -> None:
    capped.controls.cap, capped.controls.cap_retry_after = 1, None
    with client(capped) as c:
        futures = [c.generate_future({**IMAGE, "prompt": f"kite {i}"}) for i in range(3)]
        records = [f.result(timeout=120) for f in futures]
    assert all(r.succeeded for r in records) and len(capped.ledger()) == 3


# --- quotas -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "retry_after", "says"),
    [("QUOTA_EXCEEDED", "seconds", "It may clear in about 1 h"),
     ("QUOTA_EXCEEDED", "http-date", "It may clear in about 1 h"),
     ("INSUFFICIENT_BALANCE", None, "INSUFFICIENT_BALANCE")],
)
def test_a_quota_that_will_not_clear_fails_at_once_and_nothing_is_resent(
    code: str, retry_after: str | None, says: str
) -> None:
    for service in serve("quota"):
        service.controls.quota_left, service.controls.quota_code = 0, code
        service.controls.quota_retry_after = retry_after
        began = time.monotonic()
        with client(service, retry_after_max=60) as c, pytest.raises(QuotaExceededError) as caught:
            c.submit(IMAGE)
        assert time.monotonic() - began < 30  # not slept on (a generous bound)
        assert says in str(caught.value) and "Nothing was sent again" in str(caught.value)
        assert service.controls.played["quota"] == 1 and service.ledger() == []


# --- the submit's own deadline ----------------------------------------------------------------


def test_a_trickled_submit_answer_ends_as_uncertain_within_the_timeout() -> None:
    for service in serve("trickle"):
        service.controls.trickle_interval = 0.5
        journal = MemoryJournal()
        with client(service, timeout=1.0, history=journal) as c:
            with pytest.raises(SubmissionUncertainError) as caught:
                c.submit(IMAGE)
        assert "did not arrive within 1 s" in str(caught.value)
        assert len(service.ledger()) == 1  # created once, never sent again
        assert [e.state for e in journal.entries()] == ["uncertain"]


# --- identity -------------------------------------------------------------------------------


def test_a_misrouted_answer_is_never_taken_for_the_asked_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for service in serve("misrouted"):
        with client(service) as c:
            first = c.generate(IMAGE)
            task = c.submit({**IMAGE, "prompt": "the second kite"})
            service.controls.misroute(task.task_id, 2)
            second = c.wait(task)
            service.controls.next_wrong_model = 1
            with caplog.at_level(logging.WARNING, logger="genlab"):
                third = c.generate({**IMAGE, "prompt": "the third kite"})
        assert second.task_id == task.task_id != first.task_id
        assert second.images and second.images[0].url != first.images[0].url
        assert service.controls.played["misrouted"] == 2
        assert third.succeeded and any("its record names" in r.getMessage()
                                       for r in caplog.records)


# --- answers not quite right ------------------------------------------------------------------


def test_a_sloppy_but_readable_service_gives_results_and_files(
    sloppy: ProfileHandle, tmp_path: Path
) -> None:
    controls = sloppy.controls
    controls.numeric_ids, controls.status_case, controls.unknown_status_queries = True, "title", 1
    controls.media_missing_queries, controls.numbers_as = 1, "strings"
    controls.relative_urls = "path"  # /files/..., served only with the key
    with client(sloppy) as c:
        record = c.generate(IMAGE)
        paths = c.download(record, tmp_path)
    assert record.succeeded and record.task_id.isdigit()
    width = record.images[0].width  # sent as text, read as a number
    assert isinstance(width, int) and width > 0
    assert [p.suffix for p in paths][-1] == ".json" and paths[0].stat().st_size > 100
    assert controls.played["files"] >= 1 and controls.played["files-401"] == 0


def test_a_2xx_refusal_is_a_refusal_and_nothing_is_billed(sloppy: ProfileHandle) -> None:
    sloppy.controls.next_refusals_2xx = 1
    journal = MemoryJournal()
    with client(sloppy, history=journal) as c, pytest.raises(InvalidParameterError):
        c.submit(IMAGE)
    assert sloppy.ledger() == [] and [e.state for e in journal.entries()] == ["failed"]


def test_an_unreadable_final_record_fails_in_seconds_quoting_the_field(
    sloppy: ProfileHandle,
) -> None:
    sloppy.controls.unreadable_result = "width"
    began = time.monotonic()
    with client(sloppy, wait_timeout=1800) as c, pytest.raises(UnreadableResponseError) as e:
        c.generate(IMAGE)
    assert "width is 'auto'" in str(e.value) and "has ended" in str(e.value)
    assert time.monotonic() - began < 600  # far from the 30-minute deadline, even when busy


def test_a_success_whose_media_never_come_says_so(
    sloppy: ProfileHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("genlab.client._tracking.MEDIA_GRACE", 0.5)
    sloppy.controls.media_missing_forever = True
    with client(sloppy) as c, pytest.raises(UnreadableResponseError) as caught:
        c.generate(IMAGE)
    assert "says it succeeded, but its record has listed no images" in str(caught.value)


# --- a gateway in front -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "shape", "error", "says"),
    [(401, "json", AuthenticationError, "refused with HTTP 401"),
     (403, "waf", AuthenticationError, "an HTML page, not the service's answer"),
     (404, "json", NotFoundError, "Check base_url")],
)
def test_a_gateways_refusal_is_never_called_uncertain(
    status: int, shape: str, error: type[Exception], says: str
) -> None:
    for service in serve("gateway"):
        service.controls.gateway_status, service.controls.gateway_shape = status, shape
        journal = MemoryJournal()
        with client(service, history=journal) as c, pytest.raises(error) as caught:
            c.submit(IMAGE)
        assert says in str(caught.value) and "billed" not in str(caught.value)
        assert service.ledger() == [] and [e.state for e in journal.entries()] == ["failed"]
