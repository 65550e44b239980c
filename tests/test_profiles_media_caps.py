"""The emulator, served on loopback as the plain ``emulator`` profile, takes reference media up
to each model's own stated cap, not a smaller default of its own: video-e takes reference
videos up to 200 MB. What is fetched streams to disk, so memory stays bounded."""

from __future__ import annotations

import http.server as httpserver
import struct
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from _loopback import serving
from genlab.catalog import MB, VideoE
from genlab.emulator import start_profile
from genlab.emulator._render import render_test_video

KEY = "sk-media-caps-5e0a"
AUTH = {"Authorization": f"Bearer {KEY}"}
BIG = 150 * MB  # over the emulator's 100 MB default for items without a rule of their own
CHUNK = 1 * MB


class PaddedVideo(httpserver.BaseHTTPRequestHandler):
    """``/150mb.mp4``: a valid 3 s 720P MP4 padded to 150 MB with a trailing ``free`` box
    (players and probes skip it), streamed a megabyte at a time, never held whole.
    ``/declared-too-big.mp4``: a header announcing one byte past video-e's 200 MB cap."""

    clip = b""
    sent = 0

    def do_GET(self) -> None:
        if self.path == "/declared-too-big.mp4":
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4")
            self.send_header("Content-Length", str(200 * MB + 1))
            self.end_headers()
            return  # the emulator must refuse from the header, before reading a body
        if self.path != "/150mb.mp4":
            self.send_error(404)
            return
        pad = BIG - len(self.clip)
        self.send_response(200)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Content-Length", str(BIG))
        self.end_headers()
        self.wfile.write(self.clip)
        self.wfile.write(struct.pack(">I", pad) + b"free")
        left, zeros = pad - 8, bytes(CHUNK)
        while left > 0:
            self.wfile.write(zeros[: min(CHUNK, left)])
            left -= CHUNK
        PaddedVideo.sent += BIG

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def host() -> Iterator[str]:
    PaddedVideo.clip = render_test_video(1280, 720, 3.0)
    with serving(PaddedVideo) as url:
        yield url


def video_e(url: str) -> dict[str, Any]:
    return {"model": "video-e", "prompt": "the same, at dusk", "reference_videos": [{"url": url}]}


def test_the_catalog_states_200_mb_for_video_e_videos() -> None:
    rules = VideoE.MEDIA["reference_videos"]
    assert rules.max_bytes == 200 * MB  # the premise of the tests below


def test_a_150_mb_reference_video_is_accepted_for_video_e(host: str) -> None:
    PaddedVideo.sent = 0
    # A patient fetch: 150 MB over loopback on a busy machine may take a while.
    with start_profile("emulator", api_key=KEY, time_scale=0.02, fetch_timeout=300) as service:
        tracemalloc.start()
        try:
            answer = httpx.post(f"{service.base_url}/v1/videos/generate",
                                json=video_e(f"{host}/150mb.mp4"), headers=AUTH, timeout=300)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert answer.status_code == 200, answer.text
        assert [e["task_id"] for e in service.ledger()] == [answer.json()["task_id"]]
    assert PaddedVideo.sent == BIG  # the whole file was fetched (and probed), not cut short
    # Streamed to a scratch file: Python never held a sizeable share of the 150 MB.
    assert peak < 40 * MB, f"{peak / MB:.0f} MB traced at the peak"


def test_a_reference_past_the_models_cap_is_still_refused(host: str) -> None:
    with start_profile("emulator", api_key=KEY, time_scale=0.02) as service:
        answer = httpx.post(f"{service.base_url}/v1/videos/generate",
                            json=video_e(f"{host}/declared-too-big.mp4"), headers=AUTH,
                            timeout=60)
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert error["code"] == "INVALID_PARAMETER"
        assert f"more than the {200 * MB} allowed" in error["message"]
        assert service.ledger() == []
