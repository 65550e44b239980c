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
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(NOTEBOOKS / "01-quickstart.ipynb"), "-q",
         "-p", "no:cacheprovider"],
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
