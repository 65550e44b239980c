"""Every browser test has a time limit (pytest-timeout), so a browser that hangs fails its test
instead of the whole run; closing a browser has its own watchdog (``_lab.GuardedBrowser``)."""

from __future__ import annotations

import pytest

TEST_LIMIT = 900
"""Seconds one browser test may take, its server's start included, on a busy machine."""


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
