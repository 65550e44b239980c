"""A task's hold: its concurrency slot and its reuse claim are given back exactly once, whatever
happens to the submit (accepted, refused, cancelled while waiting for room or in flight,
uncertain), and the next task gets the room; a 429 is the hold's to judge, never the
transport's."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from genlab import APIError, AsyncClient, RateLimitError, SubmissionUncertainError
from genlab.client import Budget, Task
from genlab.client._config import resolve_config
from genlab.client._hold import Slots, TaskHold
from genlab.client._transport import Http
from genlab.client.journal import MemoryJournal

CONFIG = resolve_config("http://svc", "k", retry_wait_initial=0.001, retry_wait_max=0.01,
                        retry_after_max=0.05, wait_timeout=60)
TASK = Task(task_id="t1", model="image-b", kind="image")


class CountedSlots(Slots):
    """Slots that count how often one is given back."""

    def __init__(self) -> None:
        super().__init__()
        self.given_back = 0

    def release(self, *, finished: bool = False) -> None:
        self.given_back += 1
        super().release(finished=finished)


class Claims:
    """Reuse claims as :class:`~genlab.client._reuse.Reuse` keeps them, counted."""

    def __init__(self) -> None:
        self.in_flight: dict[str, asyncio.Future[Task]] = {}
        self.released = 0

    def claim(self, key: str) -> asyncio.Future[Task]:
        future: asyncio.Future[Task] = asyncio.get_running_loop().create_future()
        self.in_flight[key] = future
        return future

    def release(self, key: str, claim: asyncio.Future[Task]) -> None:
        self.released += 1
        if self.in_flight.get(key) is claim:
            del self.in_flight[key]


@pytest.fixture
async def http() -> Any:
    client = Http(CONFIG, httpx.MockTransport(lambda r: httpx.Response(500)))
    yield client
    await client.aclose()


def accepted() -> Callable[[], Awaitable[Task]]:
    async def send() -> Task:
        return TASK

    return send


def failing(error: Exception) -> Callable[[], Awaitable[Task]]:
    async def send() -> Task:
        raise error

    return send


async def test_an_accepted_task_keeps_its_slot_and_claim_until_it_ends_then_gives_them_back_once(
    http: Http,
) -> None:
    slots, claims = CountedSlots(), Claims()
    async with TaskHold(slots, claims, "addr", CONFIG) as hold:
        task = await hold.send(accepted(), http, "image-b")
        hold.keep(task)
    assert hold.holds_slot and hold.holds_claim and slots.running == 1
    assert claims.in_flight["addr"].result() == TASK  # identical submits join it
    hold.give_back(finished=True)  # its final record came
    hold.give_back()  # then it was handed over: nothing more to give
    assert (slots.given_back, claims.released, slots.running) == (1, 1, 0)
    assert "addr" not in claims.in_flight


@pytest.mark.parametrize(
    "error",
    [
        APIError.from_response(400, {"error": {"code": "INVALID_PARAMETER"}}),
        SubmissionUncertainError("may have arrived", model="image-b", body={}),
    ],
    ids=["refused", "uncertain"],
)
async def test_a_refused_or_uncertain_submit_gives_slot_and_claim_back_once(
    http: Http, error: Exception
) -> None:
    slots, claims = CountedSlots(), Claims()
    with pytest.raises(type(error)):
        async with TaskHold(slots, claims, "addr", CONFIG) as hold:
            claim = claims.in_flight["addr"]
            await hold.send(failing(error), http, "image-b")
    hold.give_back()  # a late hand-over gives nothing twice
    assert (slots.given_back, claims.released, slots.running) == (1, 1, 0)
    assert claim.exception() is error  # a submit that joined it is told the same
    assert "addr" not in claims.in_flight


async def test_a_submit_cancelled_in_flight_gives_slot_and_claim_back_once(http: Http) -> None:
    slots, claims = CountedSlots(), Claims()
    sent = asyncio.Event()

    async def never_answered() -> Task:
        sent.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    held: list[TaskHold] = []

    async def submit() -> None:
        async with TaskHold(slots, claims, "addr", CONFIG) as hold:
            held.append(hold)
            await hold.send(never_answered, http, "image-b")

    running = asyncio.create_task(submit())
    await sent.wait()
    claim = claims.in_flight["addr"]
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert (slots.given_back, claims.released, slots.running) == (1, 1, 0)
    assert claim.cancelled()
    assert held[0].in_flight  # cut off on its way: it may have been billed


async def test_a_submit_cancelled_while_waiting_for_room_gives_its_claim_back_and_the_next_gets_the_slot(  # noqa: E501
    http: Http,
) -> None:
    slots, claims = CountedSlots(), Claims()
    slots.limit = 1  # learned: the service runs one task of this key at once
    first = TaskHold(slots, claims, None, CONFIG)
    async with first:
        first.keep(await first.send(accepted(), http, "image-b"))
    waiting_config = dataclasses.replace(CONFIG, retry_wait_initial=3600.0, retry_wait_max=3600.0)

    held: list[TaskHold] = []

    async def second() -> None:
        async with TaskHold(slots, claims, "addr", waiting_config) as hold:
            held.append(hold)
            await hold.send(accepted(), http, "image-b")

    waiting = asyncio.create_task(second())
    while "addr" not in claims.in_flight or slots._freed is None:
        await asyncio.sleep(0)  # until it waits for room
    assert not waiting.done() and slots.running == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert (slots.given_back, claims.released, slots.running) == (0, 1, 1)  # it took none
    assert not held[0].in_flight  # nothing was sent
    first.give_back(finished=True)  # the first task ends: its room is free
    third = TaskHold(slots, claims, None, waiting_config)  # would wait an hour for room
    async with third:
        third.keep(await third.send(accepted(), http, "image-b"))
    assert slots.running == 1 and third.holds_slot


async def test_a_429_for_concurrency_gives_the_slot_back_and_waits_for_room(http: Http) -> None:
    slots, claims = CountedSlots(), Claims()
    answers = iter([
        RateLimitError("too many tasks", code="CONCURRENCY_LIMIT", retry_after=0.001),
        None,
    ])

    async def send() -> Task:
        answer = next(answers)
        if answer is not None:
            raise answer
        return TASK

    async with TaskHold(slots, claims, None, CONFIG) as hold:
        hold.keep(await hold.send(send, http, "image-b"))
    assert slots.refusals == 1 and slots.limit == 1  # learned from the refusal
    assert slots.given_back == 1 and slots.running == 1  # given back once, taken again


# --- through the client: a 429 is judged by the lifecycle, the next task gets the room -------


class OneAtATime:
    """A service that runs one task of a key at once (429 CONCURRENCY_LIMIT for the next) and
    ends a task on its second query."""

    def __init__(self) -> None:
        self.running: dict[str, int] = {}
        self.ids = itertools.count(1)
        self.posts = 0
        self.refused = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts += 1
            if self.running:
                self.refused += 1
                return httpx.Response(429, json={"error": {"code": "CONCURRENCY_LIMIT"}},
                                      headers={"Retry-After": "3600"})
            task_id = f"t{next(self.ids)}"
            self.running[task_id] = 0
            return httpx.Response(200, json={"task_id": task_id, "model": "image-b"})
        task_id = request.url.path.rsplit("/", 1)[-1]
        self.running[task_id] = self.running.get(task_id, 0) + 1
        status = "processing" if self.running[task_id] < 2 else "succeeded"
        if status == "succeeded":
            del self.running[task_id]
        return httpx.Response(200, json={
            "task_id": task_id, "status": status, "model": "image-b",
            "created_at": "2026-01-01T00:00:00Z",
            **({"images": [{"url": f"https://cdn.example/{task_id}.png"}]}
               if status == "succeeded" else {}),
        })


KITE = {"model": "image-b", "prompt": "a kite"}


async def test_a_submit_cancelled_while_waiting_for_room_leaves_the_room_to_the_next() -> None:
    service = OneAtATime()
    journal = MemoryJournal()
    async with AsyncClient("http://svc", "k", transport=httpx.MockTransport(service),
                           history=journal, retry_after_max=3600, retry_wait_initial=0.001,
                           poll_scale=0.001) as client:
        first = await client.submit({"model": "image-b", "prompt": "first"})
        waiting = asyncio.create_task(client.submit(KITE, reuse=True))
        while service.refused == 0 and not waiting.done():
            await asyncio.sleep(0.001)  # refused for concurrency: it now waits for room
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert (await client.wait(first)).succeeded
        second = await client.submit(KITE, reuse=True)  # not joined to the cancelled one
        assert service.posts == 3 and service.refused == 1
        assert (await client.wait(second)).succeeded
        assert client._life.slots.running == 0  # every slot came back
    assert [e.task_id for e in journal.entries() if e.task_id] == ["t1", "t2"]


async def test_a_submit_cancelled_while_waiting_for_room_was_never_billed() -> None:
    # Refused for concurrency, then cancelled while it waits for room: the one request that
    # reached the service was refused, so the history says nothing was billed and the
    # session's credits come back (one cancelled in flight keeps both: it may have been).
    service = OneAtATime()
    journal = MemoryJournal()
    async with AsyncClient("http://svc", "k", transport=httpx.MockTransport(service),
                           history=journal, retry_after_max=3600, retry_wait_initial=0.001,
                           poll_scale=0.001,
                           budget=Budget(session=1000, unpriced={"image-b": 10})) as client:
        first = await client.submit({"model": "image-b", "prompt": "first"})
        left = client.budget_remaining
        assert left is not None and left < 1000
        waiting = asyncio.create_task(client.submit(KITE))
        while service.refused == 0 and not waiting.done():
            await asyncio.sleep(0.001)
        assert client.budget_remaining is not None and client.budget_remaining < left
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert client.budget_remaining == left  # its reservation came back
        assert (await client.wait(first)).succeeded
    cancelled = [e for e in journal.entries() if e.task_id is None]
    assert [(e.state, e.reason) for e in cancelled] == [
        ("failed", "cancelled while waiting for room on the service; nothing was billed")]


async def test_a_plain_429_is_retried_by_the_lifecycle_not_the_transport() -> None:
    answers = iter([httpx.Response(429, headers={"Retry-After": "0"}),
                    httpx.Response(200, json={"task_id": "t1", "model": "image-b"})])
    config = resolve_config("http://svc", "k", max_retries=3)
    http = Http(config, httpx.MockTransport(lambda r: next(answers)))
    try:
        with pytest.raises(RateLimitError):  # the transport reports it, as it came
            await http.submit("/v1/images/generate", {}, Task.model_validate, model="image-b")
        answers = iter([httpx.Response(429, headers={"Retry-After": "0"}),
                        httpx.Response(200, json={"task_id": "t1", "model": "image-b",
                                                  "kind": "image"})])
        async with TaskHold(Slots(), Claims(), None, config) as hold:
            task = await hold.send(
                lambda: http.submit("/v1/images/generate", {}, Task.model_validate,
                                    model="image-b"), http, "image-b")
            hold.keep(task)
        assert task.task_id == "t1"
    finally:
        await http.aclose()
