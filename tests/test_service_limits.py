"""The service at its limits, rule by rule, against small in-process services that differ from
the emulator: concurrency caps, answers naming another task, a success without media, a final
record that cannot be read, unknown statuses, a trickling answer, media behind the API key.
The same classes over real HTTP, played by the emulator's profiles, are in
tests/test_profiles_client.py."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from genlab import (
    AsyncClient,
    SubmissionUncertainError,
    TaskTimeoutError,
    UnreadableResponseError,
)
from genlab.client import FixedPacing

KEY = "sk-limits-0042"
FAST = {"retry_wait_initial": 0.001, "retry_wait_max": 0.01, "pacing": FixedPacing(0.005)}


class CappedService:
    """A service that runs at most ``cap`` tasks of a key at once and refuses the next
    submit with 429 (a code and a Retry-After only when asked); each task takes ``polls``
    task queries to finish."""

    def __init__(self, cap: int, *, code: str | None, retry_after: str | None,
                 polls: int = 3) -> None:
        self.cap, self.code, self.retry_after, self.polls = cap, code, retry_after, polls
        self.running: dict[str, int] = {}
        self.created: Counter[str] = Counter()
        self.refused = 0
        self.most_running = 0
        self.ids = itertools.count(1)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            if len(self.running) >= self.cap:
                self.refused += 1
                body = {"error": {"code": self.code, "message": "too many tasks"}} if self.code \
                    else None
                headers = {"Retry-After": self.retry_after} if self.retry_after else {}
                return httpx.Response(429, json=body, headers=headers)
            prompt = request.read().decode()
            task_id = f"t{next(self.ids)}"
            self.created[prompt] += 1
            self.running[task_id] = 0
            self.most_running = max(self.most_running, len(self.running))
            return httpx.Response(200, json={"task_id": task_id, "model": "image-b"})
        task_id = request.url.path.rsplit("/", 1)[-1]
        if task_id not in self.running:
            return record(task_id, "succeeded")
        self.running[task_id] += 1
        if self.running[task_id] < self.polls:
            return record(task_id, "processing")
        del self.running[task_id]
        return record(task_id, "succeeded")


def record(task_id: str, status: str, **extra: Any) -> httpx.Response:
    body: dict[str, Any] = {"task_id": task_id, "status": status, "model": "image-b",
                            "created_at": "2026-01-01T00:00:00Z", **extra}
    if status == "succeeded" and "images" not in extra:
        body["images"] = [{"url": f"https://cdn.example/{task_id}.png"}]
    return httpx.Response(200, json=body)


@pytest.mark.parametrize(
    ("code", "retry_after"),
    [("CONCURRENCY_LIMIT", "0.01"), ("CONCURRENCY_LIMIT", None), (None, "0.01"), (None, None)],
    ids=["code-retry-after", "code-only", "retry-after-only", "bare-429"],
)
async def test_a_batch_over_the_cap_creates_every_request_exactly_once(
    code: str | None, retry_after: str | None
) -> None:
    service = CappedService(3, code=code, retry_after=retry_after)
    requests = [{"model": "image-b", "prompt": f"kite {i}"} for i in range(12)]
    async with AsyncClient("http://svc", KEY, transport=httpx.MockTransport(service),
                           **FAST) as client:
        outcomes = await client.map(requests)  # concurrency 4, above the cap
    assert [o.ok for o in outcomes] == [True] * 12, [o.error for o in outcomes]
    assert len(service.created) == 12 and set(service.created.values()) == {1}
    assert service.most_running <= 3
    submits = 12 + service.refused
    print(f"\n{code or 'no code'}, Retry-After {retry_after}: {submits / 12:.2f} submits "
          f"per task, {service.refused} refused")
    assert service.refused >= 1  # the cap was met, and learned from


async def test_a_single_submit_waits_for_room_when_the_cap_is_held_elsewhere() -> None:
    service = CappedService(1, code="CONCURRENCY_LIMIT", retry_after=None, polls=2)
    service.running["someone-elses"] = 0  # another process holds the only slot
    async with AsyncClient("http://svc", KEY, transport=httpx.MockTransport(service),
                           **FAST) as client:

        async def free_it() -> None:
            await asyncio.sleep(0.05)
            service.running.clear()

        freed = asyncio.create_task(free_it())
        record_ = await client.generate(model="image-b", prompt="a kite")
        await freed
    assert record_.succeeded and sum(service.created.values()) == 1 and service.refused >= 1


class Scripted:
    """Task queries answered from a list (the last answer repeats); submits accepted."""

    def __init__(self, *answers: httpx.Response) -> None:
        self.answers, self.queries = list(answers), 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t1", "model": "image-b"})
        self.queries += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def scripted(*answers: httpx.Response, **options: Any) -> AsyncClient:
    return AsyncClient("http://svc", KEY, transport=httpx.MockTransport(Scripted(*answers)),
                       **{**FAST, **options})


async def test_another_tasks_record_is_never_taken_for_the_asked_task() -> None:
    async with scripted(record("t2", "succeeded"), record("t2", "succeeded"),
                        record("t1", "succeeded")) as client:
        done = await client.generate(model="image-b", prompt="a kite")
    assert done.task_id == "t1" and done.images[0].url.endswith("/t1.png")


async def test_another_tasks_record_until_the_deadline_says_what_came() -> None:
    async with scripted(record("t2", "succeeded"), wait_timeout=0.3) as client:
        task = await client.submit(model="image-b", prompt="a kite")
        with pytest.raises(UnreadableResponseError) as caught:
            await client.wait(task)
        with pytest.raises(UnreadableResponseError, match="record of another task, 't2'"):
            await client.get(task)  # one read: refused at once, not returned as t1
    assert "record of another task, 't2'" in str(caught.value)


async def test_a_record_naming_another_model_is_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    other = {"task_id": "t1", "status": "succeeded", "model": "image-d",
             "images": [{"url": "https://cdn/a.png"}]}
    async with scripted(httpx.Response(200, json=other)) as client:
        with caplog.at_level(logging.WARNING, logger="genlab"):
            done = await client.generate(model="image-b", prompt="a kite")
    assert done.succeeded
    said = [r.getMessage() for r in caplog.records if "its record names" in r.getMessage()]
    assert said == ["genlab: task t1 was submitted to image-b, but its record names image-d"]


async def test_a_success_without_media_is_not_ready_then_media_arrive() -> None:
    async with scripted(record("t1", "succeeded", images=[]), record("t1", "succeeded",
                                                                      images=None),
                        record("t1", "succeeded")) as client:
        done = await client.generate(model="image-b", prompt="a kite")
    assert done.succeeded and done.images and done.images[0].url.endswith("/t1.png")


async def test_a_success_that_never_lists_media_ends_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("genlab.client._tracking.MEDIA_GRACE", 0.05)
    async with scripted(record("t1", "succeeded", images=[])) as client:
        with pytest.raises(UnreadableResponseError) as caught:
            await client.generate(model="image-b", prompt="a kite")
    assert "says it succeeded, but its record has listed no images" in str(caught.value)


@pytest.mark.parametrize(
    ("field", "shown"),
    [({"width": "auto"}, "images[0].width is 'auto'"),
     ({"width": 512, "height": "tall"}, "images[0].height is 'tall'")],
)
async def test_a_final_record_that_cannot_be_read_ends_the_wait_quoting_the_field(
    field: dict[str, Any], shown: str
) -> None:
    answer = record("t1", "succeeded", images=[{"url": "https://cdn/a.png", **field}])
    async with scripted(answer) as client:  # the default 30-minute deadline
        task = await client.submit(model="image-b", prompt="a kite")
        with pytest.raises(UnreadableResponseError) as caught:
            await asyncio.wait_for(client.wait(task), 30)  # bounded, should it regress
    assert shown in str(caught.value) and "has ended" in str(caught.value)


async def test_numbers_sent_as_text_or_floats_are_read_as_numbers() -> None:
    answer = record("t1", "SUCCEEDED", images=[
        {"url": "https://cdn/a.png", "width": "1280", "height": 720.0}])
    async with scripted(answer) as client:
        done = await client.generate(model="image-b", prompt="a kite")
    assert done.succeeded and (done.images[0].width, done.images[0].height) == (1280, 720)


@pytest.mark.parametrize(
    ("status", "says", "not_said"),
    [("processing", "is still processing", "genlab does not know"),
     ("RENDERING", "a status genlab does not know", "keeps running on the service")],
)
async def test_a_deadline_says_what_the_status_was_and_never_guesses(
    status: str, says: str, not_said: str
) -> None:
    async with scripted(record("t1", status), wait_timeout=0.2) as client:
        task = await client.submit(model="image-b", prompt="a kite")
        with pytest.raises(TaskTimeoutError) as caught:
            await client.wait(task)
    assert says in str(caught.value) and not_said not in str(caught.value)
    assert "client.wait('t1')" in str(caught.value)


async def test_a_deadline_on_a_success_without_media_says_what_the_service_said() -> None:
    async with scripted(record("t1", "processing"), record("t1", "succeeded", images=[]),
                        wait_timeout=0.3) as client:
        task = await client.submit(model="image-b", prompt="a kite")
        with pytest.raises(TaskTimeoutError) as caught:
            await client.wait(task)  # its deadline comes well within the media grace
    message = str(caught.value)
    assert "the service says task t1 succeeded but has listed no images yet" in message
    assert "processing" not in message and "keeps running" not in message
    assert "client.wait('t1')" in message and caught.value.last_status == "succeeded"


async def test_a_submit_answer_trickling_in_ends_within_the_timeout_as_uncertain() -> None:
    sent: list[httpx.Request] = []

    async def slowly() -> AsyncIterator[bytes]:
        for byte in b'{"task_id": "t1", "model": "image-b"}':
            await asyncio.sleep(0.5)
            yield bytes([byte])

    async def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, stream=_Stream(slowly()))

    async with AsyncClient("http://svc", KEY, transport=httpx.MockTransport(handler),
                           timeout=1.0, **FAST) as client:
        with pytest.raises(SubmissionUncertainError) as caught:
            await asyncio.wait_for(client.submit(model="image-b", prompt="a kite"), 15)
    assert "did not arrive within 1 s" in str(caught.value) and len(sent) == 1


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.chunks:
            yield chunk


async def test_media_relative_to_the_api_are_fetched_with_the_key_others_never(
    tmp_path: Any,
) -> None:
    seen: dict[str, str | None] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v1/"):
            return httpx.Response(200, json={
                "task_id": "t1", "status": "succeeded", "model": "image-b",
                "images": [{"url": "/files/t1.png"}, {"url": "//cdn.example/t1b.png"}]})
        seen[str(request.url)] = request.headers.get("authorization")
        if request.url.host == "svc" and request.headers.get("authorization") != f"Bearer {KEY}":
            return httpx.Response(401)
        return httpx.Response(200, content=b"\x89PNG\r\n\x1a\n", headers={
            "content-type": "image/png"})

    async with AsyncClient("http://svc", KEY, transport=httpx.MockTransport(handler),
                           **FAST) as client:
        done = await client.get("t1", kind="image")
        paths = await client.download(done, tmp_path)
    assert seen == {"http://svc/files/t1.png": f"Bearer {KEY}",
                    "http://cdn.example/t1b.png": None}
    assert [p.suffix for p in paths] == [".png", ".png", ".json"]
