"""Clocks tests hand to the emulator, to hold its tasks' time still and let it run again."""

from __future__ import annotations

import time


class PausableClock:
    """Epoch seconds that stand still while paused (the emulator's task time)."""

    def __init__(self) -> None:
        self.paused_at: float | None = time.time()
        self.offset = 0.0

    def __call__(self) -> float:
        if self.paused_at is not None:
            return self.paused_at
        return time.time() - self.offset

    def resume(self) -> None:
        if self.paused_at is not None:
            self.offset = time.time() - self.paused_at
            self.paused_at = None
