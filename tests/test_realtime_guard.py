"""The run's guard moves its own processes out of a real-time scheduling class."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator

import psutil
import pytest

from _realtime import RealtimeGuard

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setscheduler"),
                                reason="Linux scheduling classes")


@pytest.fixture
def detached() -> Iterator[list[int]]:
    """Start sleeping processes outside this run's process tree (so the run's own guard,
    which looks after that tree, leaves them to the guard under test)."""
    started: list[int] = []

    def start() -> int:
        # A subshell (the process returned) with one child, sleep.
        said = subprocess.run(["sh", "-c", "(sleep 120; true) >/dev/null 2>&1 & echo $!"],
                              capture_output=True, text=True, check=True)
        started.append(int(said.stdout))
        return started[-1]

    yield [start(), start()]
    for pid in started + [c.pid for p in started if psutil.pid_exists(p)
                          for c in psutil.Process(p).children()]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _to(pid: int, policy: int, priority: int) -> None:
    try:
        os.sched_setscheduler(pid, policy, os.sched_param(priority))
    except PermissionError:
        pytest.skip("moving a process to a real-time class needs CAP_SYS_NICE")


def test_a_process_in_a_real_time_class_is_moved_back_and_reported(detached: list[int]) -> None:
    pid = detached[0]
    _to(pid, os.SCHED_FIFO, 10)
    guard = RealtimeGuard(root=pid)
    assert guard.sweep() == 1
    assert os.sched_getscheduler(pid) == os.SCHED_OTHER
    said = guard.summary()
    assert said is not None and f"sh ({pid})" in said
    assert guard.sweep() == 0  # nothing left to move


def test_the_descendants_of_the_guarded_process_are_looked_after(detached: list[int]) -> None:
    (child,) = psutil.Process(detached[0]).children()
    _to(child.pid, os.SCHED_FIFO, 10)
    guard = RealtimeGuard(root=detached[0])
    assert guard.sweep() == 1
    assert os.sched_getscheduler(child.pid) == os.SCHED_OTHER
    assert f"sleep ({child.pid})" in (guard.summary() or "")


def test_processes_outside_the_guarded_tree_are_left_alone(detached: list[int]) -> None:
    guarded, outsider = detached
    _to(outsider, os.SCHED_RR, 5)
    guard = RealtimeGuard(root=guarded)
    assert guard.sweep() == 0
    assert os.sched_getscheduler(outsider) == os.SCHED_RR
    assert guard.summary() is None
