"""The notebooks as shipped: a test run leaves nothing in notebooks/, and each notebook stays
small (no media in its stored outputs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _listing() -> set[str]:
    return {
        str(p.relative_to(NOTEBOOKS)) for p in NOTEBOOKS.rglob("*")
        if "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts
    }


def test_running_a_notebook_under_pytest_writes_nothing_into_notebooks() -> None:
    before = _listing()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    # The repository's settings, with only the plugins they name (nbval; pytest-asyncio for
    # its ini options): the other installed plugins add seconds of start-up and nothing here.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(NOTEBOOKS / "01-quickstart.ipynb"), "-q",
         "-p", "no:cacheprovider", "-p", "nbval", "-p", "pytest_asyncio.plugin"],
        capture_output=True, text=True, env=env, cwd=NOTEBOOKS.parent, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert _listing() == before  # no .genlab/ history, no genlab-output/


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_are_stored_without_media(notebook: Path) -> None:
    stored = json.loads(notebook.read_text())
    outputs = json.dumps([c.get("outputs", []) for c in stored["cells"]])
    assert "base64" not in outputs and "video/mp4" not in outputs
    assert "widgets" not in stored["metadata"]  # no stale widget state with media in it
    assert notebook.stat().st_size < 64_000


def _committed() -> list[Path]:
    """Every notebook of the repository (not those of the venv, builds or checkpoints)."""
    skip = {".venv", "build", ".ipynb_checkpoints", "node_modules", ".git", "genlab-output"}
    found = []
    for folder, subfolders, files in os.walk(NOTEBOOKS.parent):
        subfolders[:] = [d for d in subfolders if d not in skip and not d.startswith(".")]
        found += [Path(folder) / f for f in files if f.endswith(".ipynb")]
    return sorted(found)


_COMMITTED = _committed()


def test_every_committed_notebook_is_found() -> None:
    names = {str(p.relative_to(NOTEBOOKS.parent)) for p in _COMMITTED}
    assert "notebooks/01-quickstart.ipynb" in names
    assert "notebooks/reports/comparison-report.ipynb" in names


@pytest.mark.parametrize("notebook", _COMMITTED, ids=lambda p: p.name)
def test_every_committed_notebook_is_valid_nbformat(notebook: Path) -> None:
    """Jupyter's own schema: an invalid notebook makes the server log "Notebook JSON is
    invalid" and may be rewritten (or refused) by the front ends."""
    import nbformat

    stored = nbformat.read(notebook, as_version=nbformat.NO_CONVERT)
    nbformat.validate(stored)  # raises ValidationError, naming the cell and the property
