"""The client's tolerance, unit by unit: error shapes, ids, keys, extensions, Retry-After
dates, and answers that are not the service's envelope. The same behaviours over real HTTP
against a different service are in tests/test_different_service.py."""

from __future__ import annotations

import email.utils
import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

import genlab
from genlab import (
    APIConnectionError,
    AsyncClient,
    ConfigurationError,
    InvalidParameterError,
    RateLimitError,
    ServerError,
    SubmissionUncertainError,
    TaskError,
    TaskFailedError,
)
from genlab.client import TaskRecord
from genlab.client._media import extension_for
from genlab.client.journal import MemoryJournal

KEY = "sk-tolerance-77aa01"
IMAGE = {"model": "image-b", "prompt": "a red kite"}
ACCEPTED = {"task_id": "t1", "model": "image-b", "created_at": "2026-01-01T00:00:00Z"}


def client_for(handler: Any, **options: Any) -> AsyncClient:
    options = {"retry_wait_initial": 0.001, "retry_wait_max": 0.01, **options}
    return AsyncClient("http://svc", KEY, transport=httpx.MockTransport(handler), **options)


# --- error shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "code", "shown"),
    [
        ({"code": "OOM", "message": "out of memory"}, "OOM", "OOM: out of memory"),
        ({"type": "timeout", "detail": "took too long"}, "timeout", "timeout: took too long"),
        ({"code": 500, "message": None, "reason": "GPU lost"}, "500", "500: GPU lost"),
        ({"code": 42, "message": None}, "42", "42"),
        ("the prompt was refused", "UNKNOWN", "the prompt was refused"),
        ({"error": {"msg": "nested"}}, "UNKNOWN", "nested"),
        ({}, "UNKNOWN", "UNKNOWN"),
        (["a", "list"], "UNKNOWN", "UNKNOWN"),
    ],
)
def test_every_error_shape_is_read(sent: Any, code: str, shown: str) -> None:
    error = TaskError.model_validate(sent)
    assert error.code == code and str(error) == shown
    assert error.raw_json is not None and error.raw_json.startswith(("{", "[", '"'))


async def test_a_failed_record_whose_other_fields_are_broken_still_ends_the_wait() -> None:
    record = {"task_id": "t1", "status": "failed", "images": "not a list",
              "created_at": 12, "error": {"detail": "GPU lost"}}

    async with client_for(lambda r: httpx.Response(200, json=record)) as client:
        with pytest.raises(TaskFailedError, match="GPU lost") as caught:
            await client.wait("t1")
    assert isinstance(caught.value.record, TaskRecord) and caught.value.record.failed


# --- task ids -------------------------------------------------------------------------------


async def test_task_ids_are_sent_as_one_escaped_segment() -> None:
    seen: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path)
        return httpx.Response(200, json={"task_id": "a/b?c#d%e f", "status": "queued"})

    async with client_for(handler) as client:
        record = await client.get("a/b?c#d%e f", kind="video")
    assert record.task_id == "a/b?c#d%e f"
    assert seen == [b"/v1/videos/tasks/a%2Fb%3Fc%23d%25e%20f"]


@pytest.mark.parametrize("bad", ["", ".", ".."])
async def test_ids_that_cannot_be_a_path_segment_are_refused_before_sending(bad: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing may be sent")

    async with client_for(handler) as client:
        for call in (client.get(bad, kind="image"), client.wait(bad)):
            with pytest.raises(ValueError, match="task id"):
                await call


# --- keys -----------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["sk-abc\ndef", "sk-abc\x00def", "sk-abcdéf", "sk abc", "\t \n"])
def test_a_key_an_http_header_cannot_carry_is_refused_without_echoing_it(key: str) -> None:
    with pytest.raises(ConfigurationError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the whitespace-only key also warns of stripping
        AsyncClient("http://svc", key)
    text = str(caught.value) + repr(caught.value)
    assert "abc" not in text and "def" not in text and "API key" in text


def test_a_key_is_checked_from_the_environment_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENLAB_API_KEY", "sk-ümlaut")
    with pytest.raises(ConfigurationError, match="not printable ASCII"):
        AsyncClient("http://svc")


async def test_no_transport_exception_reaches_the_user_raw() -> None:
    # h11 quotes an illegal header value whole; genlab must never show such text.
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.LocalProtocolError(f"Illegal header value b'Bearer {KEY}'")

    journal = MemoryJournal()
    async with client_for(handler, history=journal) as client:
        outcomes = await client.map([IMAGE])
        with pytest.raises(APIConnectionError) as caught:
            await client.get("t1", kind="image")
    error = outcomes[0].error
    assert isinstance(error, SubmissionUncertainError)
    for text in (str(error), repr(error), repr(outcomes), str(caught.value), repr(caught.value)):
        assert KEY not in text
    assert error.__cause__ is None and caught.value.__cause__ is None
    assert [e.state for e in journal.entries()] == ["uncertain"]  # never left "sending"


# --- submits: what is uncertain -------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        (httpx.Response(400, json={"error": {"code": "INVALID_PARAMETER", "message": "no"}}), True),
        (httpx.Response(401, json={"error": {"code": "UNAUTHORIZED", "message": "key"}}), True),
        (httpx.Response(400, text="<html>400 Bad Request (nginx)</html>"), True),
        (httpx.Response(413, text="<html>Request Entity Too Large</html>"), True),
        (httpx.Response(403, text="<html><h1>Request blocked by WAF</h1></html>"), True),
        (httpx.Response(404, json={"detail": "Not Found"}), True),
        (httpx.Response(401, json={"detail": "invalid token"}), True),
        (httpx.Response(502, text="<html>Bad Gateway</html>"), False),
        (httpx.Response(504), False),
        (httpx.Response(500, json={"error": {"code": "INTERNAL", "message": "boom"}}), False),
    ],
    ids=["400-envelope", "401-envelope", "400-page", "413-page", "403-waf-page",
         "404-gateway-json", "401-gateway-json", "502-page", "504-empty", "500-envelope"],
)
async def test_a_4xx_of_any_shape_is_a_refusal_and_only_a_5xx_is_uncertain(
    answer: httpx.Response, refused: bool
) -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return answer

    journal = MemoryJournal()
    async with client_for(handler, history=journal) as client:
        with pytest.raises(genlab.GenlabError) as caught:
            await client.submit(IMAGE)
    assert len(requests) == 1
    assert isinstance(caught.value, SubmissionUncertainError) is not refused
    assert [e.state for e in journal.entries()] == ["failed" if refused else "uncertain"]
    if not refused:
        assert f"HTTP {answer.status_code}" in str(caught.value)
    else:
        assert "billed" not in str(caught.value)


async def test_a_gateways_404_to_a_submit_names_the_url_and_suggests_the_base_url() -> None:
    async with client_for(lambda r: httpx.Response(404, json={"detail": "Not Found"})) as client:
        with pytest.raises(genlab.NotFoundError) as caught:
            await client.submit(IMAGE)
    message = str(caught.value)
    assert "/v1/images/generate answered 404" in message and '("Not Found")' in message
    assert "base_url" in message and "nothing was created" in message


async def test_a_wafs_403_to_a_submit_is_a_refused_key_not_an_uncertain_bill() -> None:
    page = "<html><h1>Access denied</h1></html>"
    async with client_for(lambda r: httpx.Response(403, text=page)) as client:
        with pytest.raises(genlab.AuthenticationError) as caught:
            await client.submit(IMAGE)
    message = str(caught.value)
    assert "HTTP 403 (an HTML page, not the service's answer)" in message
    assert "nothing was created" in message and "API key" in message


async def test_a_2xx_carrying_the_error_envelope_is_the_services_refusal() -> None:
    envelope = {"error": {"code": "INVALID_PROMPT", "message": "the prompt was refused",
                          "status": 400, "request_id": "r9"}}
    journal = MemoryJournal()
    async with client_for(lambda r: httpx.Response(200, json=envelope),
                          history=journal) as client:
        with pytest.raises(genlab.InvalidPromptError) as caught:
            await client.submit(IMAGE)
    assert caught.value.code == "INVALID_PROMPT" and "the prompt was refused" in str(caught.value)
    assert [e.state for e in journal.entries()] == ["failed"]  # refused: nothing was billed


async def test_a_task_id_sent_as_a_number_is_read_as_its_text() -> None:
    answers = [httpx.Response(200, json={"task_id": 8812, "model": "image-b"}),
               httpx.Response(200, json={"task_id": 8812, "status": "SUCCEEDED",
                                         "model": "image-b",
                                         "images": [{"url": "https://cdn/a.png"}]})]
    async with client_for(lambda r: answers.pop(0)) as client:
        task = await client.submit(IMAGE)
        record = await client.wait(task)
    assert task.task_id == "8812" and record.task_id == "8812" and record.succeeded


async def test_an_empty_503_may_follow_a_billed_task_and_is_never_resent() -> None:
    # A gateway can answer a bare 503 after the service created and billed the task.
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(503) if len(sent) == 1 else httpx.Response(200, json=ACCEPTED)

    journal = MemoryJournal()
    async with client_for(handler, history=journal, max_retries=5) as client:
        with pytest.raises(genlab.SubmissionUncertainError) as caught:
            await client.submit(IMAGE)
    assert len(sent) == 1  # not sent again: it may already be billed
    message = str(caught.value)
    assert "HTTP 503 with an empty body" in message and "NOT resent" in message
    assert caught.value.status == 503
    assert [e.state for e in journal.entries()] == ["uncertain"]


async def test_a_retry_after_date_beyond_the_clients_patience_fails_at_once() -> None:
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(429, headers={"Retry-After": soon})

    async with client_for(handler, retry_after_max=0.05) as client:
        with pytest.raises(genlab.QuotaExceededError) as caught:
            await client.submit(IMAGE)
    assert len(requests) == 1  # not slept on, not sent again
    assert "longer than this client waits (retry_after_max=0.05 s)" in str(caught.value)
    error = genlab.APIError.from_response(429, None, headers={"Retry-After": soon})
    assert isinstance(error, RateLimitError) and error.retry_after is not None
    assert 25 < error.retry_after <= 30


async def test_a_5xx_to_a_get_is_still_a_server_error() -> None:
    async with client_for(lambda r: httpx.Response(502, text="<html/>"), max_retries=1) as c:
        with pytest.raises(ServerError):
            await c.get("t1", kind="image")


# --- extensions and extra_body ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "ext"),
    [
        (b"\x89PNG\r\n\x1a\n", ".png"),
        (b"\xff\xd8\xff\xe0", ".jpg"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", ".webp"),
        (b"\x00\x00\x00\x20ftypisom", ".mp4"),
        (b"\x00\x00\x00\x14ftypqt  ", ".mov"),
        (b"GIF89a", ".gif"),
        (b"something else", ".bin"),
    ],
)
def test_a_generic_content_type_lets_the_bytes_decide(head: bytes, ext: str) -> None:
    for generic in (None, "application/octet-stream", "binary/octet-stream"):
        assert extension_for(generic, "https://cdn/x/abc", ".bin", head) == ext
    assert extension_for("image/png", "https://cdn/x/abc", ".bin", b"\xff\xd8\xff") == ".png"


async def test_extra_body_is_sent_and_known_fields_in_it_are_checked() -> None:
    bodies: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        return httpx.Response(200, json=ACCEPTED)

    async with client_for(handler) as client:
        await client.submit(IMAGE, extra_body={"style_strength": 0.4, "resolution": "1K"})
        with pytest.raises(InvalidParameterError, match="kind must be"):
            await client.submit(model="video-z", kind="audio")  # type: ignore[arg-type]
        with pytest.raises(InvalidParameterError, match="JSON"):
            await client.submit(IMAGE, extra_body={"when": object()})
        with pytest.raises(InvalidParameterError, match="image model"):
            await client.submit(IMAGE, kind="video")
    assert b'"style_strength":0.4' in bodies[0].replace(b" ", b"") and len(bodies) == 1
