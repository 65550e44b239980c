"""Fixtures of the widget tests: an emulator per module, a client and a Studio per test, and
every test ending with the widgets' shared pool shut down and its threads gone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import genlab
from genlab.emulator import EmulatorHandle, start
from genlab.widgets import Background, Studio

API_KEY = "studio-test-key-42"


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """Every test ends with the widgets' shared pool shut down and its threads gone."""
    yield
    Background.shared().shutdown()
    assert [t for t in threading.enumerate() if t.name.startswith("genlab-widgets")] == []


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorHandle]:
    with start(api_key=API_KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture
def client(emulator: EmulatorHandle) -> Iterator[genlab.Client]:
    with genlab.Client(emulator.base_url, emulator.api_key, poll_scale=0.05) as c:
        yield c


@pytest.fixture
def studio(client: genlab.Client, tmp_path: Path) -> Studio:
    return Studio(client, media_dir=tmp_path / "media")
