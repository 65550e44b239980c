"""For the test run only (nbval): each notebook runs in a fresh temporary folder.

nbval starts each notebook's kernel in this folder, so without this every test run would leave
its history (``.genlab/``) and its downloads (``genlab-output/``) here, and the next person to
open the quickstart would see the test run's tasks in its cost table. The kernels get an
IPython directory whose startup file first moves them into a temporary folder of their own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_STARTUP = '''\
import os, tempfile
os.chdir(tempfile.mkdtemp(prefix="genlab-notebook-", dir={root!r}))
'''
_SAVED: dict[str, str | None] = {}


def pytest_configure(config: pytest.Config) -> None:
    # A hook, not a fixture: nbval starts a notebook's kernel before any fixture runs.
    root = Path(tempfile.mkdtemp(prefix="genlab-nbval-"))
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-genlab-workdir.py").write_text(_STARTUP.format(root=str(root)))
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
