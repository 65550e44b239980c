"""The ``genlab`` command in every install: each command runs, or names the extra to install
and exits 2; ``genlab notebooks`` copies the tutorials and never overwrites."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from genlab import cli

ROOT = Path(__file__).resolve().parent.parent

# A base install, played in a subprocess: the extras' modules cannot be imported.
_BASE_INSTALL = textwrap.dedent("""
    import importlib.abc, sys
    from importlib import metadata

    EXTRAS = {"fastapi", "uvicorn", "av", "PIL", "pandas", "ipywidgets", "matplotlib",
              "papermill", "nbconvert", "voila", "httptools", "choix"}

    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in EXTRAS:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Absent())
    real_version = metadata.version

    def version(name):
        if name.lower() in {"fastapi", "uvicorn", "av", "pillow", "pandas", "ipywidgets",
                            "matplotlib", "papermill", "nbconvert", "voila", "httptools",
                            "choix", "python-multipart", "jinja2", "tqdm", "ipykernel"}:
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    metadata.version = version
    from genlab.cli import main
    raise SystemExit(main(sys.argv[1:]))
""")


def _base(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _BASE_INSTALL, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_help_works_without_any_extra() -> None:
    done = _base("--help")
    assert done.returncode == 0, done.stderr
    for command in ("serve", "demo", "app", "notebooks", "report", "history", "gate"):
        assert command in done.stdout
    serve = _base("serve", "--help")
    assert serve.returncode == 0, serve.stderr
    assert "pip install 'genlab[emulator]'" in " ".join(serve.stdout.split())


@pytest.mark.parametrize(("command", "extra"), [
    (["demo"], "genlab[emulator,notebook]"),
    (["serve", "--port", "0"], "genlab[emulator]"),
    (["app", "--no-browser"], "genlab[app]"),
    (["report", "x.ipynb"], "genlab[reports]"),
    (["gate", "h.sqlite", "--experiment", "e", "--baseline", "kite@1", "--candidate", "kite@2"],
     "genlab[notebook]"),
])
def test_a_command_without_its_extra_names_it_and_exits_2(command: list[str],
                                                          extra: str) -> None:
    done = _base(*command)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"pip install '{extra}'" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1  # one line, not a traceback


def test_notebooks_works_without_any_extra(tmp_path: Path) -> None:
    done = _base("notebooks", str(tmp_path / "nb"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "nb" / "01-quickstart.ipynb").is_file()


def test_an_import_failing_anyway_names_the_extras(capsys: pytest.CaptureFixture[str]) -> None:
    """A source checkout has no metadata to check: the failing import is named instead."""
    code = cli._import_failed("demo", ModuleNotFoundError("No module", name="pandas"))
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "genlab demo: pandas is not installed; genlab demo needs "
        "pip install 'genlab[emulator,notebook]'")


def _metadata_requires() -> list[str]:
    """Requires-Dist as a wheel of this checkout's pyproject.toml writes it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra, specs in project["optional-dependencies"].items():
        lines += [f'{spec}; extra == "{extra}"' for spec in specs]
    return lines


def test_the_extras_a_command_needs_come_from_the_package_metadata(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metadata, "requires", lambda name: _metadata_requires())
    app = cli._requirements("app")
    assert "voila" in app
    assert {"fastapi", "uvicorn", "pandas", "ipywidgets"} <= set(app)  # through genlab[...]
    assert cli.missing_extras("demo") == ([], [])  # this environment has them all
    real_version = metadata.version

    def version(name: str) -> str:
        if name == "voila":
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr(metadata, "version", version)
    assert cli.missing_extras("app") == (["app"], ["voila"])
    assert cli.missing_extras("demo") == ([], [])


def test_the_default_key_is_the_emulators() -> None:
    from genlab.emulator import DEFAULT_API_KEY

    assert cli.DEFAULT_API_KEY == DEFAULT_API_KEY
    assert cli.build_parser().parse_args(["serve"]).api_key in (DEFAULT_API_KEY,
                                                               _env_key())


def _env_key() -> str | None:
    import os

    return os.environ.get("GENLAB_API_KEY")


def test_serve_refuses_an_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--profile", "nope", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "no profile 'nope'" in err and "different" in err


def test_notebooks_copies_the_tutorials(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "nb"
    assert cli.main(["notebooks", str(target)]) == 0
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    tutorials = [name for name in copied if "/" not in name and name.endswith(".ipynb")]
    assert tutorials == sorted(p.name for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    assert "reports/comparison-report.ipynb" in copied
    assert "app/studio.ipynb" in copied
    assert "conftest.py" not in copied  # the checkout's test hook stays behind
    for name in copied:
        assert (target / name).read_bytes() == (ROOT / "notebooks" / name).read_bytes()
    assert f"into {target}/" in capsys.readouterr().out


def test_notebooks_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "nb"
    target.mkdir()
    (target / "02-studio.ipynb").write_text("my own work")
    assert cli.main(["notebooks", str(target)]) == 2
    err = capsys.readouterr().err
    assert "02-studio.ipynb" in err and "copied nothing" in err
    assert (target / "02-studio.ipynb").read_text() == "my own work"
    assert sorted(p.name for p in target.iterdir()) == ["02-studio.ipynb"]  # nothing copied


def test_version_prints_the_package_version_and_the_changelog_lists_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``genlab --version`` says the installed version, which the changelog has a section for."""
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    version = metadata.version("genlab")
    assert capsys.readouterr().out.strip() == f"genlab {version}"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"\n## [{version}] - " in changelog
    assert f"\n[{version}]: " in changelog
