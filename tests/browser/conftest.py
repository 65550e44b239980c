"""Every browser test has a time limit (pytest-timeout), so a browser that hangs fails its test
instead of the whole run; closing a browser has its own watchdog (``_lab.GuardedBrowser``).

pytest-timeout's alarm needs the test process to be scheduled. Should it not end a test (a
process starved of CPU, a call that swallows the alarm), a last watchdog on a C thread
(``faulthandler``) prints every thread's stack and ends the run :data:`HARD_LIMIT` seconds
after the test began, so a stuck run says where it stuck and stops long before CI's limit."""

from __future__ import annotations

import faulthandler
from collections.abc import Generator

import pytest

TEST_LIMIT = 900
"""Seconds one browser test may take, its server's start included, on a busy machine."""
HARD_LIMIT = TEST_LIMIT + 300
"""Seconds after which a browser test that pytest-timeout did not end stops the run."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, object, object]:
    if item.get_closest_marker("browser") is None:
        return (yield)
    faulthandler.dump_traceback_later(HARD_LIMIT, exit=True, file=2)  # stderr itself
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("timeout"):
        return  # the fixture below says what to install when a browser test runs
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(TEST_LIMIT))


@pytest.fixture(autouse=True)
def _time_limited(request: pytest.FixtureRequest) -> None:
    if not request.config.pluginmanager.hasplugin("timeout"):
        pytest.fail("browser tests need pytest-timeout so a hung browser cannot stall the run:"
                    ' pip install -e ".[browser]" (make test-browser does)')
