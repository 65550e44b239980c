"""The emulator, in-process with an injected clock: every endpoint, status, rule and error."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from typing import Any

import av
import httpx
import pytest
from PIL import Image

import genlab
from genlab.emulator import FaultConfig, create_app
from genlab.emulator._render import render_audio, render_image, render_test_video

KEY = "test-emulator-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
LATER = 100_000.0  # seconds: every task has ended by then


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def faults() -> FaultConfig:
    return FaultConfig(seed=1)


@pytest.fixture
async def app(clock: FakeClock, faults: FaultConfig) -> AsyncIterator[Any]:
    application = create_app(
        api_key=KEY, clock=clock, faults=faults, max_processing=2, max_body_bytes=2_000_000
    )
    yield application
    await application.emulator.aclose()
    application.emulator.close()


@pytest.fixture
async def http(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://emulator", headers=AUTH
    ) as client:
        yield client


async def submit(http: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
    kind = genlab.CATALOG[body["model"]].KIND
    return await http.post(f"/v1/{kind}s/generate", json=body)


async def record(http: httpx.AsyncClient, kind: str, task_id: str) -> dict[str, Any]:
    response = await http.get(f"/v1/{kind}s/tasks/{task_id}")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def upload(http: httpx.AsyncClient, name: str, data: bytes) -> str:
    response = await http.post("/v1/uploads", files={"file": (name, data)})
    assert response.status_code == 200, response.text
    url: str = response.json()["url"]
    return url


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["status"] == status
    assert error["request_id"]
    assert error["message"]
    return dict(error)


# --- the task life ---------------------------------------------------------------------


@pytest.mark.parametrize("model", [m for m in genlab.CATALOG if m != "video-d"])
async def test_each_model_moves_queued_processing_succeeded(
    http: httpx.AsyncClient, clock: FakeClock, model: str
) -> None:
    body = dict(genlab.CATALOG[model].EXAMPLE)
    kind = genlab.CATALOG[model].KIND
    response = await submit(http, body)
    assert response.status_code == 200, response.text
    task = response.json()
    assert set(task) == {"task_id", "model", "created_at", "request_id"}
    assert task["model"] == model

    first = await record(http, kind, task["task_id"])
    assert first["status"] == "queued"
    assert first["completed_at"] is None and first[f"{kind}s"] is None and first["error"] is None
    assert first["request_id"] and first["request_id"] != task["request_id"]

    clock.advance(1.5)
    assert (await record(http, kind, task["task_id"]))["status"] == "processing"

    clock.advance(LATER)
    done = await record(http, kind, task["task_id"])
    assert done["status"] == "succeeded"
    assert done["completed_at"] and done["error"] is None
    other = "images" if kind == "video" else "videos"
    assert other not in done
    assert done[f"{kind}s"]


async def test_queued_is_real_when_slots_are_busy(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    body = genlab.CATALOG["video-f"].EXAMPLE
    ids = [(await submit(http, dict(body))).json()["task_id"] for _ in range(3)]
    clock.advance(1.5)
    statuses = [(await record(http, "video", i))["status"] for i in ids]
    assert statuses == ["processing", "processing", "queued"]  # max_processing=2


async def test_failed_tasks_carry_an_error_object(
    http: httpx.AsyncClient, clock: FakeClock, faults: FaultConfig
) -> None:
    faults.fail_rate = 1.0
    task = (await submit(http, dict(genlab.CATALOG["image-b"].EXAMPLE))).json()
    clock.advance(LATER)
    done = await record(http, "image", task["task_id"])
    assert done["status"] == "failed"
    assert done["images"] is None and done["completed_at"]
    assert done["error"]["code"] == "GENERATION_FAILED" and done["error"]["message"]


# --- real media ------------------------------------------------------------------------


def probe_video(data: bytes) -> dict[str, Any]:
    container = av.open(io.BytesIO(data))
    try:
        video = container.streams.video[0]
        frames = sum(1 for _ in container.decode(video))
        return {
            "width": video.codec_context.width,
            "height": video.codec_context.height,
            "codec": video.codec_context.name,
            "pix_fmt": video.codec_context.pix_fmt,
            "fps": float(video.average_rate),
            "frames": frames,
            "audio": len(container.streams.audio) > 0,
        }
    finally:
        container.close()


@pytest.mark.parametrize(
    ("body", "size", "seconds", "audio"),
    [
        (
            {"model": "video-a", "prompt": "fox", "duration": 3, "resolution": "480P"},
            (854, 480),
            3,
            False,
        ),
        (
            {"model": "video-b", "prompt": "boat", "aspect_ratio": "9:16", "duration": 4},
            (720, 1280),
            4,
            True,
        ),
        (
            {
                "model": "video-f",
                "prompt": "clouds",
                "aspect_ratio": "1:1",
                "duration": 3,
                "generate_audio": True,
            },
            (720, 720),
            3,
            True,
        ),
    ],
)
async def test_videos_are_real_playable_mp4s(
    http: httpx.AsyncClient,
    clock: FakeClock,
    body: dict[str, Any],
    size: tuple[int, int],
    seconds: int,
    audio: bool,
) -> None:
    task = (await submit(http, body)).json()
    clock.advance(LATER)
    item = (await record(http, "video", task["task_id"]))["videos"][0]
    assert (item["width"], item["height"]) == size
    assert item["duration"] == seconds
    media = await http.get(item["url"])
    assert media.status_code == 200 and media.headers["content-type"] == "video/mp4"
    data = media.content
    assert data.find(b"moov") < data.find(b"mdat")  # moov at the front: plays while loading
    probed = probe_video(data)
    assert (probed["width"], probed["height"]) == size
    assert probed["codec"] == "h264" and probed["pix_fmt"] == "yuv420p"
    assert probed["fps"] == 24 and probed["frames"] == seconds * 24
    assert probed["audio"] is audio
    cover = await http.get(item["cover_url"])
    assert cover.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(cover.content)).size == size


async def test_video_b_returns_its_last_frame(http: httpx.AsyncClient, clock: FakeClock) -> None:
    body = {
        "model": "video-b",
        "prompt": "a kite",
        "duration": 4,
        "aspect_ratio": "4:3",
        "extra_params": {"return_last_frame": True},
    }
    task = (await submit(http, body)).json()
    clock.advance(LATER)
    item = (await record(http, "video", task["task_id"]))["videos"][0]
    frame = await http.get(item["last_frame_url"])
    assert frame.status_code == 200
    assert Image.open(io.BytesIO(frame.content)).size == (960, 720)


async def test_image_a_makes_n_images_of_the_tier_size(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    body = {
        "model": "image-a",
        "prompt": "a map",
        "resolution": "1K",
        "aspect_ratio": "16:9",
        "quality": "low",
        "n": 3,
    }
    task = (await submit(http, body)).json()
    clock.advance(LATER)
    images = (await record(http, "image", task["task_id"]))["images"]
    assert len(images) == 3
    contents = set()
    for item in images:
        assert (item["width"], item["height"]) == (1024, 576)
        data = (await http.get(item["url"])).content
        image = Image.open(io.BytesIO(data))
        assert image.format == "PNG" and image.size == (1024, 576)
        contents.add(data)
    assert len(contents) == 3  # three different images, not one repeated


async def test_media_supports_head_and_range(http: httpx.AsyncClient, clock: FakeClock) -> None:
    task = (await submit(http, dict(genlab.CATALOG["video-f"].EXAMPLE))).json()
    clock.advance(LATER)
    url = (await record(http, "video", task["task_id"]))["videos"][0]["url"]
    full = await http.get(url)
    head = await http.head(url)
    assert head.status_code == 200 and int(head.headers["content-length"]) == len(full.content)
    part = await http.get(url, headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == full.content[100:200]


async def test_media_answers_leave_no_pinned_copies(
    app: Any, http: httpx.AsyncClient, clock: FakeClock
) -> None:
    # Each answer is sent from a hard link of its own (the store may evict its name meanwhile);
    # the link goes when the answer ends, so served files do not pile up beside the store.
    task = (await submit(http, dict(genlab.CATALOG["video-f"].EXAMPLE))).json()
    clock.advance(LATER)
    url = (await record(http, "video", task["task_id"]))["videos"][0]["url"]
    for headers in ({}, {"Range": "bytes=0-9"}):
        assert (await http.get(url, headers=headers)).status_code in (200, 206)
    assert (await http.head(url)).status_code == 200
    scratch = app.emulator.store.root / ".scratch"
    assert not scratch.exists() or list(scratch.iterdir()) == []


async def test_media_is_not_served_before_success(http: httpx.AsyncClient) -> None:
    task = (await submit(http, dict(genlab.CATALOG["video-f"].EXAMPLE))).json()
    response = await http.get(f"/media/{task['task_id']}/video-0.mp4")
    assert_envelope(response, 404, "MEDIA_NOT_FOUND")


# --- references --------------------------------------------------------------------------


async def test_adaptive_ratio_follows_the_first_frame(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    url = await upload(http, "portrait.png", render_image(600, 800, lines=["frame"]))
    body = {
        "model": "video-c",
        "prompt": "",
        "resolution": "720P",
        "reference_images": [{"url": url, "reference_type": "first_frame"}],
    }
    task = (await submit(http, body)).json()
    clock.advance(LATER)
    item = (await record(http, "video", task["task_id"]))["videos"][0]
    assert (item["width"], item["height"]) == (720, 960)  # 3:4 like the frame


async def test_video_e_edit_lasts_as_long_as_its_input(
    http: httpx.AsyncClient, clock: FakeClock, app: Any
) -> None:
    url = await upload(http, "clip.mp4", render_test_video(1280, 720, 3.5, fps=24))
    body = {
        "model": "video-e",
        "prompt": "make it snow",
        "duration": 10,
        "reference_videos": [{"url": url, "reference_type": "edit_source"}],
    }
    task = (await submit(http, body)).json()
    clock.advance(LATER)
    item = (await record(http, "video", task["task_id"]))["videos"][0]
    assert item["duration"] == pytest.approx(3.5)
    ledger = app.emulator.ledger()
    assert ledger[-1]["billed_seconds"] == 4  # billed on the input rounded


@pytest.mark.parametrize(
    ("reference", "needle"),
    [
        (lambda: ("clip.mp4", render_test_video(720, 720, 3, fps=20)), "fps"),
        (lambda: ("clip.mp4", render_test_video(720, 720, 1.5, fps=24)), "at least 2"),
        (lambda: ("song.wav", render_audio(3)), "not video"),
    ],
)
async def test_bad_reference_media_get_a_clear_400(
    http: httpx.AsyncClient, reference: Any, needle: str
) -> None:
    name, data = reference()
    url = await upload(http, name, data)
    body = {"model": "video-b", "prompt": "x", "reference_videos": [{"url": url}]}
    error = assert_envelope(await submit(http, body), 400, "INVALID_PARAMETER")
    assert "video-b" in error["message"] and needle in error["message"]


async def test_video_a_input_plus_output_over_30_s_is_refused(http: httpx.AsyncClient) -> None:
    url = await upload(http, "clip.mp4", render_test_video(640, 360, 12, fps=24))
    body = {"model": "video-a", "prompt": "x", "duration": 20, "reference_videos": [{"url": url}]}
    error = assert_envelope(await submit(http, body), 400, "INVALID_PARAMETER")
    assert "30 s" in error["message"]


async def test_video_d_orientation_bounds_the_clip(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    image = await upload(http, "person.png", render_image(600, 900, lines=["person"]))
    clip = await upload(http, "dance.mp4", render_test_video(720, 720, 12, fps=24))
    body: dict[str, Any] = {
        "model": "video-d",
        "prompt": "dance",
        "reference_images": [{"url": image}],
        "reference_videos": [{"url": clip}],
        "extra_params": {"character_orientation": "image"},
    }
    error = assert_envelope(await submit(http, body), 400, "INVALID_PARAMETER")
    assert "at most 10 s" in error["message"]
    body["extra_params"] = {"character_orientation": "video"}
    task = (await submit(http, body)).json()
    clock.advance(LATER)
    item = (await record(http, "video", task["task_id"]))["videos"][0]
    assert item["duration"] == pytest.approx(12)


async def test_unreachable_reference_gets_a_clear_400(http: httpx.AsyncClient) -> None:
    body = {
        "model": "video-f",
        "prompt": "x",
        "reference_images": [
            {"url": "http://127.0.0.1:9/missing.png", "reference_type": "first_frame"}
        ],
    }
    error = assert_envelope(await submit(http, body), 400, "INVALID_PARAMETER")
    assert "could not be fetched" in error["message"]


async def test_non_media_upload_is_refused(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/uploads", files={"file": ("notes.txt", b"hello")})
    assert_envelope(response, 400, "INVALID_PARAMETER")


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/videos/generate"),
        ("POST", "/v1/images/generate"),
        ("GET", "/v1/videos/tasks/x"),
        ("GET", "/v1/images/tasks/x"),
        ("GET", "/v1/emulator/ledger"),
    ],
)
@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic abc", "Bearer"])
async def test_missing_or_wrong_key_is_401(
    http: httpx.AsyncClient, method: str, path: str, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    http.headers.pop("Authorization")
    response = await http.request(method, path, headers=headers, json={})
    error = assert_envelope(response, 401, "UNAUTHORIZED")
    assert KEY not in response.text and "Bearer <API_KEY>" in error["message"]


async def test_catalog_rules_are_400_never_422(http: httpx.AsyncClient) -> None:
    body = {
        "model": "video-c",
        "prompt": "x",
        "aspect_ratio": "16:9",
        "reference_images": [{"url": "https://example.com/a.png", "reference_type": "first_frame"}],
    }
    error = assert_envelope(await submit(http, body), 400, "INVALID_PARAMETER")
    assert "video-c: aspect_ratio is not accepted" in error["message"]


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"', b"", b"\xff\xfe"])
async def test_malformed_bodies_are_400(http: httpx.AsyncClient, raw: bytes) -> None:
    response = await http.post(
        "/v1/videos/generate", content=raw, headers={"content-type": "application/json"}
    )
    assert_envelope(response, 400, "INVALID_PARAMETER")


async def test_models_on_the_wrong_endpoint_are_400(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/images/generate", json=dict(genlab.CATALOG["video-a"].EXAMPLE))
    error = assert_envelope(response, 400, "INVALID_PARAMETER")
    assert "/v1/videos/generate" in error["message"]
    response = await http.post("/v1/videos/generate", json=dict(genlab.CATALOG["image-c"].EXAMPLE))
    assert "/v1/images/generate" in assert_envelope(response, 400, "INVALID_PARAMETER")["message"]


async def test_blocked_words_give_invalid_prompt_for_images_only(
    http: httpx.AsyncClient,
) -> None:
    response = await submit(http, {"model": "image-c", "prompt": "an NSFW poster"})
    assert_envelope(response, 400, "INVALID_PROMPT")
    assert (await submit(http, {"model": "video-f", "prompt": "an nsfw poster"})).status_code == 200


async def test_unknown_task_and_path_are_404(http: httpx.AsyncClient) -> None:
    assert_envelope(await http.get("/v1/videos/tasks/task_nope"), 404, "TASK_NOT_FOUND")
    image_task = (await submit(http, dict(genlab.CATALOG["image-b"].EXAMPLE))).json()
    # An image task is not a video task.
    response = await http.get(f"/v1/videos/tasks/{image_task['task_id']}")
    assert_envelope(response, 404, "TASK_NOT_FOUND")
    assert_envelope(await http.get("/v2/whatever"), 404, "NOT_FOUND")
    assert_envelope(await http.delete("/v1/videos/generate"), 405, "METHOD_NOT_ALLOWED")


async def test_oversized_bodies_are_refused_with_413(http: httpx.AsyncClient) -> None:
    big = {"model": "video-a", "prompt": "x" * 2_100_000}
    assert_envelope(await submit(http, big), 413, "PAYLOAD_TOO_LARGE")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted while read
        for _ in range(300):
            yield b" " * 10_000

    response = await http.post("/v1/videos/generate", content=chunks())
    assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")


# --- faults and the ledger ---------------------------------------------------------------


async def test_injected_errors_and_rate_limits(
    http: httpx.AsyncClient, faults: FaultConfig
) -> None:
    faults.update(error_rate=1.0, error_after_billing=0.0)
    shed = await submit(http, dict(genlab.CATALOG["video-f"].EXAMPLE))
    assert shed.status_code == 503 and shed.content == b""  # a gateway's bare 503
    assert_envelope(await http.get("/v1/videos/tasks/x"), 503, "SERVICE_UNAVAILABLE")
    faults.update(error_rate=0.0, rate_limit_rate=1.0, retry_after=2.5)
    limited = await submit(http, dict(genlab.CATALOG["video-f"].EXAMPLE))
    assert_envelope(limited, 429, "RATE_LIMITED")
    assert limited.headers["retry-after"] == "2.5"


async def test_a_bare_503_to_a_submit_comes_before_or_after_billing(
    http: httpx.AsyncClient, faults: FaultConfig, app: Any
) -> None:
    faults.update(error_rate=1.0, error_after_billing=0.0)
    before = await submit(http, dict(genlab.CATALOG["image-d"].EXAMPLE))
    assert app.emulator.ledger() == []  # the service never saw it
    faults.update(error_after_billing=1.0)
    after = await submit(http, dict(genlab.CATALOG["video-a"].EXAMPLE))
    assert (before.status_code, before.content) == (after.status_code, after.content)
    assert after.status_code == 503 and after.content == b""  # the same answer to a client
    (entry,) = app.emulator.ledger()  # yet this one was created and billed
    assert entry["model"] == "video-a" and entry["credits"] == 800


async def test_dropped_submit_is_billed_but_unanswered(
    http: httpx.AsyncClient, faults: FaultConfig, app: Any
) -> None:
    faults.drop_rate = 1.0
    with pytest.raises(ConnectionResetError):
        await submit(http, dict(genlab.CATALOG["video-a"].EXAMPLE))
    entries = app.emulator.ledger()
    assert len(entries) == 1 and entries[0]["credits"] == 800


async def test_ledger_lists_submissions_with_credits(http: httpx.AsyncClient) -> None:
    await submit(http, {"model": "video-a", "prompt": "x", "resolution": "1080P", "duration": 4})
    await submit(http, dict(genlab.CATALOG["image-d"].EXAMPLE))
    await submit(http, {"model": "video-a", "prompt": ""})  # refused: not billed
    ledger = (await http.get("/v1/emulator/ledger")).json()
    assert ledger["count"] == 2 and ledger["total_credits"] == 280 * 4
    assert [e["credits"] for e in ledger["submissions"]] == [1120, None]
    assert len({e["body_sha256"] for e in ledger["submissions"]}) == 2


async def test_faults_can_be_changed_over_http(
    http: httpx.AsyncClient, faults: FaultConfig
) -> None:
    response = await http.put("/v1/emulator/faults", json={"fail_rate": 0.5})
    assert response.status_code == 200 and faults.fail_rate == 0.5
    bad = await http.put("/v1/emulator/faults", json={"explode": True})
    assert "explode" in assert_envelope(bad, 400, "INVALID_PARAMETER")["message"]


async def test_openapi_documents_the_catalog(http: httpx.AsyncClient) -> None:
    doc = (await http.get("/openapi.json")).json()
    body = doc["paths"]["/v1/videos/generate"]["post"]["requestBody"]
    schema = json.dumps(body)
    assert "#/components/schemas/VideoA" in schema
    described = doc["components"]["schemas"]["VideoA"]["properties"]["duration"]
    assert described["minimum"] == 2 and described["maximum"] == 30 and described["description"]
