"""Fault injection for testing clients: failing tasks, 5xx, 429s, latency, dropped submits."""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class FaultConfig:
    """Which faults the emulator injects. Rates are probabilities from 0 to 1.

    Attributes:
        fail_rate: share of accepted tasks that end ``failed`` (with an error object).
        error_rate: share of API requests answered with a server error. On submits this is a
            503 with an empty body, as a gateway in front of the service sends it: sometimes
            before the service saw the request, sometimes after the service created and billed
            the task (see ``error_after_billing``), so a client cannot tell which and must not
            resend it. On task queries it is a 503 with the service's envelope.
        error_after_billing: share of those submit 503s sent after the task was created and
            billed (it is in the ledger, its answer lost); the rest come before the service saw
            the request (nothing created).
        rate_limit_rate: share of API requests answered 429 with a ``Retry-After`` header.
        retry_after: the ``Retry-After`` value in seconds.
        latency: seconds added before every API answer.
        drop_rate: share of submits that are accepted and billed, whose connection is then
            dropped before the answer is sent.
        seed: makes the dice repeatable.

    Example:
        >>> faults = FaultConfig(fail_rate=0.1, drop_rate=0.02, seed=7)
    """

    fail_rate: float = 0.0
    error_rate: float = 0.0
    error_after_billing: float = 0.5
    rate_limit_rate: float = 0.0
    retry_after: float = 1.0
    latency: float = 0.0
    drop_rate: float = 0.0
    seed: int | None = None
    _rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in fields(self):
            if not f.name.startswith("_"):
                _check(f.name, getattr(self, f.name))
        self.reseed(self.seed)

    def reseed(self, seed: int | None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def roll(self, rate: float) -> bool:
        """True with probability ``rate`` (thread-safe)."""
        if rate <= 0:
            return False
        with self._lock:
            return self._rng.random() < rate

    def update(self, **changes: Any) -> None:
        """Change some settings, e.g. ``faults.update(error_rate=0.1)``."""
        names = {f.name for f in fields(self) if not f.name.startswith("_")}
        unknown = set(changes) - names
        if unknown:
            raise ValueError(f"unknown fault settings {sorted(unknown)}; use {sorted(names)}")
        for name, value in changes.items():
            _check(name, value)  # all checked before any is applied
        for name, value in changes.items():
            if name == "seed":
                self.reseed(value)
            else:
                setattr(self, name, value)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}


_RATES = ("fail_rate", "error_rate", "error_after_billing", "rate_limit_rate", "drop_rate")


def _check(name: str, value: Any) -> None:
    # Settings arrive as any JSON value (PUT /v1/emulator/faults); one stored unchecked, e.g.
    # {"latency": "x"}, would break every later request, so each is refused when it is set.
    if name == "seed":
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"seed must be an integer or null, got {value!r}")
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if value < 0 or (name in _RATES and value > 1):
        bounds = "from 0 to 1" if name in _RATES else "0 or more (seconds)"
        raise ValueError(f"{name} must be {bounds}, got {value!r}")
