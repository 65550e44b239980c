"""binder/ installs everything the notebooks import, and opens JupyterLab on them."""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _notebook_imports() -> set[str]:
    found: set[str] = set()
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            source = "\n".join(
                line for line in source.splitlines() if not line.startswith(("%", "!"))
            )
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    found.add(node.module.split(".")[0])
    return found


def _requirement_name(line: str) -> str:
    return _canonical(re.split(r"[\s\[<>=!~;]", line.strip(), maxsplit=1)[0])


def _extras(spec: str) -> list[str]:
    match = re.search(r"\[([^\]]+)\]", spec)
    return [e.strip() for e in match.group(1).split(",")] if match else []


def _binder_distributions() -> set[str]:
    """Every distribution binder/requirements.txt brings in, transitively."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted: list[str] = []
    for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("."):  # the package itself, with extras
            pending = _extras(line)
            wanted += project["dependencies"]
            seen: set[str] = set()
            while pending:
                extra = pending.pop()
                if extra in seen:
                    continue
                seen.add(extra)
                for spec in project["optional-dependencies"][extra]:
                    if _requirement_name(spec) == "genlab":
                        pending += _extras(spec)
                    else:
                        wanted.append(spec)
            wanted.append("genlab")
        else:
            wanted.append(line)
    closure: set[str] = set()
    queue = [_requirement_name(w) for w in wanted]
    while queue:
        name = queue.pop()
        if name in closure:
            continue
        closure.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        queue += [_requirement_name(r) for r in requires if "extra ==" not in r]
    return closure


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 3


def test_binder_installs_what_the_notebooks_import() -> None:
    provided = _binder_distributions()
    owners = metadata.packages_distributions()
    missing = []
    for module in sorted(_notebook_imports()):
        if module in sys.stdlib_module_names:
            continue
        distributions = {_canonical(d) for d in owners.get(module, [])}
        if module == "genlab":
            distributions = {"genlab"}
        if not distributions & provided:
            missing.append(f"{module} (from {sorted(distributions) or 'no installed package'})")
    assert not missing, f"binder/requirements.txt does not install: {missing}"


def test_binder_pins_the_python_version_and_checks_its_install() -> None:
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post = (ROOT / "binder" / "postBuild").read_text()
    assert "import genlab" in post


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_saved_without_secrets_or_stray_outputs(notebook: Path) -> None:
    cells = json.loads(notebook.read_text())["cells"]
    for cell in cells:
        if cell["cell_type"] == "code" and cell.get("outputs"):
            # Only outputs nbval compares are kept in the repository.
            assert "".join(cell["source"]).startswith("# NBVAL_CHECK_OUTPUT")


def test_the_app_badge_opens_the_apps_notebook_through_voila() -> None:
    """The README's second badge: Binder's Voila renders notebooks/app/studio.ipynb."""
    readme = (ROOT / "README.md").read_text()
    pages = re.findall(r"urlpath=voila/render/([^)\s]+)", readme)
    assert pages == ["notebooks/app/studio.ipynb"]
    assert (ROOT / pages[0]).is_file()
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "voila" in {_requirement_name(line) for line in lines
                       if line.strip() and not line.startswith("#")}
