"""Killing a child process at a known moment, for the crash-and-resume tests."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Mapping


def kill_after_first_line(
    code: str, *args: str, env: Mapping[str, str] | None = None, pause: float = 0.2
) -> str:
    """Run ``python -c code args``, read its first output line, wait ``pause`` seconds, then
    SIGKILL it (no cleanup runs, as in a crash); the line. Fails if it was not killed."""
    child = subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdout is not None
        line = child.stdout.readline().strip()
        time.sleep(pause)
        child.send_signal(signal.SIGKILL)
        child.wait(20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL, "the child ended before it was killed"
    return line
