"""For the test run only (nbval): each notebook runs in a fresh temporary folder.

nbval starts each notebook's kernel in this folder, so without this every test run would leave
its history (``.genlab/``) and its downloads (``genlab-output/``) here, and the next person to
open the quickstart would see the test run's tasks in its cost table. The kernels get an
IPython directory whose startup file first moves them into a temporary folder of their own.

The same startup file runs the embedded emulator at the pace the other tests use
(``TIME_SCALE``) instead of a person's (0.1): the cells, their outputs and the checked outputs
are the same, only the emulator's simulated processing time is shorter. It does so when the
first cell runs, after the notebook has imported genlab (nothing is imported at startup).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

TIME_SCALE = 0.02
"""The embedded emulator's speed in the notebooks under test (tests/conftest.py's pace)."""

_STARTUP = '''\
import os, tempfile
os.chdir(tempfile.mkdtemp(prefix="genlab-notebook-", dir={root!r}))


def _genlab_test_pace(*args, **kwargs):
    get_ipython().events.unregister("pre_run_cell", _genlab_test_pace)
    import genlab._connect
    start = genlab._connect.embedded_emulator
    genlab._connect.embedded_emulator = lambda time_scale=0.1: start({time_scale!r})


get_ipython().events.register("pre_run_cell", _genlab_test_pace)
'''
_SAVED: dict[str, str | None] = {}


def pytest_configure(config: pytest.Config) -> None:
    # A hook, not a fixture: nbval starts a notebook's kernel before any fixture runs.
    root = Path(tempfile.mkdtemp(prefix="genlab-nbval-"))
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-genlab-workdir.py").write_text(
        _STARTUP.format(root=str(root), time_scale=TIME_SCALE))
    _SAVED["IPYTHONDIR"] = os.environ.get("IPYTHONDIR")
    _SAVED["root"] = str(root)
    os.environ["IPYTHONDIR"] = str(root / "ipython")


def pytest_unconfigure(config: pytest.Config) -> None:
    before = _SAVED.pop("IPYTHONDIR", None)
    if before is None:
        os.environ.pop("IPYTHONDIR", None)
    else:
        os.environ["IPYTHONDIR"] = before
    root = _SAVED.pop("root", None)
    if root:
        shutil.rmtree(root, ignore_errors=True)
