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
import stamina.instrumentation

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
        (httpx.Response(400, text="<html>400 Bad Request (nginx)</html>"), False),
        (httpx.Response(413, text="<html>Request Entity Too Large</html>"), False),
        (httpx.Response(502, text="<html>Bad Gateway</html>"), False),
        (httpx.Response(504), False),
        (httpx.Response(500, json={"error": {"code": "INTERNAL", "message": "boom"}}), False),
    ],
    ids=["400-envelope", "401-envelope", "400-page", "413-page", "502-page", "504-empty",
         "500-envelope"],
)
async def test_only_the_services_own_4xx_envelope_means_refused(
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


async def test_an_empty_503_was_never_forwarded_and_is_sent_again() -> None:
    answers = [httpx.Response(503), httpx.Response(200, json=ACCEPTED)]
    async with client_for(lambda r: answers.pop(0)) as client:
        assert (await client.submit(IMAGE)).task_id == "t1"
    assert answers == []


async def test_retry_after_as_an_http_date_is_honoured_and_capped() -> None:
    waits: list[float] = []
    stamina.instrumentation.set_on_retry_hooks([lambda details: waits.append(details.wait_for)])
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    answers = [
        httpx.Response(429, headers={"Retry-After": soon}),
        httpx.Response(200, json=ACCEPTED),
    ]
    try:
        async with client_for(lambda r: answers.pop(0), retry_after_max=0.05) as client:
            await client.submit(IMAGE)
    finally:
        stamina.instrumentation.set_on_retry_hooks(None)
    assert waits == [0.05]  # 30 s away, capped at retry_after_max
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
