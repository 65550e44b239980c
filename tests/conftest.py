"""Shared fixtures.

Client fixtures are prefixed ``client_``: an in-process emulator app, an AsyncClient bound to it
through ``httpx.ASGITransport``, and a real HTTP emulator on a free port.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _postgres import (  # noqa: F401  (fixtures: a PostgreSQL cluster on loopback)
    history_location,
    postgres,
    postgres_url,
)
from _realtime import (  # noqa: F401  (hooks: the run's processes stay at normal priority)
    pytest_configure,
    pytest_terminal_summary,
    pytest_unconfigure,
)
from _s3 import s3, s3_endpoint  # noqa: F401  (fixtures: the loopback S3 server and a bucket)
from genlab import AsyncClient
from genlab.emulator import EmulatorHandle, create_app, start

# The run keeps what Jupyter (its notary's database), IPython (a profile) and Matplotlib (a font
# cache) write in a folder of the checkout, never in the person's home. Set before any worker
# or kernel starts, so they inherit it.
OWN_HOME = Path(__file__).resolve().parent.parent / "build" / "test-home"
for _name, _sub in (("JUPYTER_DATA_DIR", "jupyter-data"), ("IPYTHONDIR", "ipython"),
                    ("MPLCONFIGDIR", "matplotlib")):
    os.environ[_name] = str(OWN_HOME / _sub)
    # Made here: IPython warns (an error in this run) when its folder's parent is missing, as in
    # a fresh clone whose first run is `make test-browser`.
    (OWN_HOME / _sub).mkdir(parents=True, exist_ok=True)

# Distinctive, so a search for it in reprs, messages and files cannot match by accident.
CLIENT_KEY = "sk-genlab-test-5f0c2a9e7d"
CLIENT_TIME_SCALE = 0.02
# Options that make the client as quick as the sped-up emulator (intervals, not assertions).
CLIENT_FAST: dict[str, Any] = {
    "poll_scale": CLIENT_TIME_SCALE,
    "retry_wait_initial": 0.01,
    "retry_wait_max": 0.05,
    "wait_timeout": 60.0,
}


@pytest.fixture
async def client_app() -> AsyncIterator[Any]:
    """An in-process emulator (no lifespan runs under ASGITransport, so close it here)."""
    app = create_app(api_key=CLIENT_KEY, time_scale=CLIENT_TIME_SCALE)
    yield app
    await app.emulator.aclose()
    app.emulator.close()


@pytest.fixture
async def client_async(client_app: Any) -> AsyncIterator[AsyncClient]:
    """An AsyncClient talking to ``client_app`` in-process."""
    transport = httpx.ASGITransport(app=client_app)
    async with AsyncClient(
        "http://emulator", CLIENT_KEY, transport=transport, **CLIENT_FAST
    ) as client:
        yield client


@pytest.fixture
def client_server() -> Iterator[EmulatorHandle]:
    """A real emulator server on a free port, in a daemon thread."""
    with start(api_key=CLIENT_KEY, time_scale=CLIENT_TIME_SCALE, port=0) as handle:
        yield handle


@pytest.fixture
def client_key() -> str:
    """The API key the client fixtures' emulators expect."""
    return CLIENT_KEY


@pytest.fixture
def client_options() -> dict[str, Any]:
    """Keyword options that make a client as quick as the sped-up emulator."""
    return dict(CLIENT_FAST)


LONGEST_FIRST = (
    "tests/test_history.py",
    "tests/test_report_run.py",
    "tests/reliability/test_secrets.py",
    "tests/test_wheel.py",
    "tests/test_history_team.py",
    "tests/test_emulator_hostile.py",
    "tests/test_leaderboard.py",
    "tests/test_ratings.py",
    "tests/reliability/test_hostile.py",
    "tests/test_readme_examples.py",
    "tests/test_profiles_limits.py",
    "tests/test_temp_folders.py",
    "notebooks/05-reference-media.ipynb",
    "notebooks/07-prompt-experiments.ipynb",
    "notebooks/06-which-model-is-better.ipynb",
)
"""The files that take longest (their tests' durations summed, from ``--junitxml``), handed out
first: under ``-n auto --dist loadfile`` each worker runs whole files, so a long file handed out
last is run alone while the other workers idle. The order of the tests within a file does not
change."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place
