"""History journal on SQLite and on PostgreSQL: records appended per second in batches (goal
>= 5,000/s), ``df()`` of 100,000 records (goal < 1 s on SQLite, < 2 s on PostgreSQL), and 8
processes writing at once, each submitting, accepting and finishing tasks (goal: no errors).

PostgreSQL is a throwaway cluster on loopback (Debian's package, as the tests use it); its
rows are skipped with a note when the server is not installed.
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import traceback
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._util import median_seconds, print_table, row
from genlab._wire import Task, TaskRecord
from genlab.client.journal import SubmitEntry
from genlab.history import History

MODELS = ("video-a", "video-b", "image-a", "image-d")
WRITERS = 8
CYCLES = 150  # per writer: submit_started, submit_accepted, two status changes


def records(count: int, start: float) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        model = MODELS[i % len(MODELS)]
        created = start + i
        out.append({
            "entry_id": uuid.uuid4().hex, "task_id": f"task_{uuid.uuid4().hex}", "model": model,
            "kind": "video" if model.startswith("video") else "image", "mode": "text-to-video",
            "state": "accepted", "status": "succeeded" if i % 10 else "failed", "tag": "bench",
            "user": f"user{i % 5}", "host": "bench-host", "project": "bench",
            "prompt": f"prompt number {i} about a fox in the snow", "resolution": "720P",
            "duration": 5.0, "credits": 800 if model == "video-a" else None,
            "request": json.dumps({"model": model, "prompt": f"prompt number {i}"}),
            "submitted_at": created - 0.2, "accepted_at": created, "created_at": created,
            "started_at": created + 1.0, "completed_at": created + 30.0, "result_count": 1,
            "result_url": f"https://media.example/{i}.mp4", "width": 1280, "height": 720,
            "media_seconds": 5.0,
            **(_FACTS[i % 3] if i % 10 else {}),  # measured when kept; failed runs have none
        })
    return out


# The facts measured of kept media (migration 0004): as asked, clamped, and clamped twice.
_FACT = {"media_width": 1280, "media_height": 720, "media_duration": 5.04, "media_fps": 24.0,
         "media_frames": 121, "video_codec": "h264", "audio_codec": None, "has_audio": 0,
         "media_bytes": 1_843_112, "as_asked": 1, "mismatches": None,
         "media_facts": json.dumps([{"kind": "video", "width": 1280, "height": 720,
                                     "duration": 5.04, "fps": 24.0, "frames": 121}])}
_FACTS = (
    _FACT,
    {**_FACT, "media_duration": 3.0, "as_asked": 0, "mismatches": "asked 5 s, got 3.0 s"},
    {**_FACT, "media_duration": 3.0, "audio_codec": "aac", "has_audio": 1, "as_asked": 0,
     "mismatches": "asked 5 s, got 3.0 s; asked no audio, got an audio track"},
)


def _writer(location: str, worker: int, out: Any) -> None:
    errors = 0
    try:
        history = History(location)
        for i in range(CYCLES):
            try:
                entry = SubmitEntry(
                    body={"model": "image-b", "prompt": f"{worker}-{i}"}, model="image-b",
                    kind="image", mode="text-to-image", credits=1,
                    submitted_at=datetime.now(UTC), day_cap=10**9,  # the day check runs too
                )
                entry_id = history.submit_started(entry)
                task_id = f"t-{worker}-{i}-{uuid.uuid4().hex[:6]}"
                history.submit_accepted(entry_id, Task(task_id=task_id, model="image-b",
                                                       kind="image"))
                for status in ("processing", "succeeded"):
                    history.status_changed(TaskRecord.read(
                        {"task_id": task_id, "status": status, "model": "image-b"}, "image"))
            except Exception:  # counted: the goal is none
                errors += 1
                if errors == 1:
                    traceback.print_exc(file=sys.stderr)
        history.close()
    except Exception:
        errors += CYCLES
        traceback.print_exc(file=sys.stderr)
    out.put(errors)


def concurrent_writers(location: str) -> tuple[float, int]:
    """(journal cycles per second across all writers, errors) for WRITERS processes."""
    History(location).close()
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_writer, args=(location, w, queue))
               for w in range(WRITERS)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    errors = sum(queue.get(timeout=600) for _ in workers)
    for w in workers:
        w.join(60)
    elapsed = time.perf_counter() - start
    check = History(location)
    written = len(check.query("SELECT entry_id FROM tasks WHERE status='succeeded'"))
    check.close()
    errors += WRITERS * CYCLES - written
    return WRITERS * CYCLES / elapsed, errors


def measure(label: str, location: str, load_goal: float) -> list[dict[str, Any]]:
    history = History(location)
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
        row(f"{label}: records appended per second (batches of 1,000)",
            statistics.median(rates), "/s", 5000, lower_is_better=False),
        row(f"{label}: history.df() of 100,000 records", load, "s", load_goal),
        row(f"{label}: history.summary() of 100,000 records", summary, "s", None),
    ]


def writers_rows(label: str, location: str) -> list[dict[str, Any]]:
    rate, errors = concurrent_writers(location)
    return [
        row(f"{label}: {WRITERS} writer processes, journal cycles/s", rate, "/s", None,
            lower_is_better=False),
        row(f"{label}: {WRITERS} writer processes, errors", errors, "", 0),
    ]


def run() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        rows += measure("SQLite", str(Path(folder) / "bench.sqlite"), 1.0)
        rows += writers_rows("SQLite", str(Path(folder) / "writers.sqlite"))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from _postgres import Cluster, _bin_dir

    bin_dir = _bin_dir()
    if bin_dir is None:
        print("PostgreSQL is not installed (make postgres): its rows are skipped")
        return rows
    cluster = Cluster(bin_dir)
    try:
        cluster.start()
        rows += measure("PostgreSQL", cluster.url(cluster.create_database()), 2.0)
        rows += writers_rows("PostgreSQL", cluster.url(cluster.create_database()))
    finally:
        cluster.stop()
    return rows


def main() -> None:
    print_table("History journal", run())


if __name__ == "__main__":
    main()
