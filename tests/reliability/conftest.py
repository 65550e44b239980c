"""Fixtures of the reliability suite. The scale (short or full) is chosen here, and only here.

``GENLAB_RELIABILITY=full`` (set by ``make reliability``) runs every test at full size; unset,
the same tests run in a short form so ``make test`` stays quick.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import pytest

from genlab.emulator import create_app

from ._support import KEY, MediaSet, guard_fetches, make_media
from .figures import Figures

SCALE_ENV = "GENLAB_RELIABILITY"


@dataclass(frozen=True)
class Scale:
    """How big each part of the suite runs."""

    name: str
    soak_tasks: int
    crash_tasks: int
    fuzz_examples: int  # hypothesis examples per model, for valid and for invalid bodies each
    wild_examples: int  # arbitrary JSON bodies
    schemathesis_examples: int  # per API operation
    load_tasks: int  # tasks in flight while polling
    load_pollers: int  # concurrent pollers
    load_polls: int  # polls per poller
    load_fetches: int  # result files fetched (renders, then evictions)
    media_cap_mb: int  # the load server's media store cap
    timing_samples: int  # wrong-key rejections timed per variant

    @property
    def full(self) -> bool:
        return self.name == "full"


SHORT = Scale(
    name="short",
    soak_tasks=100,
    crash_tasks=20,
    fuzz_examples=12,
    wild_examples=60,
    schemathesis_examples=8,
    load_tasks=200,
    load_pollers=20,
    load_polls=25,
    load_fetches=120,
    media_cap_mb=1,
    timing_samples=60,
)
FULL = Scale(
    name="full",
    soak_tasks=1000,
    crash_tasks=20,
    fuzz_examples=80,
    wild_examples=400,
    schemathesis_examples=40,
    load_tasks=1000,
    load_pollers=100,
    load_polls=30,
    load_fetches=600,
    media_cap_mb=4,
    timing_samples=400,
)


def current_scale() -> Scale:
    """The scale of this run. Tests take it from the ``scale`` fixture; only decorators that
    need it at import time (hypothesis ``settings``) call this."""
    return FULL if os.environ.get(SCALE_ENV, "").strip().lower() == "full" else SHORT


_FIGURES = Figures(current_scale().name, asdict(current_scale()))


@pytest.fixture(scope="session")
def scale() -> Scale:
    """The one place the suite's size is decided (``GENLAB_RELIABILITY=full`` or short)."""
    return current_scale()


@pytest.fixture(scope="session")
def figures(scale: Scale) -> Iterator[Figures]:
    """Where tests record their figures; written to build/reliability/figures.json at the end."""
    yield _FIGURES
    command = (
        "make reliability"
        if scale.full
        else "python -m pytest tests/reliability (the short form, part of make test)"
    )
    _FIGURES.write(command=command)


@pytest.fixture(scope="session")
def media() -> MediaSet:
    """Small real media that meet every model's media rules, plus some that break them."""
    return make_media()


@pytest.fixture
def key() -> str:
    return KEY


@pytest.fixture
async def app(scale: Scale) -> AsyncIterator[Any]:
    """An in-process emulator whose reference fetches may only reach loopback."""
    application = create_app(api_key=KEY, time_scale=0.01, fetch_timeout=1.0)
    guard_fetches(application)
    yield application
    await application.emulator.aclose()
    application.emulator.close()
