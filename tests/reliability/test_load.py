"""Load: ``genlab serve`` in its own process with many tasks in flight and many concurrent
pollers; then many result files fetched through a small media store.

What a user relies on: no request fails, the server's memory stays bounded, the media store
never holds more than its cap (older results are evicted and rendered again on demand).
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
from genlab import GenlabError, TaskRecord
from genlab.emulator import start

from ._support import KEY, MB, rss_mb, serve
from .conftest import Scale
from .figures import Figures

# Generous: the server keeps every task record and renders media on demand; a leak per poll
# or per fetch would pass this by far at 3,000 polls and 600 fetches.
SERVER_RSS_GROWTH_LIMIT_MB = 250.0
DEADLINE = 600.0  # seconds for the whole test; a bound, not a speed goal


def load_requests(n: int) -> list[dict[str, Any]]:
    """Cheap images and short videos; the last few are long videos, submitted last, so they
    are still queued or processing while the pollers run (their results are never fetched)."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i >= n - 8:
            out.append({"model": "video-a", "prompt": f"load long clip {i}",
                        "resolution": "1080P", "duration": 30})
        elif i % 10 == 9:
            out.append({"model": "video-a", "prompt": f"load clip {i}", "resolution": "480P",
                        "duration": 2})
        else:
            out.append({"model": "image-d", "prompt": f"load image {i}", "resolution": "1K"})
    return out


def disk_bytes(folder: Path) -> int:
    """Bytes of the stored files in the media folder: in-progress ``.part`` files and the
    scratch folder excluded (uploads being received, and the links an answer in flight is
    sent from, which the store removes when the answer ends), each file counted once."""
    files = {(s.st_dev, s.st_ino): s.st_size for p in folder.rglob("*")
             if p.is_file() and not p.name.endswith(".part")
             and ".scratch" not in p.relative_to(folder).parts
             for s in [p.stat()]}
    return sum(files.values())


async def gather_bounded(jobs: list[Any], concurrency: int) -> list[Any]:
    gate = asyncio.Semaphore(concurrency)

    async def one(job: Any) -> Any:
        async with gate:
            return await job

    return list(await asyncio.gather(*(one(j) for j in jobs)))


@pytest.mark.slow
async def test_many_pollers_many_tasks_bounded_server(
    scale: Scale, figures: Figures, tmp_path: Path
) -> None:
    section = figures.section("load", "Load: genlab serve, tasks in flight, concurrent pollers")
    media_dir = tmp_path / "media"
    cap = scale.media_cap_mb * MB
    deadline = time.monotonic() + DEADLINE
    rng = random.Random(7)
    errors: list[str] = []
    with serve("--time-scale", "0.05", "--max-processing", "16", "--media-max-mb",
               str(scale.media_cap_mb), "--media-dir", str(media_dir)) as server:
        section.note(f"genlab serve --time-scale 0.05 --max-processing 16 --media-max-mb "
                     f"{scale.media_cap_mb}; pollers share one genlab.AsyncClient with "
                     "max_retries=0, so every failure counts")
        async with genlab.AsyncClient(
            server.base_url, KEY, max_retries=0, max_connections=scale.load_pollers,
            poll_scale=0.02, timeout=60, wait_timeout=DEADLINE,
        ) as client, httpx.AsyncClient(timeout=60) as public:
            # Warm up (imports, first renders), then measure the server.
            warm = await client.generate(model="image-d", prompt="warm-up", resolution="1K")
            await public.get(warm.results[0].url)
            rss_before = rss_mb(server.pid)

            tasks = await gather_bounded(
                [client.submit(body) for body in load_requests(scale.load_tasks)], 32
            )
            statuses = {"queued": 0, "processing": 0, "succeeded": 0, "failed": 0}
            polls = 0

            async def poller() -> None:
                nonlocal polls
                for _ in range(scale.load_polls):
                    if time.monotonic() > deadline:
                        return
                    task = rng.choice(tasks)
                    try:
                        record = await client.get(task, kind=task.kind)
                    except GenlabError as exc:
                        errors.append(f"poll: {exc}")
                        continue
                    polls += 1
                    statuses[record.status] = statuses.get(record.status, 0) + 1

            started = time.monotonic()
            await asyncio.gather(*(poller() for _ in range(scale.load_pollers)))
            poll_seconds = time.monotonic() - started

            # Fetch many results: each is rendered on first request, the store evicts the rest.
            fetched_bytes = 0

            async def fetch(task: Any) -> tuple[str, bytes] | None:
                nonlocal fetched_bytes
                try:
                    record: TaskRecord = await client.wait(task, timeout=DEADLINE)
                except GenlabError as exc:
                    errors.append(f"wait: {exc}")
                    return None
                first = None
                for item in record.results:
                    for url in (item.url, getattr(item, "cover_url", None)):
                        if url is None:
                            continue
                        answer = await public.get(url)
                        if answer.status_code != 200:
                            errors.append(f"fetch {url}: {answer.status_code}")
                            continue
                        fetched_bytes += len(answer.content)
                        first = first or (url, answer.content)
                return first

            chosen = tasks[: scale.load_fetches]
            firsts = await gather_bounded([fetch(t) for t in chosen], 8)
            stored = disk_bytes(media_dir)
            # The oldest results were evicted long ago; they are rendered again, the same.
            again = [f for f in firsts[:5] if f is not None]
            same = 0
            for url, content in again:
                answer = await public.get(url)
                same += answer.status_code == 200 and answer.content == content
            rss_after = rss_mb(server.pid)
            final_disk = disk_bytes(media_dir)

    section.add("tasks in flight", scale.load_tasks)
    section.add("concurrent pollers", scale.load_pollers)
    section.add("polls", polls)
    section.add("statuses seen", ", ".join(f"{k} {v}" for k, v in statuses.items()))
    section.add("polls of tasks in flight", statuses["queued"] + statuses["processing"])
    section.goal("errors", len(errors), "0", not errors)
    section.add("polls per second", polls / poll_seconds if poll_seconds else 0.0, "/s")
    growth = rss_after - rss_before
    section.goal("server RSS growth", growth, f"< {SERVER_RSS_GROWTH_LIMIT_MB:g} MB",
                 growth < SERVER_RSS_GROWTH_LIMIT_MB, "MB")
    section.add("result files fetched (bytes)", fetched_bytes, "B")
    section.goal("media store on disk vs cap", f"{max(stored, final_disk)} of {cap}",
                 f"<= {cap} B and fetched > cap", max(stored, final_disk) <= cap < fetched_bytes)
    section.goal("evicted results fetched again, identical", same, f"{len(again)}",
                 same == len(again) > 0)
    for error in errors[:3]:
        section.note(error)
    section.assert_goals()
    assert polls == scale.load_pollers * scale.load_polls


@pytest.mark.slow
async def test_results_fetched_while_the_store_evicts_them(
    scale: Scale, figures: Figures
) -> None:
    # A store that holds about three results, many fetched at once: each fetch renders and
    # evicts another's file. Before the fix, a file evicted between being found and being
    # sent gave a 500 or a body cut short.
    section = figures.section("load", "Load: genlab serve, tasks in flight, concurrent pollers")
    n = max(20, scale.load_fetches // 6)
    failures: list[str] = []
    answers = 0
    with start(api_key=KEY, time_scale=0.01, max_processing=64,
               media_max_bytes=100_000) as server:
        async with genlab.AsyncClient(server.base_url, KEY, poll_scale=0.01) as client, \
                httpx.AsyncClient(timeout=60) as public:
            records = await gather_bounded(
                [client.generate(model="image-d", prompt=f"evict {i}", resolution="1K")
                 for i in range(n)], 32)
            urls = [r.results[0].url for r in records]

            async def fetch(url: str) -> None:
                nonlocal answers
                try:
                    answer = await public.get(url)
                except httpx.HTTPError as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")
                    return
                answers += 1
                if answer.status_code != 200 or not answer.content.startswith(b"\x89PNG"):
                    failures.append(f"HTTP {answer.status_code}: {answer.text[:100]}")

            for _ in range(3):
                await asyncio.gather(*(fetch(u) for u in urls))
        used, cap = server.app.emulator.store.used_bytes, server.app.emulator.store.max_bytes
    section.add("fetches racing evictions", 3 * n)
    section.goal("fetches racing evictions that failed", len(failures), "0", not failures)
    section.goal("racing store used vs cap", f"{used} of {cap}", "<= cap", used <= cap)
    for failure in failures[:2]:
        section.note(failure)
    section.assert_goals()
    assert answers + len(failures) == 3 * n
