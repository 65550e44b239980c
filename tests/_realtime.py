"""Keeps the test run's own processes at normal scheduling priority.

On the machines these tests run on, something outside the project has been seen moving
processes into a real-time scheduling class (SCHED_FIFO 99): Chromium, its Playwright driver,
JupyterLab's server and kernels, PostgreSQL, a pytest-xdist worker. A real-time thread that
spins takes a whole core from every ordinary process; two of them starve a 2-core machine, and
a run then stalls until its CI time runs out, pytest-timeout's alarm included (it fires in a
process that is hardly ever scheduled).

A test process cannot stop that from happening, but it can undo it: :class:`RealtimeGuard`
looks at this process and its descendants, thread by thread, every second, and moves any
thread found in a real-time class (FIFO, round-robin or deadline) back to the normal one.
What it moved is reported at the end of the run, so the log says when it happened.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

SCHED_DEADLINE = 6
"""Linux's deadline class (``os`` has no name for it)."""
REALTIME = {os.SCHED_FIFO, os.SCHED_RR, SCHED_DEADLINE}
INTERVAL = 1.0
"""Seconds between two looks."""


def _threads(pid: int) -> list[int]:
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def _children() -> dict[int, list[int]]:
    """Every process's children, read once from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after it.
        parent = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    return children


def _family(root: int) -> Iterator[int]:
    """``root`` and all its descendants."""
    children = _children()
    todo = [root]
    while todo:
        pid = todo.pop()
        yield pid
        todo.extend(children.get(pid, ()))


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


class RealtimeGuard:
    """Moves threads of ``root``'s process tree out of real-time classes, every
    :data:`INTERVAL` seconds, on a daemon thread."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self.moved: dict[int, str] = {}  # thread id -> "name (pid)"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> int:
        """One look; how many threads it moved back."""
        moved = 0
        for pid in _family(self.root):
            for tid in _threads(pid):
                try:
                    policy = os.sched_getscheduler(tid) & ~os.SCHED_RESET_ON_FORK
                    if policy not in REALTIME:
                        continue
                    os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
                except OSError:
                    continue  # gone, or not ours to change
                self.moved[tid] = f"{_name(pid)} ({pid})"
                moved += 1
        return moved

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            try:
                self.sweep()
            except Exception:  # a guard must never end the run it guards
                continue

    def start(self) -> RealtimeGuard:
        if self._thread is None and Path("/proc").is_dir() and hasattr(os, "sched_setscheduler"):
            self._thread = threading.Thread(target=self._run, name="realtime-guard", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def summary(self) -> str | None:
        if not self.moved:
            return None
        processes = sorted(set(self.moved.values()))
        return (f"realtime guard: {len(self.moved)} thread(s) of this run were found in a "
                f"real-time scheduling class and moved back to normal: {', '.join(processes)}")


_GUARD = RealtimeGuard()


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the main process's guard sees the workers too
        _GUARD.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    _GUARD.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    said = _GUARD.summary()
    if said:
        terminalreporter.write_line(said, yellow=True)
