"""Polling benchmark: genlab's poller against fixed 1 s and 0.5 s pollers.

Every task is submitted once and watched by all pollers at the same time, so each poller sees
exactly the same 300 tasks (same models, durations, resolutions, same completion instants).
For each poller it measures requests per task and the lag between a task's ``completed_at``
and the moment the poller noticed. The emulator runs in-thread with ``time_scale`` (0.05 =
20x faster); the fixed intervals and genlab's ``poll_scale`` are scaled by the same factor, and
lags are also reported in unscaled seconds so they read as real-service seconds.

Learned polling: a warm-up batch runs first so the journal knows how long each kind of task
takes; only then are the 300 tasks measured.

Run it::

    .venv/bin/python benchmarks/bench_polling.py            # 300 tasks, ~1-2 minutes
    .venv/bin/python benchmarks/bench_polling.py --tasks 60  # a quick look

Goal: genlab (learned) makes fewer requests than the 1 s poller and has a lower p95 lag than
the 0.5 s poller.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx

from genlab import AsyncClient, TaskRecord
from genlab.client import MemoryJournal, Task
from genlab.emulator import start

API_KEY = "bench-key"

# Spread-out durations: at time scale 1 these take ~4 s (image-d 512) to ~45 s (video-c 1080P).
TEMPLATES: list[dict[str, Any]] = [
    {"model": "image-d", "resolution": "512"},
    {"model": "image-b"},
    {"model": "image-c", "resolution": "2K"},
    {"model": "image-a", "resolution": "1K", "aspect_ratio": "1:1", "quality": "low"},
    {"model": "video-a", "duration": 2, "resolution": "480P"},
    {"model": "video-b", "duration": 4, "resolution": "480P"},
    {"model": "video-f", "duration": 3},
    {"model": "video-a", "duration": 5},
    {"model": "video-c", "duration": 3, "resolution": "720P"},
    {"model": "video-c", "duration": 4, "resolution": "1080P"},
]


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts task queries per task id on top of a real HTTP transport."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport(
            limits=httpx.Limits(max_connections=10, max_keepalive_connections=10)
        )
        self.gets: Counter[str] = Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and "/tasks/" in request.url.path:
            self.gets[request.url.path.rsplit("/", 1)[-1]] += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Poller:
    """One way of watching tasks: a client with its own counting transport, and its lags."""

    def __init__(self, name: str, client: AsyncClient, transport: CountingTransport) -> None:
        self.name, self.client, self.transport = name, client, transport
        self.lags: list[float] = []

    def noticed(self, record: TaskRecord) -> None:
        assert record.completed_at is not None
        self.lags.append(time.time() - record.completed_at.timestamp())


async def fixed_poll(poller: Poller, task: Task, interval: float) -> None:
    """The naive poller: query, and if not done sleep a fixed interval."""
    while True:
        record = await poller.client.get(task)
        if record.done:
            poller.noticed(record)
            return
        await asyncio.sleep(interval)


async def genlab_poll(poller: Poller, task: Task) -> None:
    def on_update(record: TaskRecord) -> None:
        if record.done:
            poller.noticed(record)

    await poller.client.wait(task, on_update=on_update, raise_on_failure=False)


def make_requests(n: int, rng: random.Random) -> list[dict[str, Any]]:
    return [
        {**TEMPLATES[i % len(TEMPLATES)], "prompt": f"benchmark scene {i} {rng.random():.6f}"}
        for i in range(n)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


async def run_async(
    base_url: str, n_tasks: int, time_scale: float, concurrency: int, warmup_rounds: int, seed: int
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    journal = MemoryJournal()

    def client(transport: CountingTransport, history: MemoryJournal | None = None) -> AsyncClient:
        return AsyncClient(
            base_url, API_KEY, transport=transport, poll_scale=time_scale, history=history,
            wait_timeout=600,
        )

    names = ["fixed 1 s", "fixed 0.5 s", "genlab (no history)", "genlab (learned)"]
    transports = [CountingTransport() for _ in names]
    pollers = [
        Poller(names[0], client(transports[0]), transports[0]),
        Poller(names[1], client(transports[1]), transports[1]),
        Poller(names[2], client(transports[2]), transports[2]),
        Poller(names[3], client(transports[3], journal), transports[3]),
    ]
    submitter = pollers[3].client  # its Tasks carry the learned key and the submit time
    try:
        # Warm-up: the learned journal sees every kind of task a few times.
        warmup = make_requests(len(TEMPLATES) * warmup_rounds, rng)
        await submitter.map(warmup, concurrency=max(concurrency, 8))
        for t in transports:
            t.gets.clear()

        gate = asyncio.Semaphore(concurrency)
        watchers: list[Callable[[Task], Any]] = [
            lambda task: fixed_poll(pollers[0], task, 1.0 * time_scale),
            lambda task: fixed_poll(pollers[1], task, 0.5 * time_scale),
            lambda task: genlab_poll(pollers[2], task),
            lambda task: genlab_poll(pollers[3], task),
        ]

        async def one(request: dict[str, Any]) -> None:
            async with gate:
                task = await submitter.submit(request)
                await asyncio.gather(*(watch(task) for watch in watchers))

        started = time.perf_counter()
        await asyncio.gather(*(one(r) for r in make_requests(n_tasks, rng)))
        wall = time.perf_counter() - started
    finally:
        for p in pollers:
            await p.client.aclose()

    rows = []
    for p in pollers:
        requests = sum(p.transport.gets.values())
        rows.append(
            {
                "poller": p.name,
                "tasks": len(p.lags),
                "requests_per_task": requests / max(1, len(p.lags)),
                "lag_p50_ms": 1000 * statistics.median(p.lags),
                "lag_p95_ms": 1000 * percentile(p.lags, 95),
                "lag_p50_unscaled_s": statistics.median(p.lags) / time_scale,
                "lag_p95_unscaled_s": percentile(p.lags, 95) / time_scale,
                "time_scale": time_scale,
                "wall_s": wall,
            }
        )
    return rows


def run(
    n_tasks: int = 300,
    *,
    time_scale: float = 0.05,
    concurrency: int = 4,
    warmup_rounds: int = 5,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Run the benchmark against an in-thread emulator; one row per poller."""
    # Enough processing slots that nothing queues: the benchmark is about polling, not load.
    with start(api_key=API_KEY, time_scale=time_scale, max_processing=1000) as emulator:
        return asyncio.run(
            run_async(emulator.base_url, n_tasks, time_scale, concurrency, warmup_rounds, seed)
        )


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'poller':<22}{'tasks':>6}{'req/task':>10}{'lag p50':>10}{'lag p95':>10}"
        f"{'p50 (1x)':>10}{'p95 (1x)':>10}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['poller']:<22}{r['tasks']:>6}{r['requests_per_task']:>10.1f}"
            f"{r['lag_p50_ms']:>8.1f}ms{r['lag_p95_ms']:>8.1f}ms"
            f"{r['lag_p50_unscaled_s']:>9.2f}s{r['lag_p95_unscaled_s']:>9.2f}s"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--time-scale", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = run(args.tasks, time_scale=args.time_scale, concurrency=args.concurrency,
               seed=args.seed)
    print(table(rows))
    by = {r["poller"]: r for r in rows}
    learned = by["genlab (learned)"]
    fewer = learned["requests_per_task"] < by["fixed 1 s"]["requests_per_task"]
    faster = learned["lag_p95_ms"] < by["fixed 0.5 s"]["lag_p95_ms"]
    print(f"\nwall time {rows[0]['wall_s']:.1f} s at time_scale {args.time_scale}")
    print(f"fewer requests than the 1 s poller: {fewer}")
    print(f"lower p95 lag than the 0.5 s poller: {faster}")


if __name__ == "__main__":
    main()
