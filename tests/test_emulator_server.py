"""The emulator over real HTTP: the in-thread server and the ``genlab serve`` command."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

import genlab
from genlab import emulator

KEY = "server-test-key"


@pytest.fixture
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


def test_start_serves_tasks_to_the_end(server: emulator.EmulatorHandle) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", server.base_url)
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=10) as http:
        task = http.post("/v1/images/generate", json=dict(genlab.CATALOG["image-d"].EXAMPLE))
        assert task.status_code == 200
        task_id = task.json()["task_id"]
        seen = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status = http.get(f"/v1/images/tasks/{task_id}").json()["status"]
            if not seen or seen[-1] != status:
                seen.append(status)
            if status == "succeeded":
                break
            time.sleep(0.005)
        assert seen[-1] == "succeeded"
        assert seen[0] in ("queued", "processing")
        record = http.get(f"/v1/images/tasks/{task_id}").json()
        image = http.get(record["images"][0]["url"])  # media needs no key
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"


def test_listening_socket_turns_nagle_off(server: emulator.EmulatorHandle) -> None:
    sock = emulator.listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_dropped_submit_is_billed_and_the_client_sees_no_answer(
    server: emulator.EmulatorHandle,
) -> None:
    server.faults.drop_rate = 1.0
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=10) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            http.post("/v1/videos/generate", json=dict(genlab.CATALOG["video-a"].EXAMPLE))
        server.faults.drop_rate = 0.0
        ledger = http.get("/v1/emulator/ledger").json()
    assert ledger["count"] == 1 and ledger["total_credits"] == 800


def test_stop_frees_the_port() -> None:
    handle = emulator.start(api_key=KEY)
    port = int(handle.base_url.rsplit(":", 1)[1])
    handle.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v1/videos/tasks/x", timeout=2)


def test_genlab_serve_prints_its_url_and_serves_until_interrupted() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "genlab", "serve", "--port", "0", "--api-key", KEY,
               "--time-scale", "0.02"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        assert match, line
        base_url = match.group(1)
        headers = {"Authorization": f"Bearer {KEY}"}
        response = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                response = httpx.get(f"{base_url}/v1/videos/tasks/x", headers=headers, timeout=2)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert response is not None and response.json()["error"]["code"] == "TASK_NOT_FOUND"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        output = process.stdout.read()
        assert KEY not in line + output  # the key is never printed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
