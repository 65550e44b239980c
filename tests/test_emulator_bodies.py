"""Large request bodies and reference fetching under limits, over real HTTP on loopback.

Bodies of ``OFFLOAD_BYTES`` or more are parsed in the emulator's JSON worker process (so a
64 MB body stalls no other client); the answers are the same as for small bodies, the worker
is replaced when it dies and stopped with the server. The memory and stall figures at the
64 MB cap are measured by ``make reliability`` (``tests/reliability/test_hostile.py``).
"""

from __future__ import annotations

import contextlib
import http.server as httpserver
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from _loopback import serving
from genlab.emulator import EmulatorHandle, create_app, start
from genlab.emulator._jsonparse import OFFLOAD_BYTES, Body

KEY = "sk-genlab-bodies-5e0b"
AUTH = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
BIG = OFFLOAD_BYTES + 1024


@pytest.fixture
def server() -> Iterator[EmulatorHandle]:
    with start(api_key=KEY, time_scale=0.01) as handle:
        yield handle


@pytest.fixture
def http(server: EmulatorHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, headers=AUTH, timeout=30) as client:
        yield client


def worker_pid(server: EmulatorHandle) -> int | None:
    return server.app.emulator.json.worker_pid


def submit(http: httpx.Client, body: bytes) -> dict[str, Any]:
    answer = http.post("/v1/videos/generate", content=body)
    data: dict[str, Any] = answer.json()
    data["status_code"] = answer.status_code
    return data


def long_prompt(size: int) -> bytes:
    return json.dumps({"model": "video-a", "prompt": "é" + "x" * size}).encode()


def test_a_large_body_is_parsed_in_a_worker_process_with_the_same_answers(
    server: EmulatorHandle, http: httpx.Client
) -> None:
    small = submit(http, long_prompt(30_000))
    assert worker_pid(server) is None  # small bodies never start it
    large = submit(http, long_prompt(BIG))
    pid = worker_pid(server)
    assert pid is not None and pid != os.getpid()
    assert psutil.Process(pid).ppid() == os.getpid()
    for answer in (small, large):  # parsed in full: the prompt's length is what is refused
        assert answer["status_code"] == 400
        assert "prompt" in answer["error"]["message"]
    broken = submit(http, long_prompt(BIG)[:-1])
    assert broken["status_code"] == 400
    assert broken["error"]["message"].startswith("the body is not valid JSON: ")
    nested = submit(http, b"[" * 5_000 + b" " * BIG + b"]" * 5_000)
    assert nested["error"]["message"] == "the body is not valid JSON: it is nested too deeply"
    assert worker_pid(server) == pid  # one worker, kept for the next body


def test_a_large_valid_body_is_accepted(server: EmulatorHandle, http: httpx.Client) -> None:
    body = {"model": "video-a", "prompt": "a boat", "duration": 2, "padding": " " * BIG}
    answer = http.post("/v1/videos/generate", content=json.dumps(body).encode())
    # The extra field is what is refused: the body itself was read and parsed whole.
    assert answer.status_code == 400
    assert "padding" in answer.json()["error"]["message"]
    spaced = json.dumps({"model": "video-a", "prompt": "a boat", "duration": 2}, indent=BIG // 2)
    assert len(spaced) > OFFLOAD_BYTES
    answer = http.post("/v1/videos/generate", content=spaced.encode())
    assert answer.status_code == 200, answer.text
    assert answer.json()["task_id"].startswith("task_")
    assert worker_pid(server) is not None


def test_a_body_longer_than_declared_still_fits_up_to_the_cap() -> None:
    with Body(2, limit=10) as body:  # a middleware rewrote it: longer than its header said
        body.append(b"[1, ")
        body.append(b"2]")
        with body.view() as view:
            assert bytes(view) == b"[1, 2]"
        with pytest.raises(ValueError, match="longer than 10 bytes"):
            body.append(b" " * 5)


def test_a_worker_that_died_is_replaced(server: EmulatorHandle, http: httpx.Client) -> None:
    submit(http, long_prompt(BIG))
    first = worker_pid(server)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    psutil.Process(first).wait(10)
    again = submit(http, long_prompt(BIG))
    assert again["status_code"] == 400 and "prompt" in again["error"]["message"]
    second = worker_pid(server)
    assert second is not None and second != first


def test_the_worker_stops_with_the_server() -> None:
    with start(api_key=KEY, time_scale=0.01) as server, httpx.Client(
        base_url=server.base_url, headers=AUTH, timeout=30
    ) as http:
        submit(http, long_prompt(BIG))
        pid = worker_pid(server)
        assert pid is not None
        worker = psutil.Process(pid)
    assert not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
    app = create_app(api_key=KEY)  # in-process: close() stops it too
    app.emulator.close()
    assert app.emulator.json.worker_pid is None


# --- reference fetching limits -------------------------------------------------------------


class Sources(httpserver.BaseHTTPRequestHandler):
    """``/slow/...``: answers 404 after 0.3 s, counting how many were fetched at once;
    ``/endless/...``: a body that never ends."""

    active = 0
    most = 0
    lock = threading.Lock()

    def do_GET(self) -> None:
        if self.path.startswith("/endless/"):
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()
            with contextlib.suppress(OSError):  # the emulator hung up: what is tested
                for _ in range(1 << 14):  # bounded: 1 GiB at most, far past any cap
                    self.wfile.write(b"\0" * (64 << 10))
            return
        with Sources.lock:
            Sources.active += 1
            Sources.most = max(Sources.most, Sources.active)
        time.sleep(0.3)
        with Sources.lock:
            Sources.active -= 1
        self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def sources() -> Iterator[str]:
    Sources.active = Sources.most = 0
    with serving(Sources) as url:
        yield url


def images(urls: list[str]) -> dict[str, Any]:
    return {"model": "video-a", "prompt": "refs", "reference_images": [{"url": u} for u in urls]}


@pytest.mark.parametrize("concurrency", [1, 3])
def test_fetch_concurrency_is_configurable(sources: str, concurrency: int) -> None:
    with start(api_key=KEY, fetch_concurrency=concurrency) as server:
        body = images([f"{sources}/slow/{i}.png" for i in range(6)])
        answer = httpx.post(f"{server.base_url}/v1/videos/generate", json=body,
                            headers=AUTH, timeout=30)
    assert answer.status_code == 400
    assert "HTTP 404" in answer.json()["error"]["message"]
    assert Sources.most == concurrency


def test_the_per_request_fetch_total_is_configurable(sources: str) -> None:
    with start(api_key=KEY, fetch_max_request_bytes=1024 * 1024) as server:
        body = images([f"{sources}/endless/{i}.png" for i in range(2)])
        answer = httpx.post(f"{server.base_url}/v1/videos/generate", json=body,
                            headers=AUTH, timeout=30)
    assert answer.status_code == 400
    assert "past 1 MB in all" in answer.json()["error"]["message"]


def test_fetch_limits_keep_their_defaults_and_refuse_nonsense(tmp_path: Path) -> None:
    app = create_app(api_key=KEY)
    fetch = app.emulator.config.fetch
    assert (fetch.max_request_bytes, fetch.concurrency) == (512 * 1024 * 1024, 4)
    app.emulator.close()
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        create_app(api_key=KEY, fetch_concurrency=0)
    with pytest.raises(ValueError, match="at least 1 byte"):
        create_app(api_key=KEY, fetch_max_request_bytes=0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    env["TMPDIR"] = str(tmp_path)
    process = subprocess.run(
        [sys.executable, "-m", "genlab", "serve", "--port", "0", "--api-key", KEY,
         "--fetch-concurrency", "0"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert process.returncode == 2
    assert "genlab serve: the fetch concurrency must be at least 1" in process.stderr
    assert not list(tmp_path.glob("genlab-emulator-*"))  # nothing left behind
