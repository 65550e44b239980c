"""Answers not quite right, played by the emulator's profiles over real HTTP on loopback: a
task query that answers another task or names another model (``misrouted``), and the
``sloppy`` service's answers, one switch at a time. Plain httpx; the emulator's ledger says
what was really created and billed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from genlab.emulator import ProfileHandle, start_profile

KEY = "sk-answers-test-7a91e0"
AUTH = {"Authorization": f"Bearer {KEY}"}
IMAGE = {"model": "image-b", "prompt": "a red kite"}
VIDEO = {"model": "video-a", "prompt": "waves", "duration": 2}


class Clock:
    """A clock tests move by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Service:
    """A started profile with a hand-moved clock, every behaviour off, and wire helpers."""

    def __init__(self, handle: ProfileHandle, clock: Clock, http: httpx.Client) -> None:
        self.handle, self.clock, self.http = handle, clock, http
        self.controls = handle.controls
        self.base = handle.base_url

    def submit(self, body: dict[str, Any] = IMAGE) -> httpx.Response:
        kind = "videos" if body["model"].startswith("video") else "images"
        return self.http.post(f"{self.base}/v1/{kind}/generate", json=body, headers=AUTH)

    def task_id(self, body: dict[str, Any] = IMAGE) -> Any:
        answer = self.submit(body)
        assert answer.status_code == 200, answer.text
        return answer.json()["task_id"]

    def query(self, task_id: Any, kind: str = "images") -> httpx.Response:
        path = f"{self.base}/v1/{kind}/tasks/{quote(str(task_id), safe='')}"
        return self.http.get(path, headers=AUTH)

    def record(self, task_id: Any, kind: str = "images") -> dict[str, Any]:
        answer = self.query(task_id, kind)
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()
        return data

    def finish(self) -> None:
        self.clock.now += 3600  # every task submitted so far has ended

    def ledger_ids(self) -> list[str]:
        return [e["task_id"] for e in self.handle.ledger()]


def serve(name: str) -> Iterator[Service]:
    clock = Clock()
    with start_profile(name, api_key=KEY, time_scale=0.02, clock=clock, seed=3) as handle, \
            httpx.Client(timeout=30) as http:
        handle.controls.quiet()  # each test switches on what it is about
        yield Service(handle, clock, http)


@pytest.fixture
def misrouted() -> Iterator[Service]:
    yield from serve("misrouted")


@pytest.fixture
def sloppy() -> Iterator[Service]:
    yield from serve("sloppy")


# --- misrouted ------------------------------------------------------------------------------


def test_a_misrouted_query_answers_another_tasks_record(misrouted: Service) -> None:
    first, second = misrouted.task_id(), misrouted.task_id()
    misrouted.controls.next_misrouted = 3
    assert misrouted.record(first)["task_id"] == second
    assert misrouted.record(first)["task_id"] == second
    assert misrouted.record(second)["task_id"] == first  # never the task asked for
    assert misrouted.record(first)["task_id"] == first  # the next queries are right again
    assert misrouted.record(second)["task_id"] == second
    assert misrouted.ledger_ids() == [first, second]  # two tasks, each billed once
    assert misrouted.controls.played["misrouted"] == 3


def test_one_tasks_next_queries_may_be_misrouted(misrouted: Service) -> None:
    first, second, third = (misrouted.task_id() for _ in range(3))
    misrouted.controls.misroute(first, times=1)
    assert misrouted.record(second)["task_id"] == second  # other tasks are answered right
    assert misrouted.record(first)["task_id"] == third  # the most recent other task
    assert misrouted.record(first)["task_id"] == first
    assert misrouted.ledger_ids() == [first, second, third]


def test_a_misrouted_query_with_no_other_task_answers_a_made_up_id(misrouted: Service) -> None:
    only = misrouted.task_id(VIDEO)
    misrouted.controls.misrouted_rate = 1.0
    stranger = misrouted.record(only, "videos")["task_id"]
    assert stranger != only and stranger not in misrouted.ledger_ids()
    misrouted.controls.misrouted_rate = 0.0
    unknown = misrouted.query(stranger, "videos")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "TASK_NOT_FOUND"


def test_a_record_may_name_another_model_than_the_one_submitted(misrouted: Service) -> None:
    task_id = misrouted.task_id()
    misrouted.controls.next_wrong_model = 1
    wrong = misrouted.record(task_id)
    assert wrong["task_id"] == task_id and wrong["model"] == "image-c"
    assert misrouted.record(task_id)["model"] == "image-b"
    assert [e["model"] for e in misrouted.handle.ledger()] == ["image-b"]


def test_the_misrouted_profile_misroutes_at_its_rates_by_default() -> None:
    with start_profile("misrouted", api_key=KEY, time_scale=0.02) as handle:
        assert handle.controls.misrouted_rate > 0 and handle.controls.wrong_model_rate > 0


# --- sloppy: (a) refusals under 2xx ---------------------------------------------------------


def test_a_refusal_may_come_with_a_200(sloppy: Service) -> None:
    sloppy.controls.next_refusals_2xx = 1
    refused = sloppy.submit()
    assert refused.status_code == 200
    body = refused.json()
    assert "task_id" not in body and body["error"]["code"] == "INVALID_PARAMETER"
    assert sloppy.ledger_ids() == []  # nothing created, nothing billed

    sloppy.controls.refusals_as_2xx = True  # the service's own refusals, sent as 200
    invalid = sloppy.submit({"model": "image-b", "prompt": "x", "n": 2})
    assert invalid.status_code == 200 and invalid.json()["error"]["code"] == "INVALID_PARAMETER"
    assert sloppy.ledger_ids() == []
    assert sloppy.submit().status_code == 200 and len(sloppy.ledger_ids()) == 1


# --- (b) numeric ids ------------------------------------------------------------------------


def test_task_ids_may_be_json_numbers(sloppy: Service) -> None:
    sloppy.controls.numeric_ids = True
    accepted = sloppy.submit()
    task_id = accepted.json()["task_id"]
    assert isinstance(task_id, int) and f'"task_id": {task_id}' in accepted.text
    sloppy.finish()
    record = sloppy.record(task_id)
    assert record["task_id"] == task_id and record["status"] == "succeeded"
    assert sloppy.ledger_ids() == [sloppy.handle.real_id(task_id)]


# --- (c) statuses ---------------------------------------------------------------------------


def test_statuses_may_come_in_other_cases(sloppy: Service) -> None:
    sloppy.controls.status_case = "title"
    task_id = sloppy.task_id()
    assert sloppy.record(task_id)["status"] == "Queued"
    real = sloppy.handle.app.emulator.book.get(sloppy.handle.real_id(task_id))
    assert real is not None
    sloppy.clock.now = (real.start + real.end) / 2
    assert sloppy.record(task_id)["status"] == "Processing"
    sloppy.controls.status_case = "upper"
    sloppy.finish()
    record = sloppy.record(task_id)
    assert record["status"] == "SUCCEEDED" and record["images"]


def test_an_unknown_status_comes_before_the_real_one(sloppy: Service) -> None:
    sloppy.controls.unknown_status_queries = 2
    task_id = sloppy.task_id()
    sloppy.finish()
    for _ in range(2):
        early = sloppy.record(task_id)
        assert early["status"] == "rendering"
        assert early["images"] is None and early["completed_at"] is None
    final = sloppy.record(task_id)
    assert final["status"] == "succeeded" and final["images"]


# --- (d) media late or never ----------------------------------------------------------------


@pytest.mark.parametrize(("missing_as", "empty"), [("empty", []), ("null", None)])
def test_a_succeeded_record_may_come_without_media_at_first(
    sloppy: Service, missing_as: str, empty: Any,
) -> None:
    sloppy.controls.media_missing_queries = 2
    sloppy.controls.media_missing_as = missing_as  # type: ignore[assignment]
    task_id = sloppy.task_id()
    assert sloppy.record(task_id)["status"] == "queued"  # not counted: not succeeded yet
    sloppy.finish()
    for _ in range(2):
        record = sloppy.record(task_id)
        assert record["status"] == "succeeded" and record["images"] == empty
    assert sloppy.record(task_id)["images"][0]["url"]


def test_media_may_never_come(sloppy: Service) -> None:
    sloppy.controls.media_missing_forever = True
    task_id = sloppy.task_id()
    sloppy.finish()
    for _ in range(5):
        assert sloppy.record(task_id)["images"] == []


# --- (e) an unreadable terminal record ------------------------------------------------------


def test_a_succeeded_record_may_hold_a_field_that_cannot_be_read(sloppy: Service) -> None:
    sloppy.controls.unreadable_result = "width"
    image = sloppy.task_id()
    sloppy.controls.unreadable_result = "duration"
    video = sloppy.task_id(VIDEO)
    assert sloppy.record(image)["status"] == "queued"  # in progress: nothing to spoil
    sloppy.finish()
    assert sloppy.record(video, "videos")["videos"][0]["duration"] == "2s"
    assert sloppy.record(image)["images"][0]["width"] == "auto"  # images have no duration
    sloppy.controls.unreadable_result = "width"
    assert sloppy.record(image)["images"][0]["width"] == "auto"  # every time, not once


# --- (f) numbers as strings or floats -------------------------------------------------------


def test_numbers_may_come_as_strings_or_floats(sloppy: Service) -> None:
    image, video = sloppy.task_id(), sloppy.task_id(VIDEO)
    sloppy.finish()
    sloppy.controls.numbers_as = "strings"
    item = sloppy.record(image)["images"][0]
    assert (item["width"], item["height"]) == ("1024", "1024")
    clip = sloppy.record(video, "videos")["videos"][0]
    assert (clip["width"], clip["height"], clip["duration"]) == ("1280", "720", "2.0")
    sloppy.controls.numbers_as = "floats"
    text = sloppy.query(video, "videos").text
    clip = json.loads(text)["videos"][0]
    assert clip["width"] == 1280.0 and isinstance(clip["width"], float)
    assert '"width": 1280.0' in text


# --- (g) relative media URLs ----------------------------------------------------------------


def test_media_may_be_at_a_path_of_the_api_that_needs_the_key(sloppy: Service) -> None:
    sloppy.controls.relative_urls = "path"
    task_id = sloppy.task_id(VIDEO)
    sloppy.finish()
    clip = sloppy.record(task_id, "videos")["videos"][0]
    assert clip["url"].startswith("/files/") and clip["cover_url"].startswith("/files/")
    url = sloppy.base + clip["cover_url"]  # the API's own origin
    without = sloppy.http.get(url)
    assert without.status_code == 401 and without.json()["error"]["code"] == "UNAUTHORIZED"
    cover = sloppy.http.get(url, headers=AUTH)
    assert cover.status_code == 200 and cover.content.startswith(b"\x89PNG")
    assert sloppy.controls.played["files-401"] == 1 and sloppy.controls.played["files"] == 1


def test_media_urls_may_be_protocol_relative(sloppy: Service) -> None:
    sloppy.controls.relative_urls = "protocol"
    task_id = sloppy.task_id()
    sloppy.finish()
    url = sloppy.record(task_id)["images"][0]["url"]
    origin = sloppy.base.removeprefix("http:")
    assert url.startswith(f"{origin}/media/")
    image = sloppy.http.get("http:" + url)  # public, as the emulator's media are
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


# --- the profile as a whole -----------------------------------------------------------------


def test_the_sloppy_profile_starts_with_answers_a_tolerant_client_can_read() -> None:
    with start_profile("sloppy", api_key=KEY, time_scale=0.02) as handle, \
            httpx.Client(timeout=30) as http:
        accepted = http.post(f"{handle.base_url}/v1/images/generate", json=IMAGE,
                             headers=AUTH)
        task_id = accepted.json()["task_id"]
        assert isinstance(task_id, int)
        seen: list[dict[str, Any]] = []
        for _ in range(400):  # bounded: the sped-up emulator finishes an image in < 2 s
            record = http.get(f"{handle.base_url}/v1/images/tasks/{task_id}",
                              headers=AUTH).json()
            seen.append(record)
            if record["status"] == "Succeeded" and record["images"]:
                break
            time.sleep(0.02)
        assert seen[0]["status"] == "rendering"
        assert any(r["status"] == "Succeeded" and r["images"] == [] for r in seen)
        item = seen[-1]["images"][0]
        assert item["url"].startswith("/files/") and item["width"] == "1024"
        assert handle.controls.quiet() is None and handle.controls.numeric_ids is False
