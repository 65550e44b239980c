"""The async client: configuration, secrets, errors, validation, polling, and the task life cycle
against the in-process emulator."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import logging
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
from genlab import (
    APIError,
    AsyncClient,
    AuthenticationError,
    ConfigurationError,
    InvalidParameterError,
    InvalidPromptError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TaskFailedError,
    TaskNotFinishedError,
    TaskRecord,
    TaskTimeoutError,
)
from genlab.client import ClientConfig, ClientOptions, ConfigOptions, Outcome, Task, TaskStatus
from genlab.client._config import Secret, resolve_config
from genlab.client._prepare import build_request
from genlab.client._transport import Http
from genlab.client.journal import MemoryJournal, SubmitEntry

VIDEO = {"model": "video-b", "prompt": "a fox in the snow", "duration": 4, "resolution": "480P"}
IMAGE = {"model": "image-b", "prompt": "a red kite"}


# --- configuration ---------------------------------------------------------------------


def test_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENLAB_BASE_URL", "http://from-env")
    monkeypatch.setenv("GENLAB_API_KEY", "env-key")
    config = resolve_config("http://from-arg/", "arg-key")
    assert config.base_url == "http://from-arg"
    assert config.api_key.reveal() == "arg-key"


def test_the_environment_fills_in_missing_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENLAB_BASE_URL", "https://svc.example/")
    monkeypatch.setenv("GENLAB_API_KEY", "env-key")
    client = AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    assert client.base_url == "https://svc.example"
    assert client.config.api_key.reveal() == "env-key"


@pytest.mark.parametrize(
    ("base_url", "api_key", "needle"),
    [(None, "k", "GENLAB_BASE_URL"), ("http://x", None, "GENLAB_API_KEY")],
)
def test_missing_settings_say_how_to_set_them(
    monkeypatch: pytest.MonkeyPatch, base_url: str | None, api_key: str | None, needle: str
) -> None:
    monkeypatch.delenv("GENLAB_BASE_URL", raising=False)
    monkeypatch.delenv("GENLAB_API_KEY", raising=False)
    with pytest.raises(ConfigurationError) as caught:
        AsyncClient(base_url, api_key)
    message = str(caught.value)
    assert needle in message
    assert ("base_url=" if needle.endswith("URL") else "api_key=") in message
    assert isinstance(caught.value, genlab.GenlabError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "options",
    [
        {"base_url": "ftp://x"},
        {"max_retries": -1},
        {"poll_scale": 0},
        {"wait_timeout": -5},
        {"retry_wait_initial": 2, "retry_wait_max": 1},
        {"max_connections": 0},
    ],
)
def test_out_of_range_options_are_refused(options: dict[str, Any]) -> None:
    base = {"base_url": "http://x", "api_key": "k"}
    with pytest.raises(ConfigurationError):
        AsyncClient(**{**base, **options})


def test_options_default_to_the_config_class_defaults() -> None:
    written = ClientConfig("http://x", Secret("k"))
    assert resolve_config("http://x", "k") == written
    assert AsyncClient("http://x", "k").config == written
    with genlab.Client("http://x", "k") as client:
        assert client.config == written
    assert written.max_retries == 3 and written.wait_timeout == 1800.0
    assert written.timeout == httpx.Timeout(30.0, connect=10.0)


def test_both_clients_take_exactly_the_config_options() -> None:
    fields = {f.name for f in dataclasses.fields(ClientConfig)} - {"base_url", "api_key"}
    assert set(ConfigOptions.__annotations__) == fields
    own = {"transport", "history", "budget", "durations", "pacing", "keep"}
    assert set(ClientOptions.__annotations__) == fields | own
    keywords = {
        name for name, p in inspect.signature(AsyncClient).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert keywords == own  # the constructor's own options are the typed ones, no more
    options: dict[str, Any] = {
        "timeout": 12, "max_retries": 1, "wait_timeout": 5, "poll_scale": 0.5,
        "retry_wait_initial": 0.1, "retry_wait_max": 0.2, "retry_after_max": 3,
        "max_connections": 2,
    }
    plain = AsyncClient("http://x", "k", **options).config
    with genlab.Client("http://x", "k", **options) as client:
        assert client.config == plain
    assert plain.timeout == httpx.Timeout(12.0, connect=10.0)
    assert isinstance(plain.wait_timeout, float) and plain.retry_after_max == 3.0
    with pytest.raises(TypeError, match="poll_scael"):
        AsyncClient("http://x", "k", poll_scael=0.5)  # type: ignore[call-arg]


def test_history_must_implement_the_journal_protocol() -> None:
    with pytest.raises(ConfigurationError, match="TaskJournal"):
        AsyncClient("http://x", "k", history=object())  # type: ignore[arg-type]


# --- secrets ---------------------------------------------------------------------------


async def test_the_key_never_appears_in_reprs_or_config(client_key: str) -> None:
    async with AsyncClient("http://emulator", client_key) as client:
        texts = [repr(client), str(client), repr(client.config), str(client.config)]
        texts += [repr(client.config.api_key), str(client.config.api_key)]
        assert "api_key='***'" in repr(client)
        assert "http://emulator" in repr(client)
        for text in texts:
            assert client_key not in text


async def test_the_key_never_appears_in_errors_logs_journal_or_files(
    client_async: AsyncClient,
    client_app: Any,
    client_key: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    record = await client_async.generate(VIDEO)
    paths = await client_async.download(record, tmp_path)
    texts += [p.read_text() for p in paths if p.suffix == ".json"]
    texts += [repr(record), repr(client_async.history.entries())]  # type: ignore[attr-defined]
    client_app.emulator.faults.update(fail_rate=1.0)
    with pytest.raises(TaskFailedError) as failed:
        await client_async.generate(IMAGE)
    texts += [str(failed.value), repr(failed.value.record)]
    with pytest.raises(TaskTimeoutError) as late:
        await client_async.wait((await client_async.submit(VIDEO)), timeout=0.01)
    texts.append(str(late.value))
    with pytest.raises(NotFoundError) as missing:
        await client_async.get("nope", kind="video")
    texts += [str(missing.value), repr(missing.value.body)]
    wrong = client_key[::-1]
    async with AsyncClient(
        "http://emulator", wrong, transport=httpx.ASGITransport(app=client_app)
    ) as other:
        with pytest.raises(AuthenticationError) as refused:
            await other.submit(IMAGE)
        texts += [str(refused.value), repr(refused.value.body), repr(other)]
    texts += [r.getMessage() for r in caplog.records]
    assert texts
    for text in texts:
        assert client_key not in text
        assert wrong not in text


def test_a_key_echoed_back_by_a_proxy_is_scrubbed_from_error_bodies() -> None:
    http = Http(resolve_config("http://x", "sk-echo-me"), transport=None)
    response = httpx.Response(502, text="bad gateway for Bearer sk-echo-me")
    with pytest.raises(ServerError) as caught:
        http.raise_for_status(response)
    assert "sk-echo-me" not in repr(caught.value.body)
    assert "***" in caught.value.body


# --- the one error chokepoint ----------------------------------------------------------


def _envelope(code: str, status: int, message: str = "m") -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, "request_id": "r1"}}


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (400, _envelope("INVALID_PARAMETER", 400), InvalidParameterError),
        (400, _envelope("INVALID_PROMPT", 400), InvalidPromptError),
        (401, _envelope("UNAUTHORIZED", 401), AuthenticationError),
        (403, None, AuthenticationError),
        (404, _envelope("TASK_NOT_FOUND", 404), NotFoundError),
        (429, _envelope("RATE_LIMITED", 429), RateLimitError),
        (500, _envelope("INTERNAL_ERROR", 500), ServerError),
        (503, None, ServerError),
        (502, "<html>bad gateway</html>", ServerError),
        (418, None, APIError),
    ],
)
def test_statuses_and_envelopes_map_to_exceptions(status: int, body: Any, kind: type) -> None:
    http = Http(resolve_config("http://x", "k"), transport=None)
    content = json.dumps(body).encode() if isinstance(body, dict) else (body or "").encode()
    response = httpx.Response(status, content=content, headers={"Retry-After": "7"})
    with pytest.raises(kind) as caught:
        http.raise_for_status(response)
    error = caught.value
    assert error.status == status
    if isinstance(body, dict):
        assert error.code == body["error"]["code"]
        assert error.request_id == "r1"
    if isinstance(error, RateLimitError):
        assert error.retry_after == 7.0


def test_success_raises_nothing() -> None:
    Http(resolve_config("http://x", "k"), transport=None).raise_for_status(httpx.Response(200))


# --- validation comes first ------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"model": "video-z", "prompt": "x"},
        {"model": "video-a", "prompt": "x", "duration": 31},
        {"model": "video-a"},
        {"model": "image-a", "prompt": "x"},
        ["not", "a", "mapping"],
    ],
)
async def test_invalid_requests_never_touch_the_network(body: Any) -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        pytest.fail(f"the network was used for an invalid request: {request.url}")

    journal = MemoryJournal()
    async with AsyncClient(
        "http://x", "k", transport=httpx.MockTransport(handler), history=journal
    ) as client:
        with pytest.raises(InvalidParameterError) as caught:
            await client.submit(body)
        with pytest.raises(InvalidParameterError):
            await client.generate(body)
    assert calls == []
    assert journal.entries() == []
    assert caught.value.errors


def test_fields_override_and_extend_a_body() -> None:
    body = {"model": "video-a", "prompt": "first", "duration": 5}
    request = build_request(body, {"prompt": "second", "resolution": "1080P"})
    assert request.to_body() == {
        "model": "video-a", "prompt": "second", "duration": 5, "resolution": "1080P"
    }
    assert body["prompt"] == "first"  # the caller's dict is not changed
    again = build_request(request, {"duration": 8})
    assert again.to_body()["duration"] == 8
    assert build_request(None, {"model": "image-b", "prompt": "k"}).kind == "image"


# --- response types --------------------------------------------------------------------


def test_records_tolerate_new_fields_unknown_statuses_and_odd_errors() -> None:
    record = TaskRecord.model_validate(
        {
            "task_id": "t1",
            "status": "moderating",
            "model": "video-a",
            "created_at": "not a time",
            "completed_at": None,
            "error": None,
            "priority": 3,
        }
    )
    assert record.status == "moderating" and not record.done and not record.failed
    assert record.created_at is None and record.seconds is None
    assert record.model_extra == {"priority": 3}
    failed = TaskRecord.model_validate(
        {"task_id": "t2", "status": "failed", "error": "out of memory"}
    )
    assert failed.failed and failed.done
    assert failed.error is not None and failed.error.message == "out of memory"
    assert TaskStatus.SUCCEEDED == "succeeded"
    assert TaskRecord(task_id="t3", status=TaskStatus.QUEUED).status == "queued"


def test_results_and_timings() -> None:
    record = TaskRecord.model_validate(
        {
            "task_id": "t1",
            "status": "succeeded",
            "created_at": "2026-01-01T00:00:00.000Z",
            "completed_at": "2026-01-01T00:00:41.500Z",
            "videos": [{"url": "https://m/v.mp4", "width": 1280, "height": 720,
                        "duration": 5, "cover_url": "https://m/c.png", "fps": 24}],
        }
    )
    assert record.succeeded and record.seconds == 41.5
    video = record.results[0]
    assert video.width == 1280 and video.last_frame_url is None
    assert "41.5 s" in record.summary()


def test_an_outcome_is_ok_only_when_its_task_succeeded() -> None:
    ok = TaskRecord(task_id="t", status="succeeded")
    assert Outcome(request={}, record=ok).ok
    assert not Outcome(request={}, record=TaskRecord(task_id="t", status="failed")).ok
    assert not Outcome(request={}, error=RuntimeError("x")).ok


# --- the journal -----------------------------------------------------------------------


def _entry(model: str = "video-a", resolution: str = "720P", duration: float = 5.0) -> SubmitEntry:
    return SubmitEntry(
        body={"model": model}, model=model, kind="video", mode="text-to-video", credits=800,
        submitted_at=datetime.now(UTC),
        resolution=resolution, duration=duration,
    )


def _done(task_id: str, seconds: float, status: str = "succeeded") -> TaskRecord:
    return TaskRecord.model_validate(
        {"task_id": task_id, "status": status, "created_at": "2026-01-01T00:00:00Z",
         "completed_at": f"2026-01-01T00:00:{seconds:06.3f}Z"}
    )


def test_the_memory_journal_keeps_durations_of_succeeded_tasks() -> None:
    journal = MemoryJournal()
    for i, seconds in enumerate([10.0, 30.0, 12.0]):
        entry_id = journal.submit_started(_entry())
        journal.submit_accepted(entry_id, Task(task_id=f"t{i}", model="video-a"))
        journal.status_changed(_done(f"t{i}", seconds))
    failed_id = journal.submit_started(_entry())
    journal.submit_accepted(failed_id, Task(task_id="tf", model="video-a"))
    journal.status_changed(_done("tf", 50.0, "failed"))  # failures teach nothing
    assert sorted(s.seconds for s in journal.duration_samples()) == [10.0, 12.0, 30.0]
    lost = journal.submit_started(_entry())
    journal.submit_uncertain(lost, "dropped")
    assert [e.entry_id for e in journal.uncertain()] == [lost]


# --- the poll schedule: tests/test_polling.py ------------------------------------------


# --- the task life cycle against the emulator ------------------------------------------


async def test_generate_returns_a_typed_record(client_async: AsyncClient) -> None:
    record = await client_async.generate(VIDEO)
    assert record.succeeded and record.kind == "video" and record.model == "video-b"
    video = record.videos[0] if record.videos else None
    assert video is not None and (video.width, video.height) == (854, 480)
    assert video.duration == 4 and video.cover_url
    assert record.seconds is not None and record.seconds > 0
    image = await client_async.generate(model="image-b", prompt="a red kite")
    assert image.succeeded and image.kind == "image" and image.images


async def test_on_update_sees_each_status_once_in_order(client_async: AsyncClient) -> None:
    seen: list[str] = []
    record = await client_async.generate(VIDEO, on_update=lambda r: seen.append(r.status))
    # A poll may miss a short status on a busy machine; what is seen is seen once, in order.
    order = ["queued", "processing", "succeeded"]
    assert seen == [s for s in order if s in seen] and seen[-1] == "succeeded"
    assert record.status == seen[-1]


async def test_on_update_may_be_a_coroutine_function(client_async: AsyncClient) -> None:
    seen: list[str] = []

    async def note(record: TaskRecord) -> None:
        seen.append(record.status)

    await client_async.generate(IMAGE, on_update=note)
    assert seen[-1] == "succeeded"


async def test_a_wait_deadline_raises_with_the_id_and_how_to_resume(
    client_async: AsyncClient,
) -> None:
    task = await client_async.submit(model="video-a", prompt="slow", duration=30,
                                     resolution="1080P")
    with pytest.raises(TaskTimeoutError) as caught:
        await client_async.wait(task, timeout=0.05)
    assert caught.value.task_id == task.task_id
    assert f"client.wait({task.task_id!r})" in str(caught.value)
    assert caught.value.last_status in ("queued", "processing")
    # The task is not lost: it can still be queried by id.
    assert (await client_async.get(task.task_id)).task_id == task.task_id


async def test_the_client_default_deadline_applies(
    client_app: Any, client_key: str, client_options: dict[str, Any]
) -> None:
    client_options["wait_timeout"] = 0.05
    async with AsyncClient(
        "http://emulator", client_key, transport=httpx.ASGITransport(app=client_app),
        **client_options,
    ) as client:
        with pytest.raises(TaskTimeoutError):
            await client.generate(model="video-a", prompt="slow", duration=30)


async def test_a_failed_task_raises_with_its_record_or_returns_it(
    client_async: AsyncClient, client_app: Any
) -> None:
    client_app.emulator.faults.update(fail_rate=1.0)
    with pytest.raises(TaskFailedError) as caught:
        await client_async.generate(IMAGE)
    record = caught.value.record
    assert isinstance(record, TaskRecord) and record.failed
    assert record.error is not None and record.error.code == "GENERATION_FAILED"
    assert caught.value.task_id == record.task_id
    returned = await client_async.generate(IMAGE, raise_on_failure=False)
    assert returned.failed and returned.error is not None


async def test_get_finds_the_endpoint_for_bare_ids(
    client_async: AsyncClient, client_app: Any, client_key: str, client_options: dict[str, Any]
) -> None:
    task = await client_async.submit(IMAGE)
    assert (await client_async.get(task.task_id)).kind == "image"  # remembered
    async with AsyncClient(
        "http://emulator", client_key, transport=httpx.ASGITransport(app=client_app),
        **client_options,
    ) as stranger:
        assert (await stranger.get(task.task_id, kind="image")).task_id == task.task_id
        assert (await stranger.get(task.task_id)).kind == "image"  # video 404, then image
        record = await stranger.wait(task.task_id)  # resumable from a bare id
        assert record.succeeded
        with pytest.raises(NotFoundError):
            await stranger.get("task_missing")
        with pytest.raises(ValueError, match="kind"):
            await stranger.get(task.task_id, kind="audio")  # type: ignore[arg-type]


async def test_download_writes_media_with_extensions_and_a_sidecar(
    client_async: AsyncClient, tmp_path: Path
) -> None:
    body = {**VIDEO, "extra_params": {"return_last_frame": True}}
    record = await client_async.generate(body)
    paths = await client_async.download(record, tmp_path / "out")
    names = [p.name for p in paths]
    tid = record.task_id
    assert names == [f"{tid}.mp4", f"{tid}_cover.png", f"{tid}_last_frame.png", f"{tid}.json"]
    assert all(p.stat().st_size > 0 for p in paths)
    assert paths[0].read_bytes()[4:8] == b"ftyp"  # an MP4
    assert paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sidecar = json.loads(paths[-1].read_text())
    assert sidecar["task_id"] == tid and sidecar["model"] == "video-b"
    assert sidecar["request"] == body
    assert sidecar["seconds"] == pytest.approx(record.seconds)
    assert sidecar["created_at"] and sidecar["completed_at"]
    assert not list((tmp_path / "out").glob("*.part"))


async def test_download_numbers_several_images(
    client_async: AsyncClient, tmp_path: Path
) -> None:
    record = await client_async.generate(
        model="image-a", prompt="kites", resolution="1K", aspect_ratio="1:1", quality="low", n=2
    )
    paths = await client_async.download(record, tmp_path)
    tid = record.task_id
    assert [p.name for p in paths] == [f"{tid}_0.png", f"{tid}_1.png", f"{tid}.json"]


async def test_download_refuses_unfinished_and_failed_tasks(
    client_async: AsyncClient, client_app: Any, tmp_path: Path
) -> None:
    task = await client_async.submit(model="video-a", prompt="slow", duration=30)
    with pytest.raises(TaskNotFinishedError, match="wait for it first") as early:
        await client_async.download(task, tmp_path)
    assert isinstance(early.value, genlab.GenlabError) and isinstance(early.value, ValueError)
    assert early.value.task_id == task.task_id and early.value.status in ("queued", "processing")
    assert f"client.wait({task.task_id!r})" in str(early.value)
    assert list(tmp_path.iterdir()) == []
    client_app.emulator.faults.update(fail_rate=1.0)
    failed = await client_async.generate(IMAGE, raise_on_failure=False)
    with pytest.raises(TaskFailedError):
        await client_async.download(failed, tmp_path)


async def test_map_keeps_order_captures_failures_and_bounds_concurrency(
    client_app: Any, client_key: str, client_options: dict[str, Any]
) -> None:
    in_flight, peak = 0, 0

    class Counting(MemoryJournal):
        def submit_accepted(self, entry_id: str, task: Task) -> None:
            nonlocal in_flight, peak
            super().submit_accepted(entry_id, task)
            in_flight += 1
            peak = max(peak, in_flight)

        def status_changed(self, record: TaskRecord) -> None:
            nonlocal in_flight
            super().status_changed(record)
            if record.done:
                in_flight -= 1

    requests: list[Any] = [{**IMAGE, "prompt": f"kite {i}"} for i in range(9)]
    requests.insert(4, {"model": "image-b"})  # invalid: no prompt
    async with AsyncClient(
        "http://emulator", client_key, transport=httpx.ASGITransport(app=client_app),
        history=Counting(), **client_options,
    ) as client:
        outcomes = await client.map(requests, concurrency=3)
    assert [o.request for o in outcomes] == requests
    assert isinstance(outcomes[4].error, InvalidParameterError) and outcomes[4].task is None
    others = outcomes[:4] + outcomes[5:]
    assert all(o.ok and o.record is not None and o.task is not None for o in others)
    assert len({o.task_id for o in others}) == 9
    assert 1 <= peak <= 3


async def test_cancelling_a_wait_keeps_the_task(client_async: AsyncClient) -> None:
    task = await client_async.submit(VIDEO)
    waiting = asyncio.create_task(client_async.wait(task))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    accepted = [e for e in client_async.history.entries() if e.task_id == task.task_id]  # type: ignore[attr-defined]
    assert accepted and accepted[0].state == "accepted"
    assert (await client_async.wait(task)).succeeded  # the Task object still works


async def test_the_journal_hears_every_step(client_async: AsyncClient, tmp_path: Path) -> None:
    body = {"model": "video-a", "prompt": "a fox", "duration": 4}
    record = await client_async.generate(body)
    paths = await client_async.download(record, tmp_path)
    (entry,) = client_async.history.entries()  # type: ignore[attr-defined]
    assert entry.state == "accepted" and entry.task_id == record.task_id
    assert entry.entry.body == body and entry.entry.credits == 640
    assert entry.entry.mode == "text-to-video" and entry.entry.kind == "video"
    # Each status the polls saw, once and in order (a busy machine may miss the short queue).
    seen = [r.status for r in entry.records]
    assert seen == [s for s in ("queued", "processing", "succeeded") if s in seen]
    assert seen[-1] == "succeeded" and entry.paths == paths


async def test_a_broken_history_never_loses_a_task(
    client_app: Any, client_key: str, client_options: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken(MemoryJournal):
        def status_changed(self, record: TaskRecord) -> None:
            raise OSError("disk full")

    async with AsyncClient(
        "http://emulator", client_key, transport=httpx.ASGITransport(app=client_app),
        history=Broken(), **client_options,
    ) as client:
        assert (await client.generate(IMAGE)).succeeded
    assert "history failed" in caplog.text


@pytest.mark.parametrize("step", ["submit_accepted", "status_changed", "results_saved"])
async def test_every_journal_step_but_the_first_may_fail_without_losing_the_task(
    client_app: Any, client_options: dict[str, Any], client_key: str, tmp_path: Path,
    caplog: pytest.LogCaptureFixture, step: str,
) -> None:
    def broken(*args: Any) -> None:
        raise OSError("disk full")

    journal = MemoryJournal()
    setattr(journal, step, broken)
    async with AsyncClient(
        "http://emulator", client_key, transport=httpx.ASGITransport(app=client_app),
        history=journal, **client_options,
    ) as client:
        record = await client.generate(IMAGE)
        paths = await client.download(record, tmp_path)
    assert record.succeeded and paths[-1].name == f"{record.task_id}.json"
    assert f"the history failed to record {step}; continuing" in caplog.text


async def test_map_reports_timeouts_per_request(client_async: AsyncClient) -> None:
    slow = {"model": "video-a", "prompt": "slow", "duration": 30, "resolution": "1080P"}
    outcomes = await client_async.map([{"model": "image-b"}, slow], timeout=0.3)
    assert isinstance(outcomes[0].error, InvalidParameterError)
    late = outcomes[1]
    assert isinstance(late.error, TaskTimeoutError) and late.task is not None
    assert late.error.task_id == late.task.task_id


async def test_cancelling_a_submit_in_flight_records_it_as_uncertain() -> None:
    arrived = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        arrived.set()
        await asyncio.Event().wait()  # the answer never comes
        raise AssertionError("unreachable")

    journal = MemoryJournal()
    async with AsyncClient(
        "http://x", "k", transport=httpx.MockTransport(handler), history=journal
    ) as client:
        submitting = asyncio.create_task(client.submit(IMAGE))
        await arrived.wait()
        submitting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await submitting
    (entry,) = journal.uncertain()
    assert entry.entry.body == IMAGE


async def test_a_history_that_cannot_record_stops_the_submit_before_sending() -> None:
    calls: list[httpx.Request] = []

    class Full(MemoryJournal):
        def submit_started(self, entry: SubmitEntry) -> str:
            raise OSError("disk full")

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(500)

    async with AsyncClient(
        "http://x", "k", transport=httpx.MockTransport(handler), history=Full()
    ) as client:
        with pytest.raises(OSError, match="disk full"):
            await client.submit(IMAGE)
    assert calls == []


def test_the_client_imports_no_notebook_or_emulator_modules() -> None:
    code = (
        "import sys, genlab, genlab.client; "
        "bad = [m for m in ('pandas', 'ipywidgets', 'tqdm', 'genlab.emulator', 'fastapi', 'av', "
        "'PIL') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
