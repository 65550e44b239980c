"""Reuse lookup: the newest succeeded task of a content address in a 100,000-task history
(goal < 1 ms median), as ``client.generate(..., reuse=True)`` asks it before paying."""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._util import print_table, row
from genlab.history import History

TASKS = 100_000
LOOKUPS = 2_000


def _address(i: int) -> str:
    return hashlib.sha256(f"request {i}".encode()).hexdigest()


def records(start: int, count: int) -> list[dict[str, Any]]:
    out = []
    for i in range(start, start + count):
        created = 1.8e9 + i
        # Every tenth address was asked for again, so some addresses have several tasks.
        address = _address(i - i % 10 if i % 3 == 0 else i)
        result = {"url": f"https://media.example/{i}.mp4", "width": 1280, "height": 720,
                  "duration": 5.0}
        out.append({
            "entry_id": uuid.uuid4().hex, "task_id": f"task_{uuid.uuid4().hex}",
            "model": "video-a", "kind": "video", "mode": "text-to-video", "state": "accepted",
            "status": "succeeded" if i % 10 else "failed", "prompt": f"prompt {i}",
            "credits": 800, "request": json.dumps({"model": "video-a", "prompt": f"p{i}"}),
            "submitted_at": created - 0.2, "created_at": created, "completed_at": created + 30,
            "results": json.dumps([result]), "address": address,
        })
    return out


def run() -> list[dict[str, Any]]:
    rng = random.Random(15)
    with tempfile.TemporaryDirectory() as folder:
        history = History(Path(folder) / "bench.sqlite")
        for start in range(0, TASKS, 10_000):
            history.append_many(records(start, 10_000))
        asked = [_address(rng.randrange(TASKS)) for _ in range(LOOKUPS)]
        hits = 0
        times = []
        for address in asked:
            began = time.perf_counter()
            found = history.find_results(address, limit=1)
            times.append(time.perf_counter() - began)
            hits += bool(found)
        missing = []
        for i in range(LOOKUPS):
            began = time.perf_counter()
            history.find_results(_address(TASKS + i), limit=1)
            missing.append(time.perf_counter() - began)
        history.close()
    assert hits > LOOKUPS // 2  # most asked addresses have a succeeded task
    return [
        row("reuse lookup, found (100,000 tasks)", statistics.median(times) * 1000, "ms", 1.0),
        row("reuse lookup, not found (100,000 tasks)", statistics.median(missing) * 1000, "ms",
            1.0),
    ]


def main() -> None:
    print_table("Reuse lookup", run())


if __name__ == "__main__":
    main()
