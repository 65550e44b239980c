"""Emulator request throughput: task polls per second with 100 tasks in flight (goal >= 400/s)
and the latency of one sequential poll on a kept-alive connection (goal < 2 ms).

The emulator runs as ``python -m genlab serve`` in its own process, as a user would run it,
so the measuring client does not share its interpreter.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

import genlab
from benchmarks._util import print_table, row

KEY = "bench-key"


@contextmanager
def serve(time_scale: float = 1.0) -> Iterator[str]:
    command = [sys.executable, "-m", "genlab", "serve", "--port", "0", "--api-key", KEY,
               "--time-scale", str(time_scale), "--max-processing", "8"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        match = re.search(r"(http://[\d.]+:\d+)", process.stdout.readline())
        assert match, "the emulator did not print its URL"
        base_url = match.group(1)
        for _ in range(200):
            try:
                httpx.get(f"{base_url}/openapi.json", timeout=1)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=20)
        if process.stdout is not None:
            process.stdout.close()


async def _polls_per_second(base_url: str, tasks: int = 100, polls: int = 4000,
                            workers: int = 16) -> float:
    limits = httpx.Limits(max_connections=10, max_keepalive_connections=10)
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, limits=limits,
                                 timeout=30) as http:
        body = dict(genlab.CATALOG["video-a"].EXAMPLE)
        ids = []
        for _ in range(tasks):
            response = await http.post("/v1/videos/generate", json=body)
            ids.append(response.json()["task_id"])
        counter = iter(range(polls))

        async def worker() -> None:
            for i in counter:
                response = await http.get(f"/v1/videos/tasks/{ids[i % tasks]}")
                assert response.status_code == 200

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(workers)))
        return polls / (time.perf_counter() - start)


def _sequential_poll_ms(base_url: str, polls: int = 500) -> float:
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=10) as http:
        task_id = http.post("/v1/videos/generate",
                            json=dict(genlab.CATALOG["video-a"].EXAMPLE)).json()["task_id"]
        timings = []
        for _ in range(polls):
            start = time.perf_counter()
            http.get(f"/v1/videos/tasks/{task_id}")
            timings.append(time.perf_counter() - start)
    return statistics.median(timings) * 1000


def run() -> list[dict[str, Any]]:
    with serve() as base_url:
        rates = [asyncio.run(_polls_per_second(base_url)) for _ in range(3)]
        latency = [_sequential_poll_ms(base_url) for _ in range(3)]
    return [
        row("task polls/s, 100 tasks in flight (median of 3)", statistics.median(rates),
            "/s", 400, lower_is_better=False),
        row("sequential poll, kept-alive connection", statistics.median(latency), "ms", 2.0),
    ]


def main() -> None:
    print_table("Emulator throughput", run())


if __name__ == "__main__":
    main()
