"""Hostile input against ``genlab serve`` in its own process: memory and stalls measured with
psutil, disk watched, every wait bounded.

Figures (goals from issue 13): any JSON body within the 64 MB cap costs the server at most ~3x
its size and never stalls another client's polls by more than 100 ms; 20 endless references
grow it by at most ~100 MB; 10,000 accepted tasks with 20,000-character prompts grow it by at
most ~100 MB; an upload with a wrong key writes nothing; ``client.upload`` streams from disk.
"""

from __future__ import annotations

import asyncio
import http.server as httpserver
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil

import genlab
from genlab import InvalidParameterError
from genlab.client import data_uri
from genlab.emulator import samples

from ._support import KEY, LOOPBACK, MB, rss_mb, serve
from .conftest import Scale
from .figures import Figures, Section

AUTH = {"Authorization": f"Bearer {KEY}"}
STALL_GOAL_MS = 100.0
TITLE = "Hostile input: memory, stalls and disk of genlab serve"


class PeakRss:
    """Samples a process's RSS every 2 ms on a thread; ``growth`` is the peak over the start."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.start = self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        for _ in range(10_000_000):
            if self._stop.is_set():
                return
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.002)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(10)
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / MB


def shapes(size: int) -> list[tuple[str, bytes]]:
    """JSON bodies of about ``size`` bytes, each a different worst case for a parser."""
    head = b'{"model":"video-a","prompt":"p","reference_images":[{"url":"data:image/png;base64,'
    strings = 90_000  # just under the value cap: the most Python objects a body may cost
    piece = max(1, size // strings - 3)
    return [
        ("tiny objects", b"[" + b"{}," * (size // 3 - 1) + b"{}]"),
        ("one long string", b'{"model":"video-a","prompt":"' + b"x" * (size - 40) + b'"}'),
        ("a data URI", head + b"A" * (size - len(head) - 8) + b'"}]}'),
        ("90,000 short strings", b"[" + b",".join([b'"' + b"s" * piece + b'"'] * strings) + b"]"),
        ("deep nesting", b"[" * 100_000 + b"]" * 100_000),
    ]


async def _poll_while(base_url: str, task_id: str, done: asyncio.Event) -> list[float]:
    """Poll a task every 5 ms until ``done``; each poll's latency in ms."""
    out: list[float] = []
    async with httpx.AsyncClient(base_url=base_url, headers=AUTH, timeout=30) as poller:
        for _ in range(100_000):
            start = time.perf_counter()
            await poller.get(f"/v1/images/tasks/{task_id}")
            out.append((time.perf_counter() - start) * 1000)
            if done.is_set():
                break
            await asyncio.sleep(0.005)
    return out


async def test_json_bodies_cost_little_and_stall_nobody(scale: Scale, figures: Figures) -> None:
    section = figures.section("hostile", TITLE)
    size = (48 if scale.full else 8) * MB
    with serve("--time-scale", "0.01") as server:
        async with httpx.AsyncClient(base_url=server.base_url, headers=AUTH, timeout=120) as c:
            answer = await c.post("/v1/images/generate", json={"model": "image-b", "prompt": "x"})
            task_id = answer.json()["task_id"]
            # Warm up what any first request pays once (threads, codecs) before measuring.
            warm = {"model": "video-a", "prompt": "warm", "reference_images": [
                {"url": data_uri(samples.image(320, 320), "a.png")}]}
            for body in (warm, {"model": "video-a", "prompt": "warm"}):
                assert (await c.post("/v1/videos/generate", json=body)).status_code == 200
            for _, body in shapes(1 * MB):
                await c.post("/v1/videos/generate", content=body)
            worst_ratio, worst_stall = 0.0, 0.0
            for name, body in shapes(size):
                done = asyncio.Event()
                with PeakRss(server.pid) as rss:
                    polls = asyncio.create_task(_poll_while(server.base_url, task_id, done))
                    await asyncio.sleep(0.05)
                    answer = await c.post("/v1/videos/generate", content=body,
                                          headers={"Content-Type": "application/json"})
                    done.set()
                    latencies = await polls
                assert answer.status_code == 400, answer.text  # none is a valid request
                assert answer.json()["error"]["code"] == "INVALID_PARAMETER"
                ratio = rss.growth_mb * MB / len(body)
                stall = max(latencies)
                worst_ratio, worst_stall = max(worst_ratio, ratio), max(worst_stall, stall)
                section.add(f"JSON body: {name} ({len(body) / MB:.1f} MB), server growth",
                            f"{rss.growth_mb:.1f} MB ({ratio:.2f}x)")
                section.add(f"JSON body: {name}, slowest poll meanwhile", stall, "ms")
    section.goal("JSON bodies: worst server growth / body size", worst_ratio, "<= 3x",
                 worst_ratio <= 3.0, "x")
    if scale.full:  # a timing on a shared machine: asserted at full scale only
        section.goal("JSON bodies: slowest concurrent poll", worst_stall,
                     f"<= {STALL_GOAL_MS:g} ms", worst_stall <= STALL_GOAL_MS, "ms")
    else:
        section.add("JSON bodies: slowest concurrent poll", worst_stall, "ms")
    section.note(f"genlab serve in its own process; bodies of {size // MB} MB sent while "
                 "another client polls a task every 5 ms; RSS sampled every 2 ms (psutil)")
    section.assert_goals()


class _Endless(httpserver.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        chunk = b"\0" * (64 << 10)
        try:
            for _ in range(1 << 16):  # 4 GiB at most: far past any cap, yet bounded
                self.wfile.write(chunk)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def endless() -> Iterator[str]:
    httpd = httpserver.ThreadingHTTPServer((LOOPBACK, 0), _Endless)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


async def test_endless_references_and_unauthorised_uploads(
    figures: Figures, tmp_path: Path
) -> None:
    section = figures.section("hostile", TITLE)
    media = tmp_path / "media"
    with serve("--media-dir", str(media)) as server, endless() as source:
        body = {
            "model": "video-a",
            "prompt": "endless",
            "reference_images": [{"url": f"{source}/i{i}.png"} for i in range(10)],
            "reference_videos": [{"url": f"{source}/v{i}.mp4"} for i in range(5)],
            "reference_audios": [{"url": f"{source}/a{i}.wav"} for i in range(5)],
        }
        async with httpx.AsyncClient(base_url=server.base_url, headers=AUTH, timeout=120) as c:
            start = time.perf_counter()
            with PeakRss(server.pid) as rss:
                answer = await c.post("/v1/videos/generate", json=body)
            seconds = time.perf_counter() - start
        assert answer.status_code == 400
        section.goal("20 endless references: server growth", rss.growth_mb, "<= 100 MB",
                     rss.growth_mb <= 100, "MB")
        section.add("20 endless references: answered 400 after", seconds, "s")
        left = folder_bytes(media)
        section.goal("20 endless references: bytes left on disk", left, "0", left == 0, "B")
        _unauthorised_upload(section, server.base_url, media)
    section.assert_goals()


def _unauthorised_upload(section: Section, base_url: str, media: Path) -> None:
    """A wrong key announcing a gigabyte: answered at once, nothing written."""
    host, port = base_url.removeprefix("http://").split(":")
    head = (
        "POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1073741824\r\n\r\n"
    )
    start = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode() + b"\0" * (4 << 20))
        status = sock.recv(64).split(b"\r\n", 1)[0]
    seconds = time.perf_counter() - start
    written = folder_bytes(media)
    section.goal("upload with a wrong key (1 GiB announced): answer", status.decode(),
                 "401", b" 401 " in status)
    section.add("upload with a wrong key: answered after", seconds, "s")
    section.goal("upload with a wrong key: bytes written to disk", written, "0", written == 0, "B")


async def test_many_tasks_with_long_prompts_stay_small(
    scale: Scale, figures: Figures
) -> None:
    section = figures.section("hostile", TITLE)
    count = 10_000 if scale.full else 2_000
    prompt = "a lighthouse on a cliff at dusk, waves below, " * 435  # 20,010 characters
    prompt = prompt[:20_000]
    with serve("--time-scale", "0.001", "--max-processing", "64") as server:
        async with httpx.AsyncClient(base_url=server.base_url, headers=AUTH, timeout=60,
                                     limits=httpx.Limits(max_connections=16)) as c:
            warm = {"model": "video-a", "prompt": prompt, "duration": 2}
            for _ in range(50):  # warm up allocator and caches before the baseline
                assert (await c.post("/v1/videos/generate", json=warm)).status_code == 200
            before = rss_mb(server.pid)
            gate = asyncio.Semaphore(16)

            async def one(i: int) -> int:
                body = {"model": "video-a", "prompt": f"{i} {prompt}"[:20_000], "duration": 2}
                async with gate:
                    return (await c.post("/v1/videos/generate", json=body)).status_code

            statuses = await asyncio.gather(*(one(i) for i in range(count)))
            growth = rss_mb(server.pid) - before
    assert statuses.count(200) == count
    projected = growth * 10_000 / count
    section.add("accepted tasks with 20,000-character prompts", count)
    section.add("server growth for them", growth, "MB")
    section.goal("server growth per 10,000 such tasks", projected, "<= 100 MB",
                 projected <= 100, "MB")
    section.assert_goals()


async def test_client_upload_streams_from_disk(figures: Figures, tmp_path: Path) -> None:
    section = figures.section("hostile", TITLE)
    big = tmp_path / "big.png"
    with big.open("wb") as f:  # a real PNG followed by 60 MB of padding (ignored after IEND)
        f.write(samples.image(400, 300))
        f.truncate(60 * MB)
    huge = tmp_path / "huge.mp4"
    with huge.open("wb") as f:
        f.truncate(1 << 30)
    with serve() as server:
        async with genlab.AsyncClient(server.base_url, KEY) as client:
            await client.upload(samples.image(320, 320))  # warm: connection, TLS-free paths
            with PeakRss(psutil.Process().pid) as rss:
                url = await client.upload(big)
            assert url.endswith("/big.png")
            start = time.perf_counter()
            with PeakRss(psutil.Process().pid) as refused:
                try:
                    await client.upload(huge)
                except InvalidParameterError as exc:
                    message = str(exc)
            seconds = time.perf_counter() - start
    assert "at most 64 MB" in message
    section.goal("client.upload of a 60 MB file: client growth", rss.growth_mb, "<= 32 MB",
                 rss.growth_mb <= 32, "MB")
    section.goal("client.upload of a 1 GiB file: refused before sending, client growth",
                 refused.growth_mb, "<= 8 MB", refused.growth_mb <= 8, "MB")
    section.add("client.upload of a 1 GiB file: refused after", seconds, "s")
    section.assert_goals()
