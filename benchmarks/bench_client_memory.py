"""Client memory: 2,000 image tasks, each sent with a 1 MB ``data:`` URI reference through
one client; what the client still holds once they have finished (goal: under 50 MB more).

What is measured is the client, not the service: the emulator runs as ``python -m genlab
serve`` in a process of its own (its memory is not counted), and this process holds one
``genlab.AsyncClient`` with its default in-memory history, used through the public API only
(``client.map``, a chunk of requests at a time).

Every task asks image-d at its 512 tier (the fastest) for image-to-image with one reference: a
PNG of random pixels of about 1 MB, as a ``data:`` URI. Each task's URI is a distinct string
of distinct bytes (the same PNG with its task number in a ``tEXt`` chunk), and its prompt
varies, so no two requests are the same and nothing is shared with what the benchmark keeps.
Requests are made lazily, one chunk at a time; of each outcome the benchmark keeps what a
person keeps, the task id, and drops the rest before measuring.

* **retained heap**: ``tracemalloc``'s current traced size after ``gc.collect()``, after the
  tasks minus before them (both after a warm-up batch, so imports and first-use caches are
  not counted). This is the goal's figure.
* **RSS**: the process's resident size, after minus before, each read once glibc's
  ``malloc_trim`` has handed free memory back; it also counts C allocations and tracemalloc's
  own bookkeeping, so it is shown without a goal.

Run it::

    python -m benchmarks.bench_client_memory            # 3 to 4 minutes on two shared cores
    python -m benchmarks.bench_client_memory --top 10   # and where the retained heap was made

The emulator needs no special settings: a body of 1.4 MB is far below its 64 MB cap and its
512 MB per-request reference budget; ``--max-processing`` is raised so no task waits for a
slot, and ``--time-scale`` makes an image take tens of milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import gc
import io
import os
import random
import re
import struct
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import psutil  # noqa: E402
from PIL import Image  # noqa: E402

import genlab  # noqa: E402
from benchmarks._util import print_table, row  # noqa: E402
from genlab.client import data_uri  # noqa: E402

KEY = "bench-key"
MB = 1024 * 1024
TASKS = 2_000
GOAL_MB = 50.0
IMAGE_BYTES = 1_000_000  # the reference PNG's size, about (a little over) this
MODEL: dict[str, Any] = {"model": "image-d", "resolution": "512"}


@contextmanager
def serve(time_scale: float, max_processing: int) -> Iterator[str]:
    """``genlab serve`` on a free loopback port in its own process; its base URL."""
    command = [sys.executable, "-m", "genlab", "serve", "--host", "127.0.0.1", "--port", "0",
               "--api-key", KEY, "--time-scale", str(time_scale),
               "--max-processing", str(max_processing)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        match = re.search(r"(http://[\d.]+:\d+)", process.stdout.readline())
        assert match, "the emulator did not print its URL"
        base_url = match.group(1)
        for _ in range(400):
            try:
                httpx.get(f"{base_url}/openapi.json", timeout=1)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def reference_png(size: int = IMAGE_BYTES, seed: int = 7) -> bytes:
    """A valid PNG of random pixels whose encoded size is just over ``size`` bytes."""
    side = int((size / 3) ** 0.5) + 2  # random RGB barely compresses: ~3 bytes a pixel
    pixels = random.Random(seed).randbytes(side * side * 3)
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), pixels).save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def with_text(png: bytes, text: str) -> bytes:
    """``png`` with a ``tEXt`` chunk before its ``IEND``: other bytes, the same picture."""
    data = b"Comment\0" + text.encode("latin-1")
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + data))
    return png[:-12] + chunk + png[-12:]  # the last 12 bytes are the IEND chunk


def requests(png: bytes, start: int, count: int) -> Iterator[dict[str, Any]]:
    """Task ``start`` .. ``start + count - 1``, each made when asked for."""
    for i in range(start, start + count):
        yield {**MODEL, "prompt": f"a lighthouse at dusk, study number {i}",
               "reference_images": [data_uri(with_text(png, f"task {i}"), "ref.png")]}


def _trim() -> None:
    """Hand the C allocator's free memory back to the system (glibc), so RSS shows what is
    in use rather than what was once used; elsewhere RSS is read as it is."""
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


async def settled() -> tuple[float, float]:
    """Traced heap and RSS in MB, once the loop has moved on and garbage is collected.

    The loop step that resumed after ``client.map`` still holds the handle that woke it, and
    through it the finished gather and every outcome of the last batch; a few turns of the
    loop let them go, so they are not counted against the client.
    """
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    _trim()
    return tracemalloc.get_traced_memory()[0] / MB, psutil.Process().memory_info().rss / MB


async def send_all(client: genlab.AsyncClient, png: bytes, start: int, count: int, *,
                   chunk: int, concurrency: int) -> tuple[list[str], list[str]]:
    """Run ``count`` tasks a chunk at a time; the ids a person keeps, and any failures."""
    kept: list[str] = []
    failures: list[str] = []
    for first in range(start, start + count, chunk):
        size = min(chunk, start + count - first)
        outcomes = await client.map(requests(png, first, size), concurrency=concurrency)
        for outcome in outcomes:
            if outcome.ok and outcome.task_id is not None:
                kept.append(outcome.task_id)
            else:
                failures.append(repr(outcome.error))
        del outcomes
    return kept, failures


async def measure(base_url: str, *, tasks: int, time_scale: float, chunk: int,
                  concurrency: int, top: int) -> dict[str, Any]:
    png = reference_png()
    async with genlab.AsyncClient(base_url, KEY, poll_scale=time_scale,
                                  wait_timeout=300) as client:
        warm, failed = await send_all(client, png, 0, 2 * concurrency, chunk=chunk,
                                      concurrency=concurrency)
        if failed:
            raise RuntimeError(f"warm-up tasks failed: {failed[:3]}")
        # Taken before the figure, so the snapshot itself is part of both figures.
        before_snapshot = None
        if top:
            await settled()
            before_snapshot = tracemalloc.take_snapshot()
        heap_before, rss_before = await settled()
        began = time.perf_counter()
        kept, failed = await send_all(client, png, len(warm), tasks, chunk=chunk,
                                      concurrency=concurrency)
        wall = time.perf_counter() - began
        heap_after, rss_after = await settled()
        lines: list[str] = []
        if before_snapshot is not None:
            after = tracemalloc.take_snapshot()
            for stat in after.compare_to(before_snapshot, "lineno")[:top]:
                lines.append(f"{stat.size_diff / MB:9.1f} MB  {stat.count_diff:+7d} blocks  "
                             f"{stat.traceback[0]}")
    return {"heap_mb": heap_after - heap_before, "rss_mb": rss_after - rss_before,
            "wall_s": wall, "succeeded": len(kept), "failed": failed, "top": lines}


def run(tasks: int = TASKS, *, time_scale: float = 0.01, chunk: int = 100,
        concurrency: int = 16, top: int = 0) -> list[dict[str, Any]]:
    """Warm up, then run ``tasks`` tasks; the growth rows, the wall time, the tasks done."""
    with serve(time_scale, max_processing=4 * concurrency) as base_url:
        tracemalloc.start()
        try:
            got = asyncio.run(measure(base_url, tasks=tasks, time_scale=time_scale, chunk=chunk,
                                      concurrency=concurrency, top=top))
        finally:
            tracemalloc.stop()
    for line in got["top"]:
        print(line)
    if got["failed"]:
        print(f"{len(got['failed'])} task(s) did not succeed, e.g. {got['failed'][0]}")
    n = f"{tasks:,}"
    return [
        row(f"client memory growth after {n} tasks with a 1 MB data: URI",
            got["heap_mb"], "MB", GOAL_MB),
        row("  the same, as RSS (after malloc_trim; no goal)", got["rss_mb"], "MB", None),
        row(f"  wall time of the {n} tasks (concurrency {concurrency})", got["wall_s"], "s",
            None),
        row("  tasks succeeded", float(got["succeeded"]), "", float(tasks),
            lower_is_better=False),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tasks", type=int, default=TASKS)
    parser.add_argument("--time-scale", type=float, default=0.01)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--top", type=int, default=0,
                        help="print the source lines that made the most retained memory")
    args = parser.parse_args()
    png = reference_png()
    print(f"reference: a {len(png):,}-byte PNG, sent as a data: URI of "
          f"{len(data_uri(png, 'ref.png')):,} characters")
    print_table("Client memory", run(args.tasks, time_scale=args.time_scale,
                                     concurrency=args.concurrency, top=args.top))


if __name__ == "__main__":
    main()
