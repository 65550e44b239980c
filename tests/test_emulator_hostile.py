"""The emulator under hostile or careless input, over real HTTP on loopback: the key is checked
before any body is read, nothing fills the disk or the memory, its own media URLs are told
apart by host and port, and ``genlab serve`` cleans up after itself.

The full-size memory and stall figures are measured by ``make reliability``
(``tests/reliability/test_hostile.py``); these are the short forms.
"""

from __future__ import annotations

import http.server as httpserver
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
from _loopback import serving
from genlab import InvalidParameterError
from genlab.emulator import EmulatorHandle, create_app, samples, start

KEY = "sk-genlab-hostile-3c8e1a"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture
def media_dir(tmp_path: Path) -> Path:
    return tmp_path / "media"


@pytest.fixture
def server(media_dir: Path) -> Iterator[EmulatorHandle]:
    with start(api_key=KEY, time_scale=0.01, media_dir=media_dir, fetch_timeout=5.0) as handle:
        yield handle


@pytest.fixture
def http(server: EmulatorHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, headers=AUTH, timeout=30) as client:
        yield client


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def raw_exchange(base_url: str, head: str, body: bytes, *, send_all: bool = False) -> bytes:
    """Send request headers and (part of) a body on a raw socket; the status line answered."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n\r\n")
        try:
            sock.sendall(body)
        except OSError:
            pass  # the server answered and closed before taking it all: what we test
        answer = b""
        deadline = time.monotonic() + 10
        while b"\r\n" not in answer and time.monotonic() < deadline:
            piece = sock.recv(4096)
            if not piece:
                break
            answer += piece
    return answer.split(b"\r\n", 1)[0]


# --- security ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "status"), [("wrong", b"401"), (KEY, b"413")], ids=["wrong-key", "over-cap"]
)
def test_uploads_are_refused_before_any_body_is_read(
    server: EmulatorHandle, media_dir: Path, key: str, status: bytes
) -> None:
    # A gigabyte is announced, one megabyte sent: the answer comes before the rest is awaited.
    head = (
        f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1073741824"
    )
    before = files_under(media_dir)
    line = raw_exchange(server.base_url, head, b"x" * (1 << 20))
    assert status in line, line
    assert files_under(media_dir) == before  # nothing was written


def test_a_streamed_upload_past_the_cap_stops_at_the_cap(media_dir: Path) -> None:
    cap = 2 << 20
    with start(api_key=KEY, media_dir=media_dir, max_body_bytes=cap) as server:

        def body() -> Iterator[bytes]:  # chunked: no Content-Length to refuse early from
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n'
            for _ in range(64):
                yield b"\0" * (256 << 10)
            yield b"\r\n--b--\r\n"

        headers = {**AUTH, "Content-Type": "multipart/form-data; boundary=b"}
        answer = httpx.post(
            f"{server.base_url}/v1/uploads", content=body(), headers=headers, timeout=30
        )
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert files_under(media_dir) == []  # the partial file was removed


@pytest.mark.parametrize("key", ["", "   ", "\t\n"])
def test_an_empty_key_is_refused_at_start(key: str) -> None:
    with pytest.raises(ValueError, match="API key is empty"):
        start(api_key=key)
    with pytest.raises(ValueError, match="API key is empty"):
        create_app(api_key=key)


def test_a_bare_bearer_header_is_refused(server: EmulatorHandle) -> None:
    answer = httpx.get(f"{server.base_url}/v1/emulator/ledger", headers={"Authorization": "Bearer"})
    assert answer.status_code == 401


@contextmanager
def other_server(path: str, body: bytes) -> Iterator[str]:
    """A loopback server answering ``body`` at ``path`` only (404 elsewhere)."""

    class Handler(httpserver.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != path:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url


def test_media_urls_are_its_own_only_at_its_own_host_and_port(http: httpx.Client) -> None:
    png = samples.image(720, 720)
    url = http.post("/v1/uploads", files={"file": ("a.png", png)}).json()["url"]
    path = httpx.URL(url).path
    first = {"model": "video-b", "prompt": "p", "reference_images": [{"url": url,
             "reference_type": "first_frame"}]}
    assert http.post("/v1/videos/generate", json=first).status_code == 200
    # The same path on another port is another server's: fetched from there (a 404 here).
    with other_server("/elsewhere", b"") as elsewhere:
        first["reference_images"][0]["url"] = elsewhere + path
        answer = http.post("/v1/videos/generate", json=first)
    assert answer.status_code == 400
    assert "answered HTTP 404" in answer.json()["error"]["message"]


# --- bounded memory, bounded disk ----------------------------------------------------------


def test_a_body_of_countless_tiny_objects_is_refused_clearly(http: httpx.Client) -> None:
    body = b'{"model":"video-a","prompt":"x","extra":[' + b"{}," * 200_000 + b"{}]}"
    answer = http.post("/v1/videos/generate", content=body,
                       headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert "more than 100,000 JSON values" in answer.json()["error"]["message"]


class Endless(httpserver.BaseHTTPRequestHandler):
    """Answers every GET with a body that never ends."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "video/mp4")
        self.end_headers()
        chunk = b"\0" * (64 << 10)
        try:
            for _ in range(1 << 16):  # bounded: 4 GiB at most, far past any cap
                self.wfile.write(chunk)
        except OSError:
            pass  # the emulator hung up: what is being tested

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def endless_server() -> Iterator[str]:
    with serving(Endless) as url:
        yield url


def test_endless_references_are_cut_at_their_cap_and_leave_nothing(
    http: httpx.Client, media_dir: Path
) -> None:
    with endless_server() as endless:
        body = {"model": "video-b", "prompt": "p",
                "reference_images": [{"url": f"{endless}/i{i}.png"} for i in range(2)],
                "reference_videos": [{"url": f"{endless}/v.mp4"}]}
        answer = http.post("/v1/videos/generate", json=body)
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert "reference_images[0]" in message and "larger than the 31457280 bytes" in message
    assert "reference_videos[0]" in message and "52428800" in message
    assert files_under(media_dir) == []  # scratch files removed


def test_accepted_tasks_keep_no_whole_prompt(server: EmulatorHandle, http: httpx.Client) -> None:
    prompt = "a long prompt " * 1428  # 19,992 characters
    task_id = http.post("/v1/videos/generate", json={"model": "video-a", "prompt": prompt}).json()[
        "task_id"
    ]
    task = server.app.emulator.book.get(task_id)
    assert task is not None
    kept = sum(len(line) for line in task.lines)
    assert kept < 2200  # what a picture can show, not the whole prompt
    assert not hasattr(task, "request") and not hasattr(task, "body")


# --- the client streams uploads ----------------------------------------------------------


async def test_client_upload_streams_a_file_and_refuses_one_too_large(
    server: EmulatorHandle, tmp_path: Path
) -> None:
    picture = tmp_path / "frame.png"
    picture.write_bytes(samples.image(400, 300))
    huge = tmp_path / "huge.mp4"
    with huge.open("wb") as f:
        f.truncate(1 << 30)  # a sparse gigabyte: nothing of it may be read or sent
    async with genlab.AsyncClient(server.base_url, KEY) as client:
        url = await client.upload(picture)
        assert url.endswith("/frame.png")
        assert httpx.get(url).content == picture.read_bytes()
        with pytest.raises(InvalidParameterError, match="huge.mp4 is 1024.0 MB; the emulator"):
            await client.upload(huge)
    stored = [k for k in server.app.emulator.store._files if k.startswith("uploads/")]
    assert len(stored) == 1  # only the picture reached the emulator


@pytest.mark.parametrize("name", ["..", ".", "...", "../..", "%2e%2e"])
def test_uploads_whose_name_normalises_away_get_a_working_url(
    http: httpx.Client, name: str
) -> None:
    png = samples.image(320, 320)
    answer = http.post("/v1/uploads", files={"file": (name, png)})
    assert answer.status_code == 200, answer.text
    url = answer.json()["url"]
    assert "/.." not in url and not url.endswith("/")
    assert httpx.get(url).content == png


# --- genlab serve ------------------------------------------------------------------------


def serve(tmp_path: Path, *args: str, key: str | None = KEY) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    env["TMPDIR"] = str(tmp_path)
    if key is not None:
        env["GENLAB_API_KEY"] = key
    return subprocess.Popen(
        [sys.executable, "-m", "genlab", "serve", "--port", "0", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


@pytest.mark.parametrize("key", ["", "  "])
def test_genlab_serve_refuses_an_empty_key(tmp_path: Path, key: str) -> None:
    process = serve(tmp_path, key=key)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "API key is empty" in output
    assert not list(tmp_path.glob("genlab-emulator-*"))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_genlab_serve_removes_its_media_folder_on_exit(
    tmp_path: Path, how: signal.Signals
) -> None:
    process = serve(tmp_path)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "serving at" in line, line
        base = line.split("serving at", 1)[1].strip()
        png = samples.image(320, 320)
        answer = httpx.post(f"{base}/v1/uploads", files={"file": ("a.png", png)}, headers=AUTH)
        assert answer.status_code == 200
        folders = list(tmp_path.glob("genlab-emulator-*"))
        assert len(folders) == 1 and files_under(folders[0])
        process.send_signal(how)
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
    assert process.returncode == 0
    assert not folders[0].exists()
