"""``client.get()`` of a finished task while another process holds the history's SQLite file.

Another process takes ``BEGIN EXCLUSIVE`` on the history for ``HOLD`` seconds; meanwhile a
submit waits for the file (its "sending" row cannot be written), and the median time of
``client.get()`` of a task that finished earlier is measured, for a client that submitted
that task itself and for one that never saw it (a new kernel on the same history). Goal:
under 1 s each (the lock lasts ``HOLD`` s): the client never waits on the history on its
event loop, and SQLite reads run beside a waiting write (WAL).

Run it::

    .venv/bin/python -m benchmarks.bench_history_lock
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._util import print_table, row

HOLD = 3.0  # seconds the other process holds the file
ROUNDS = 3
GOAL = 1.0
KEY = "bench-lock-key"
SCALE = 0.02
REQUEST = {"model": "image-d", "prompt": "a kite over the dunes", "resolution": "512"}

HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


def hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding ``path`` exclusively for ``seconds``; returns once it holds."""
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    if child.stdout.readline().strip() != "held":
        child.kill()
        raise RuntimeError("the holding process could not take the lock")
    return child


async def _get_during_lock(client: Any, other: Any, path: Path, task_id: str) -> float:
    child = hold(path, HOLD)
    try:
        waiting = asyncio.create_task(other.submit(REQUEST))  # waits for the file
        await asyncio.sleep(0.3)  # its write is now queued behind the lock
        began = time.perf_counter()
        await client.get(task_id)
        took = time.perf_counter() - began
        await waiting
        return took
    finally:
        child.wait(HOLD + 30)
        if child.stdout is not None:
            child.stdout.close()


async def _measure(folder: Path, base_url: str) -> dict[str, list[float]]:
    import genlab

    path = folder / "history.sqlite"
    history = genlab.History(path)
    fast = {"poll_scale": SCALE, "wait_timeout": 60.0}
    times: dict[str, list[float]] = {"free": [], "own": [], "fresh": []}
    try:
        async with genlab.AsyncClient(base_url, KEY, history=history, **fast) as client:
            done = [await client.generate(REQUEST, reuse=False) for _ in range(ROUNDS)]
            for result in done:  # no lock: the usual time
                began = time.perf_counter()
                await client.get(result.task_id)
                times["free"].append(time.perf_counter() - began)
            for result in done:  # the task's own client
                times["own"].append(await _get_during_lock(client, client, path,
                                                           result.task_id))
            for result in done:  # a client that never saw the task
                async with genlab.AsyncClient(base_url, KEY, history=history,
                                              **fast) as fresh:
                    times["fresh"].append(await _get_during_lock(fresh, client, path,
                                                                 result.task_id))
    finally:
        history.close()
    return times


def run() -> list[dict[str, Any]]:
    from genlab.emulator import start

    with tempfile.TemporaryDirectory() as folder, \
            start(api_key=KEY, time_scale=SCALE, port=0) as emulator:
        times = asyncio.run(_measure(Path(folder), emulator.base_url))
    return [
        row("client.get(), history free", statistics.median(times["free"]), "s", GOAL),
        row(f"client.get() of its own task, file held {HOLD:g} s",
            statistics.median(times["own"]), "s", GOAL),
        row(f"client.get() from a new client, file held {HOLD:g} s",
            statistics.median(times["fresh"]), "s", GOAL),
    ]


def main() -> None:
    print_table("The history held by another process: client.get() (median of 3)", run())


if __name__ == "__main__":
    main()
