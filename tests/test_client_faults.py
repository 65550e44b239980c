"""Retries and faults: a submit is sent again only when it provably never arrived, GETs are
retried, and under injected faults nothing is billed twice."""

from __future__ import annotations

import collections
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import stamina
import stamina.instrumentation

from genlab import (
    APIConnectionError,
    APIError,
    AsyncClient,
    AuthenticationError,
    Client,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    ServerError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskTimeoutError,
    UnreadableResponseError,
)
from genlab.client.journal import MemoryJournal
from genlab.emulator import EmulatorHandle
from genlab.emulator._digest import body_digest

BODY = {"model": "image-b", "prompt": "a red kite"}
ACCEPTED = {
    "task_id": "t1", "model": "image-b", "created_at": "2026-01-01T00:00:00Z", "request_id": "r"
}
RECORD = {"task_id": "t1", "status": "succeeded", "model": "image-b",
          "images": [{"url": "http://x/media/a.png", "width": 1, "height": 1}]}
ENVELOPE_503 = {"error": {"code": "SERVICE_UNAVAILABLE", "message": "busy", "status": 503,
                          "request_id": "r"}}
ENVELOPE_500 = {"error": {"code": "INTERNAL_ERROR", "message": "boom", "status": 500,
                          "request_id": "r"}}

Step = httpx.Response | Exception


class Script:
    """A scripted service: each request gets the next step (an answer or an exception)."""

    def __init__(self, *steps: Step) -> None:
        self.steps = collections.deque(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.steps:
            pytest.fail(f"unexpected extra request: {request.method} {request.url}")
        step = self.steps.popleft()
        if isinstance(step, Exception):
            raise step
        return step


def client_for(script: Script, **options: Any) -> AsyncClient:
    options = {"retry_wait_initial": 0.001, "retry_wait_max": 0.01, **options}
    return AsyncClient("http://svc", "k", transport=httpx.MockTransport(script), **options)


@pytest.fixture
def retry_waits() -> Iterator[list[float]]:
    """The wait stamina scheduled before each retry."""
    waits: list[float] = []
    stamina.instrumentation.set_on_retry_hooks([lambda details: waits.append(details.wait_for)])
    yield waits
    stamina.instrumentation.set_on_retry_hooks(None)


# --- submits: retried only when provably not sent --------------------------------------


@pytest.mark.parametrize(
    "first",
    [
        httpx.ConnectError("refused"),
        httpx.ConnectTimeout("slow connect"),
        httpx.PoolTimeout("no connection free"),
        httpx.Response(429, json={"error": {"code": "RATE_LIMITED"}}),
    ],
    ids=["connect-error", "connect-timeout", "pool-timeout", "429"],
)
async def test_a_submit_that_never_arrived_is_sent_again(first: Step) -> None:
    script = Script(first, httpx.Response(200, json=ACCEPTED))
    async with client_for(script) as client:
        task = await client.submit(BODY)
    assert task.task_id == "t1"
    assert len(script.requests) == 2


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ReadTimeout("no answer"),
        httpx.WriteTimeout("stalled"),
        httpx.RemoteProtocolError("server disconnected"),
        httpx.ReadError("reset"),
        httpx.WriteError("broken pipe"),
        ConnectionResetError("dropped by an in-process app"),
        httpx.Response(503),  # empty: a gateway may answer it after the task was billed
    ],
    ids=lambda e: "empty-503" if isinstance(e, httpx.Response) else type(e).__name__,
)
async def test_a_submit_that_may_have_arrived_is_never_resent(failure: Step) -> None:
    script = Script(failure)
    journal = MemoryJournal()
    async with client_for(script, history=journal, max_retries=5) as client:
        with pytest.raises(SubmissionUncertainError) as caught:
            await client.submit(BODY)
    assert len(script.requests) == 1
    message = str(caught.value)
    assert "NOT resent" in message and "history" in message
    assert caught.value.model == "image-b" and caught.value.body == BODY
    (entry,) = journal.uncertain()
    assert entry.entry.body == BODY and entry.task_id is None


async def test_an_unreadable_acceptance_is_uncertain_too() -> None:
    script = Script(httpx.Response(200, text="<html>ok</html>"))
    journal = MemoryJournal()
    async with client_for(script, history=journal) as client:
        with pytest.raises(SubmissionUncertainError):
            await client.submit(BODY)
    assert len(journal.uncertain()) == 1


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        (httpx.Response(200, text="<html>proxy login</html>"), "not a JSON object"),
        (httpx.Response(200, json=["t1"]), "not a JSON object"),
        (httpx.Response(200, json={"status": "succeeded"}), "task_id"),
    ],
    ids=["html", "list", "no-task-id"],
)
async def test_an_unreadable_record_is_its_own_error(answer: httpx.Response, needle: str) -> None:
    script = Script(answer)
    async with client_for(script) as client:
        with pytest.raises(UnreadableResponseError, match=needle) as caught:
            await client.get("t1", kind="image")
    error = caught.value
    assert not isinstance(error, APIError) and error.status == 200
    assert error.excerpt == answer.text[:500]
    assert len(script.requests) == 1  # an answer that came back is not asked again


async def test_an_unreadable_record_is_transient_until_the_wait_deadline() -> None:
    page = "<html>" + "proxy says hold on " * 100 + "</html>"
    script = Script(*[httpx.Response(200, text=page)] * 50)
    async with client_for(script, poll_scale=0.01) as client:
        with pytest.raises(UnreadableResponseError, match="task t1.*deadline") as caught:
            await client.wait("t1", timeout=0.3)  # polled again, then reported, never stuck
    assert 1 < len(script.requests) < 50
    assert caught.value.excerpt == page[:500] and len(caught.value.excerpt) == 500
    assert isinstance(caught.value.__cause__, TaskTimeoutError)

    recovers = Script(httpx.Response(200, text=page), httpx.Response(200, json=RECORD))
    async with client_for(recovers, poll_scale=0.01) as client:
        record = await client.wait("t1", timeout=30)
    assert record.succeeded and len(recovers.requests) == 2


@pytest.mark.parametrize(
    "answer",
    [httpx.Response(500, json=ENVELOPE_500), httpx.Response(503, json=ENVELOPE_503)],
    ids=["500", "503-envelope"],
)
async def test_a_server_error_answer_to_a_submit_is_not_retried(answer: httpx.Response) -> None:
    # A 5xx may come after the task was created: uncertain, never "refused" (which would
    # invite paying again). See docs/spec-decisions.md, "Submits answered 5xx".
    script = Script(answer)
    journal = MemoryJournal()
    async with client_for(script, history=journal) as client:
        with pytest.raises(SubmissionUncertainError) as caught:
            await client.submit(BODY)
    assert len(script.requests) == 1
    cause = caught.value.__cause__
    assert isinstance(cause, ServerError)
    assert cause.code in ("INTERNAL_ERROR", "SERVICE_UNAVAILABLE")
    assert caught.value.status == answer.status_code and cause.code in str(caught.value)
    assert [e.state for e in journal.entries()] == ["uncertain"]


async def test_refused_submits_are_not_retried() -> None:
    script = Script(httpx.Response(401, json={"error": {"code": "UNAUTHORIZED"}}))
    async with client_for(script) as client:
        with pytest.raises(AuthenticationError):
            await client.submit(BODY)
    assert len(script.requests) == 1


async def test_retries_stop_after_max_retries() -> None:
    script = Script(*[httpx.ConnectError("refused")] * 3)
    async with client_for(script, max_retries=2) as client:
        with pytest.raises(APIConnectionError, match="http://svc"):
            await client.submit(BODY)
    assert len(script.requests) == 3
    limited = Script(*[httpx.Response(429, headers={"Retry-After": "0"})] * 2)
    async with client_for(limited, max_retries=1) as client:
        with pytest.raises(RateLimitError):
            await client.submit(BODY)
    assert len(limited.requests) == 2


async def test_retry_after_is_honoured_within_the_clients_patience(
    retry_waits: list[float],
) -> None:
    script = Script(
        httpx.Response(429, headers={"Retry-After": "0.02"}),
        httpx.Response(200, json=ACCEPTED),
    )
    async with client_for(script, retry_after_max=0.05) as client:
        await client.submit(BODY)
    assert retry_waits == [pytest.approx(0.02)]


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (httpx.Response(429, headers={"Retry-After": "3600"}), "It may clear in about 1 h"),
        (httpx.Response(429, json={"error": {"code": "QUOTA_EXCEEDED",
                                             "message": "monthly quota used up"}}),
         "QUOTA_EXCEEDED, monthly quota used up. It did not say when it clears"),
        (httpx.Response(402, json={"error": {"code": "INSUFFICIENT_BALANCE",
                                             "message": "top up your balance"}}),
         "INSUFFICIENT_BALANCE, top up your balance"),
    ],
    ids=["retry-after-an-hour", "quota-code", "balance-402"],
)
async def test_a_quota_that_will_not_clear_fails_at_once_saying_when_it_may(
    answer: httpx.Response, says: str, retry_waits: list[float]
) -> None:
    script = Script(answer, httpx.Response(200, json=ACCEPTED))
    async with client_for(script, retry_after_max=60) as client:
        with pytest.raises(QuotaExceededError) as caught:
            await client.submit(BODY)
    assert says in str(caught.value) and "Nothing was sent again" in str(caught.value)
    assert len(script.requests) == 1 and retry_waits == []  # no sleeping, nothing resent


async def test_the_key_goes_to_the_api_but_never_to_media_hosts(tmp_path: Any) -> None:
    record = {**RECORD, "images": [{"url": "https://cdn.example/a.png"}]}
    script = Script(
        httpx.Response(200, json=record),
        httpx.Response(200, content=b"\x89PNG", headers={"content-type": "image/png"}),
    )
    async with client_for(script) as client:
        fetched = await client.get("t1", kind="image")
        await client.download(fetched, tmp_path)
    api, media = script.requests
    assert api.headers["authorization"] == "Bearer k"
    assert "authorization" not in media.headers


# --- GETs: retried on transient trouble ------------------------------------------------


@pytest.mark.parametrize(
    "first",
    [
        httpx.Response(500, json=ENVELOPE_500),
        httpx.Response(503, json=ENVELOPE_503),
        httpx.Response(429, headers={"Retry-After": "0"}),
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("disconnected"),
        ConnectionResetError("reset"),
    ],
    ids=["500", "503", "429", "read-timeout", "protocol", "reset"],
)
async def test_a_get_is_retried_on_transient_trouble(first: Step) -> None:
    script = Script(first, httpx.Response(200, json=RECORD))
    async with client_for(script) as client:
        record = await client.get("t1", kind="image")
    assert record.succeeded and len(script.requests) == 2


async def test_a_get_is_not_retried_on_404() -> None:
    script = Script(httpx.Response(404, json={"error": {"code": "TASK_NOT_FOUND"}}))
    async with client_for(script) as client:
        with pytest.raises(NotFoundError):
            await client.get("t1", kind="video")
    assert len(script.requests) == 1


async def test_waiting_outlasts_an_outage_longer_than_the_retries() -> None:
    outage = [httpx.Response(503, json=ENVELOPE_503)] * 7  # more than max_retries + 1
    script = Script(
        httpx.Response(200, json={**RECORD, "status": "processing", "images": None}),
        *outage,
        httpx.Response(200, json=RECORD),
    )
    async with client_for(script, max_retries=1, poll_scale=0.001) as client:
        record = await client.wait("t1")
    assert record.succeeded


async def test_an_unknown_status_is_not_final() -> None:
    script = Script(
        httpx.Response(200, json={**RECORD, "status": "moderating", "images": None}),
        httpx.Response(200, json=RECORD),
    )
    seen: list[str] = []
    async with client_for(script, poll_scale=0.001) as client:
        await client.wait("t1", on_update=lambda r: seen.append(r.status))
    assert seen == ["moderating", "succeeded"]


# --- against the emulator's own faults -------------------------------------------------


async def test_an_in_process_dropped_submit_is_uncertain_and_billed_once(
    client_async: AsyncClient, client_app: Any
) -> None:
    client_app.emulator.faults.update(drop_rate=1.0)
    with pytest.raises(SubmissionUncertainError):
        await client_async.submit(BODY)
    assert len(client_app.emulator.ledger()) == 1
    assert len(client_async.history.uncertain()) == 1  # type: ignore[attr-defined]


def test_a_dropped_submit_over_http_is_uncertain_and_billed_once(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    client_server.faults.update(drop_rate=1.0)
    with Client(client_server.base_url, client_server.api_key, **client_options) as client:
        with pytest.raises(SubmissionUncertainError):
            client.submit(BODY)
        assert len(client.history.uncertain()) == 1  # type: ignore[attr-defined]
    assert len(client_server.ledger()) == 1


def test_a_refused_connection_is_retried_then_reported(client_options: dict[str, Any]) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}", "k", max_retries=2, **client_options) as client:
        with pytest.raises(APIConnectionError, match="could not reach"):
            client.submit(BODY)
        assert [e.state for e in client.history.entries()] == ["failed"]  # type: ignore[attr-defined]


def _fault_requests(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 3 == 0:
            out.append({"model": "video-a", "prompt": f"clip {i}", "duration": 2,
                        "resolution": "480P"})
        elif i % 3 == 1:
            out.append({"model": "image-b", "prompt": f"kite {i}"})
        else:
            out.append({"model": "image-d", "prompt": f"sketch {i}", "resolution": "512"})
    return out


def test_under_faults_every_task_ends_known_and_nothing_is_billed_twice(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    client_server.faults.update(
        fail_rate=0.25, error_rate=0.15, error_after_billing=0.5, rate_limit_rate=0.1,
        retry_after=0.01, drop_rate=0.2, seed=1234,
    )
    requests = _fault_requests(40)
    with Client(client_server.base_url, client_server.api_key, max_retries=6,
                **client_options) as client:
        outcomes = client.map(requests, concurrency=8)
        journal = client.history
    assert len(outcomes) == 40
    kinds = collections.Counter(
        "ok" if o.ok else type(o.error).__name__ for o in outcomes
    )
    # Every task ends in a state the caller can act on.
    assert set(kinds) <= {"ok", "TaskFailedError", "SubmissionUncertainError"}, kinds
    assert kinds["ok"] and kinds["TaskFailedError"] and kinds["SubmissionUncertainError"]
    for outcome in outcomes:
        if isinstance(outcome.error, SubmissionUncertainError):
            assert outcome.task is None
        if isinstance(outcome.error, TaskFailedError):
            assert outcome.record is not None and outcome.record.failed
        assert not isinstance(outcome.error, TaskTimeoutError)
    ledger = client_server.ledger()
    accepted = [o for o in outcomes if o.task is not None]
    uncertain = [o for o in outcomes if isinstance(o.error, SubmissionUncertainError)]
    # Nothing was submitted twice, and every billed submission is accounted for: accepted,
    # or reported uncertain (a dropped answer, or a bare 503 after billing).
    digests = [e["body_sha256"] for e in ledger]
    assert len(digests) == len(set(digests))
    billed_uncertain = [o for o in outcomes if isinstance(o.error, SubmissionUncertainError)
                        and body_digest(o.error.body) in digests]
    assert len(ledger) == len(accepted) + len(billed_uncertain)
    assert {e["task_id"] for e in ledger} >= {o.task_id for o in accepted}
    assert len(journal.uncertain()) == len(uncertain)  # type: ignore[attr-defined]
