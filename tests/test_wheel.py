"""genlab as a pip user gets it: the wheel, installed into a fresh venv outside the
repository. With no extra the command line still answers (and names the extra a command
needs); with the emulator and notebook extras the demo runs, and the notebooks that
``genlab notebooks`` copies out run under nbval.

The wheel holds the notebooks of notebooks/ (their one copy), exactly: a test fails if the
package data and the repository's notebooks drift apart. uv installs (its cache is reused).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from genlab.cli import tutorial_files

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def _uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(found).exists():
        pytest.fail("uv is missing: `make test` installs it (genlab's dev extra)")
    return found


def _env() -> dict[str, str]:
    """No GENLAB_* settings, nothing of this checkout on the import path, and Python writing
    bytecode as it does by default (so the venv's later runs reuse what the first compiled)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("GENLAB_")
            and k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE"}}


def _run(*command: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in command], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    built = _run(_uv(), "build", "--wheel", "--quiet", "-o", dist, ROOT, cwd=dist)
    assert built.returncode == 0, built.stderr
    (found,) = dist.glob("genlab-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Iterator[Path]:
    """A fresh venv outside the repository with the wheel installed, no extras."""
    folder = tmp_path_factory.mktemp("pip-user")
    made = _run(_uv(), "venv", "--quiet", "--python", sys.executable, folder / "venv",
                cwd=folder)
    assert made.returncode == 0, made.stderr
    python = folder / "venv" / "bin" / "python"
    done = _run(_uv(), "pip", "install", "--quiet", "--python", python, wheel, cwd=folder)
    assert done.returncode == 0, done.stderr
    yield folder


def test_the_wheel_holds_exactly_the_repositorys_notebooks(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name.removeprefix("genlab/notebooks/"): archive.read(name)
                   for name in archive.namelist() if name.startswith("genlab/notebooks/")}
    expected = {str(p): (NOTEBOOKS / p).read_bytes() for p in tutorial_files(NOTEBOOKS)}
    assert sorted(shipped) == sorted(expected)
    assert shipped == expected
    assert "conftest.py" not in shipped
    tutorials = len(list(NOTEBOOKS.glob("[0-9]*.ipynb")))
    assert len([n for n in shipped if "/" not in n and n.endswith(".ipynb")]) == tutorials


def test_a_base_install_answers_and_names_the_extras(venv: Path) -> None:
    genlab = venv / "venv" / "bin" / "genlab"
    helped = _run(genlab, "--help", cwd=venv)
    assert helped.returncode == 0, helped.stderr
    assert "notebooks" in helped.stdout
    demo = _run(genlab, "demo", cwd=venv)
    assert demo.returncode == 2
    assert "pip install 'genlab[emulator,notebook]'" in demo.stderr
    assert "Traceback" not in demo.stderr
    serve = _run(genlab, "serve", cwd=venv)
    assert serve.returncode == 2 and "pip install 'genlab[emulator]'" in serve.stderr


def test_with_its_extras_the_demo_runs_and_the_notebooks_pass_nbval(venv: Path,
                                                                    wheel: Path) -> None:
    python = venv / "venv" / "bin" / "python"
    done = _run(_uv(), "pip", "install", "--quiet", "--python", python,
                f"genlab[emulator,notebook] @ {wheel.as_uri()}", "nbval", "ipykernel",
                cwd=venv)
    assert done.returncode == 0, done.stderr
    genlab = venv / "venv" / "bin" / "genlab"

    # At the other tests' pace: the same demo, its emulator's simulated processing shorter.
    demo = _run(genlab, "demo", "--output", "out", "--time-scale", "0.02", cwd=venv)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "HTML report" in demo.stdout and (venv / "out" / "comparison.html").is_file()

    copied = _run(genlab, "notebooks", "nb", cwd=venv)
    assert copied.returncode == 0, copied.stderr
    assert len(list((venv / "nb").glob("*.ipynb"))) == len(list(NOTEBOOKS.glob("[0-9]*.ipynb")))
    again = _run(genlab, "notebooks", "nb", cwd=venv)
    assert again.returncode == 2 and "copied nothing" in again.stderr

    (venv / "nb" / "pytest.ini").write_text("[pytest]\n")  # nothing of the repository's
    nbval = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
                 "--nbval-sanitize-with", "sanitize.cfg", "01-quickstart.ipynb",
                 cwd=venv / "nb")
    assert nbval.returncode == 0, nbval.stdout[-3000:]
    assert "passed" in nbval.stdout
