"""History journal: task records appended per second in batches (goal >= 5,000/s) and
loading ``df()`` of 100,000 records (goal < 1 s)."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._util import median_seconds, print_table, row
from genlab.history import History

MODELS = ("video-a", "video-b", "image-a", "image-d")


def records(count: int, start: float) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        model = MODELS[i % len(MODELS)]
        created = start + i
        out.append({
            "entry_id": uuid.uuid4().hex, "task_id": f"task_{uuid.uuid4().hex}", "model": model,
            "kind": "video" if model.startswith("video") else "image", "mode": "text-to-video",
            "state": "accepted", "status": "succeeded" if i % 10 else "failed", "tag": "bench",
            "prompt": f"prompt number {i} about a fox in the snow", "resolution": "720P",
            "duration": 5.0, "credits": 800 if model == "video-a" else None,
            "request": json.dumps({"model": model, "prompt": f"prompt number {i}"}),
            "submitted_at": created - 0.2, "accepted_at": created, "created_at": created,
            "started_at": created + 1.0, "completed_at": created + 30.0, "result_count": 1,
            "result_url": f"https://media.example/{i}.mp4", "width": 1280, "height": 720,
            "media_seconds": 5.0,
        })
    return out


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        history = History(Path(folder) / "bench.sqlite")
        batch = 1000
        rates = []
        for n in range(7):
            rows = records(batch, 1.8e9 + n * batch)
            start = time.perf_counter()
            history.append_many(rows)
            rates.append(batch / (time.perf_counter() - start))
        rest = 100_000 - 7 * batch
        for n in range(rest // 10_000 + 1):
            history.append_many(records(min(10_000, rest - n * 10_000), 1.9e9 + n * 10_000))
        assert len(history.query("SELECT task_id FROM tasks")) == 100_000
        load = median_seconds(history.df, repeat=5)
        summary = median_seconds(history.summary, repeat=5)
        history.close()
    return [
        row("records appended per second (batches of 1,000)", statistics.median(rates), "/s",
            5000, lower_is_better=False),
        row("history.df() of 100,000 records", load, "s", 1.0),
        row("history.summary() of 100,000 records", summary, "s", None),
    ]


def main() -> None:
    print_table("History journal", run())


if __name__ == "__main__":
    main()
