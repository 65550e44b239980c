"""Crash and resume: a process with a History is SIGKILLed while waiting; a new process
resumes from the history and sees every task through, submitting nothing again.

The emulator's clock is paused while the child runs, so every task is surely still queued
when the child dies (no race with the machine's speed), then released for the resume.
"""

from __future__ import annotations

import os
import queue
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import genlab
from _clocks import PausableClock
from genlab import emulator
from genlab.history import History

from ._support import KEY, next_line, stop_process
from .conftest import Scale
from .figures import Figures

CHILD = textwrap.dedent(
    """
    import os, genlab
    from genlab.history import History
    history = History(os.environ["GENLAB_HISTORY"])
    client = genlab.Client(os.environ["BASE_URL"], os.environ["KEY"], history=history,
                           poll_scale=0.05)
    tasks = []
    for i in range(int(os.environ["N"])):
        if i % 4 == 3:
            body = {"model": "video-a", "prompt": f"crash {i}", "duration": 2,
                    "resolution": "480P"}
        else:
            body = {"model": "image-d", "prompt": f"crash {i}", "resolution": "512"}
        tasks.append(client.submit(body))
    print("submitted", flush=True)
    for future in [client.wait_future(t) for t in tasks]:
        future.result()  # never returns: the emulator's clock is paused; we are killed here
    print("finished", flush=True)
    """
)


def polled_tasks(path: Path) -> int:
    """How many tasks the child has already polled (each poll of a new status is an event)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(DISTINCT task_id) FROM events").fetchone()[0])
    except sqlite3.Error:
        return 0


def wait_for_line(lines: queue.Queue[str | None], expected: str, seconds: float) -> str:
    seen: list[str] = []

    def matches(line: str) -> bool:
        seen.append(line)
        return line.strip() == expected

    line = next_line(lines, matches, deadline=time.monotonic() + seconds)
    if line is None:
        raise AssertionError(f"the child did not print {expected!r}; it printed {seen}")
    return line


def test_a_killed_process_is_resumed_without_resubmitting(
    scale: Scale, figures: Figures, tmp_path: Path
) -> None:
    section = figures.section("crash", "Crash and resume: SIGKILL mid-wait, then resume")
    n = scale.crash_tasks
    path = tmp_path / "crash.sqlite"
    clock = PausableClock()
    with emulator.start(api_key=KEY, time_scale=0.02, clock=clock, max_processing=8) as server:
        env = {
            **os.environ,
            "GENLAB_HISTORY": str(path),
            "BASE_URL": server.base_url,
            "KEY": KEY,
            "N": str(n),
        }
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert child.stdout is not None
            for line in child.stdout:
                lines.put(line)
            lines.put(None)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            wait_for_line(lines, "submitted", 120)
            # Mid-wait: the child has polled every task at least once (bounded wait).
            deadline = time.monotonic() + 60
            for _ in range(1200):
                if polled_tasks(path) >= n or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            polled = polled_tasks(path)
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        finally:
            stop_process(child)
            reader.join(10)
            if child.stdout is not None:
                child.stdout.close()
        killed = child.returncode == -signal.SIGKILL
        submitted = len(server.ledger())

        clock.resume()  # the service carries on; the tasks finish
        history = History(path)
        try:
            unfinished = len(history.unfinished())
            with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02) as client:
                outcomes = history.resume(client, timeout=120)
            df = history.df()
            completed = sum(1 for o in outcomes if o.status == "succeeded")
            recorded = int(((df["status"] == "succeeded") & df["result_url"].notna()).sum())
            left = len(history.unfinished())
        finally:
            history.close()
        resubmitted = len(server.ledger()) - submitted

    section.add("tasks submitted", submitted)
    section.goal(
        "killed with SIGKILL while waiting",
        polled,
        f"{n} tasks polled, then killed",
        killed and polled == n,
    )
    section.goal("tasks resumed", len(outcomes), f"{n}", unfinished == len(outcomes) == n)
    section.goal("tasks completed after resume", completed, f"{n}", completed == n)
    section.goal(
        "tasks recorded as succeeded with a result", recorded, f"{n}", recorded == n and left == 0
    )
    section.goal("tasks resubmitted", resubmitted, "0", resubmitted == 0 and submitted == n)
    section.assert_goals()
