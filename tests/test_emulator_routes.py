"""The emulator's routes: authentication first on every protected route, answers in the wire
format, an OpenAPI document built from it, uploads kept under safe names, and outputs exactly
as the catalog plans them."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

import genlab
from genlab._wire import TaskRecord, wire_schemas
from genlab.catalog import plan_output
from genlab.emulator import FaultConfig, create_app
from genlab.emulator._render import render_image, render_test_video

KEY = "test-routes-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
LATER = 100_000.0
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")  # the service's format

# Every route that needs the key, with a request that would otherwise be refused for its body.
PROTECTED = [
    ("POST", "/v1/videos/generate"),
    ("POST", "/v1/images/generate"),
    ("GET", "/v1/videos/tasks/t"),
    ("GET", "/v1/images/tasks/t"),
    ("POST", "/v1/uploads"),
    ("GET", "/v1/emulator/ledger"),
    ("GET", "/v1/emulator/faults"),
    ("PUT", "/v1/emulator/faults"),
]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def faults() -> FaultConfig:
    return FaultConfig(seed=2)


@pytest.fixture
async def http(clock: FakeClock, faults: FaultConfig) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(api_key=KEY, clock=clock, faults=faults)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://emulator", headers=AUTH
        ) as client:
            yield client
    finally:
        await app.emulator.aclose()
        app.emulator.close()


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code and error["status"] == status and error["request_id"]
    return error


async def upload(http: httpx.AsyncClient, name: str, data: bytes) -> str:
    response = await http.post("/v1/uploads", files={"file": (name, data)})
    assert response.status_code == 200, response.text
    url: str = response.json()["url"]
    return url


# --- authentication and faults -------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), PROTECTED)
async def test_every_protected_route_checks_the_key_before_the_body(
    http: httpx.AsyncClient, method: str, path: str
) -> None:
    # No file, no JSON: without the key the answer is still 401, never a 400 about the body.
    response = await http.request(method, path, headers={"Authorization": "Bearer nope"})
    error = error_of(response, 401, "UNAUTHORIZED")
    assert "Bearer <API_KEY>" in error["message"]


async def test_media_needs_no_key(http: httpx.AsyncClient) -> None:
    url = await upload(http, "a.png", render_image(320, 320, lines=["a"]))
    answer = await http.get(url, headers={"Authorization": ""})
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"


async def test_uploads_are_subject_to_faults_and_the_controls_are_not(
    http: httpx.AsyncClient, faults: FaultConfig
) -> None:
    faults.update(rate_limit_rate=1.0, retry_after=3)
    limited = await http.post("/v1/uploads", files={"file": ("a.png", b"x")})
    error_of(limited, 429, "RATE_LIMITED")
    assert limited.headers["retry-after"] == "3"
    assert (await http.get("/v1/emulator/ledger")).status_code == 200
    assert (await http.get("/v1/emulator/faults")).json()["rate_limit_rate"] == 1.0


# --- answers in the wire format -------------------------------------------------------------


@pytest.mark.parametrize(
    "request_body",
    [
        {"model": "video-b", "prompt": "a boat", "extra_params": {"return_last_frame": True}},
        {"model": "image-a", "prompt": "a kite", "resolution": "1K", "aspect_ratio": "1:1",
         "quality": "low", "n": 2},
    ],
    ids=["video", "image"],
)
async def test_answers_are_the_wire_format(
    http: httpx.AsyncClient, clock: FakeClock, request_body: dict[str, Any]
) -> None:
    kind = genlab.CATALOG[request_body["model"]].KIND
    submitted = await http.post(f"/v1/{kind}s/generate", json=request_body)
    task = submitted.json()
    assert list(task) == ["task_id", "model", "created_at", "request_id"]
    assert TIMESTAMP.match(task["created_at"])

    running = (await http.get(f"/v1/{kind}s/tasks/{task['task_id']}")).json()
    assert running["completed_at"] is None and running[f"{kind}s"] is None
    clock.now += LATER
    done = (await http.get(f"/v1/{kind}s/tasks/{task['task_id']}")).json()
    assert list(done) == [
        "task_id", "status", "model", "created_at", "completed_at", f"{kind}s", "error",
        "request_id",
    ]
    assert done["created_at"] == task["created_at"] and TIMESTAMP.match(done["completed_at"])
    # Read and written again by the wire module, the answer is unchanged.
    assert TaskRecord.model_validate({**done, "kind": kind}).to_wire() == done


async def test_the_openapi_document_holds_the_wire_schemas(http: httpx.AsyncClient) -> None:
    schemas = (await http.get("/openapi.json")).json()["components"]["schemas"]
    for name, schema in wire_schemas().items():
        assert schemas[name] == schema
    query = (await http.get("/openapi.json")).json()["paths"]["/v1/images/tasks/{task_id}"]
    answer = query["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/ImageTaskRecord"}


# --- outputs as planned ---------------------------------------------------------------------


async def test_outputs_are_what_the_catalog_plans(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    url = await upload(http, "clip.mp4", render_test_video(720, 1280, 4.03, fps=30))
    request_body = {
        "model": "video-e",
        "prompt": "make it snow",
        "reference_videos": [{"url": url, "reference_type": "edit_source"}],
    }
    task = (await http.post("/v1/videos/generate", json=request_body)).json()
    clock.now += LATER
    item = (await http.get(f"/v1/videos/tasks/{task['task_id']}")).json()["videos"][0]
    # The edit follows its input: 9:16 at 720P, as long as the clip in whole 24 fps frames.
    assert (item["width"], item["height"]) == (720, 1280)
    assert item["duration"] == pytest.approx(97 / 24)
    assert "last_frame_url" not in item  # present only when the last frame was asked for
    planned = plan_output(genlab.validate({"model": "video-f", "prompt": "waves"}))
    assert (planned.width, planned.height, planned.duration) == (1280, 720, 5.0)


# --- uploads ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("cat.png", "cat.png"),
        ("../../etc/my photo (1).png", "my_photo_1_.png"),
        ("C:\\Users\\me\\cat.png", "cat.png"),
        ("..", "upload"),
        (".hidden.png", "hidden.png"),
        ("x" * 200 + ".png", "x" * 80),
    ],
)
async def test_uploads_are_kept_under_a_safe_name(
    http: httpx.AsyncClient, name: str, kept: str
) -> None:
    data = render_image(320, 320, lines=["a"])
    answer = await http.post("/v1/uploads", files={"file": (name, data)})
    assert answer.status_code == 200, answer.text
    url = answer.json()["url"]
    assert re.fullmatch(r"http://emulator/media/uploads/up_[0-9a-f]{32}/" + re.escape(kept), url)
    assert (await http.get(url)).content == data
