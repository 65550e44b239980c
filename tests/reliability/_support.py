"""Helpers of the reliability suite: media, servers on free loopback ports, guards.

Every server started here listens on 127.0.0.1 only and is stopped by its context manager;
every subprocess is killed in a ``finally``. Every wait is bounded in count and in time.
"""

from __future__ import annotations

import http.server
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from genlab.client import data_uri
from genlab.emulator._render import render_audio, render_image, render_test_video

# Distinctive, so a search for it in files and messages cannot match by accident.
KEY = "sk-genlab-reliability-Q7mZ2xW9pLk4"
LOOPBACK = "127.0.0.1"
MB = 1024 * 1024
ROOT = Path(__file__).resolve().parents[2]
ROOT_NOTEBOOKS = ROOT / "notebooks"


# --- media -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MediaSet:
    """Real media files. The first three meet every model's media rules (see
    ``genlab/catalog/_video.py``: e.g. video-b needs 640x640 to 834x1112 pixels and 24 to 60
    fps, video-e sides of at least 720 px, video-d at most 10 s in image orientation)."""

    png: bytes  # 720x720 PNG
    mp4: bytes  # 720x720, 3.5 s, 24 fps H.264 MP4, no audio
    wav: bytes  # 3 s WAV
    small_png: bytes  # 100x100: too small for video-b (sides >= 300)
    long_mp4: bytes  # 720x720, 20 s: too long for video-b (<= 15 s)
    slow_mp4: bytes  # 720x720, 3.5 s at 20 fps: too slow for video-b (24 to 60 fps)

    @property
    def png_data_uri(self) -> str:
        return data_uri(self.png, "ref.png")


def make_media() -> MediaSet:
    return MediaSet(
        png=render_image(720, 720, lines=["reference"], seed=1),
        mp4=render_test_video(720, 720, 3.5, fps=24),
        wav=render_audio(3.0),
        small_png=render_image(100, 100, lines=["small"], seed=2),
        long_mp4=render_test_video(720, 720, 20.0, fps=24),
        slow_mp4=render_test_video(720, 720, 3.5, fps=20),
    )


async def upload(http: httpx.AsyncClient, data: bytes, filename: str) -> str:
    """Upload a file to an emulator (``http`` carries the key); the URL it is served at."""
    answer = await http.post("/v1/uploads", files={"file": (filename, data)})
    assert answer.status_code == 200, answer.text
    url = answer.json()["url"]
    assert isinstance(url, str)
    return url


# --- guards ------------------------------------------------------------------------------


class LoopbackOnly(httpx.AsyncBaseTransport):
    """A transport that refuses every host but loopback (fuzzed URLs must not leave the box)."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in (LOOPBACK, "localhost"):
            raise httpx.ConnectError(
                f"the test suite only lets the emulator fetch from loopback, not "
                f"{request.url.host!r}",
                request=request,
            )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def guard_fetches(app: Any) -> None:
    """Make an in-process emulator fetch references through :class:`LoopbackOnly`.

    The emulator creates its fetching client lazily; giving it one first (same settings, a
    guarded transport) is the one test-only intrusion into its state.
    """
    state = app.emulator
    state._http = httpx.AsyncClient(
        timeout=httpx.Timeout(state.config.fetch.timeout),
        follow_redirects=True,
        transport=LoopbackOnly(),
    )


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MB."""
    return float(psutil.Process(pid).memory_info().rss) / MB


# --- genlab serve in a subprocess --------------------------------------------------------


@dataclass
class Served:
    """A ``genlab serve`` process: its URL, its process and everything it printed."""

    base_url: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid


@contextmanager
def serve(*options: str, api_key: str = KEY, startup: float = 60.0) -> Iterator[Served]:
    """Run ``python -m genlab serve`` on a free loopback port; stop it when done.

    Args:
        options: more ``genlab serve`` flags, e.g. ``"--fail-rate", "0.1"``.
        api_key: the key it expects.
        startup: at most this many seconds to wait for it to answer.
    """
    command = [
        sys.executable,
        "-m",
        "genlab",
        "serve",
        "--host",
        LOOPBACK,
        "--port",
        "0",
        "--api-key",
        api_key,
        *options,
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**_env(), "PYTHONUNBUFFERED": "1"},
    )
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, name="genlab-serve-reader", daemon=True)
    reader.start()
    try:
        base_url = _wait_for_url(lines, output, deadline=time.monotonic() + startup)
        _wait_until_answering(base_url, deadline=time.monotonic() + startup)
        yield Served(base_url, process, output)
    finally:
        stop_process(process)
        reader.join(10)
        if process.stdout is not None:
            process.stdout.close()


def stop_process(process: subprocess.Popen[Any]) -> None:
    """Terminate a process we started (kill it if it does not stop) and reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    for name in ("GENLAB_BASE_URL", "GENLAB_API_KEY", "GENLAB_HISTORY"):
        env.pop(name, None)
    return env


def next_line(
    lines: queue.Queue[str | None], wanted: Callable[[str], bool], *, deadline: float
) -> str | None:
    """The first line from a reader thread's queue that ``wanted`` accepts, or None when the
    stream ends or the deadline passes first. Bounded in count and time."""
    for _ in range(1000):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            return None
        if line is None:
            return None
        if wanted(line):
            return line
    return None


def _wait_for_url(lines: queue.Queue[str | None], output: list[str], *, deadline: float) -> str:
    line = next_line(lines, lambda text: "serving at" in text, deadline=deadline)
    if line is None:
        raise RuntimeError("genlab serve did not start:\n" + "".join(output[-30:]))
    return line.split("serving at", 1)[1].strip()


def _wait_until_answering(base_url: str, *, deadline: float) -> None:
    for _ in range(600):
        try:
            if httpx.get(f"{base_url}/openapi.json", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    raise RuntimeError(f"genlab serve at {base_url} did not answer")


# --- a tiny file server for reference media ----------------------------------------------


@dataclass
class Route:
    """What the file server answers for one path."""

    body: bytes = b""
    content_type: str = "application/octet-stream"
    status: int = 200
    stall: float = 0.0  # seconds to wait before answering (interrupted when the server stops)


@contextmanager
def file_server(routes: dict[str, Route]) -> Iterator[str]:
    """Serve ``routes`` on a free loopback port from a thread; yields the base URL."""
    stopping = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                self.send_error(404)
                return
            if route.stall:
                stopping.wait(route.stall)  # a server that never answers in time
                if stopping.is_set():
                    return
            self.send_response(route.status)
            self.send_header("Content-Type", route.content_type)
            self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            try:
                self.wfile.write(route.body)
            except OSError:
                pass  # the emulator gave up on us; that is what is being tested

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    server = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="file-server", daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}"
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
