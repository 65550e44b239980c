"""mkdocs hooks for genlab's site (``make docs``): the notebooks run, and nothing leaves the page.

- The tutorial notebooks in ``notebooks/`` are executed at build time, two at a time, against
  the embedded emulator, each in a temporary folder of its own (so the repository is not written
  to), and the executed copies become the site's tutorial pages.
- A live widget needs a kernel, and its JavaScript would come from a CDN: each widget output is
  shown as a short note instead (the screenshots on the Studio page show what it looks like).
- nbconvert's template loads MathJax and Mermaid from a CDN; the notebooks use neither, so
  those tags are dropped, and a page that would still load anything from elsewhere fails the
  build.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TIME_SCALE = 0.02
"""The emulator's pace at build time: the tests' (a person's is 0.1); outputs are the same."""

_STARTUP = '''\
import os, tempfile
os.chdir(tempfile.mkdtemp(prefix="genlab-docs-", dir={root!r}))


def _genlab_docs_pace(*args, **kwargs):
    get_ipython().events.unregister("pre_run_cell", _genlab_docs_pace)
    import genlab._connect
    start = genlab._connect.embedded_emulator
    genlab._connect.embedded_emulator = lambda time_scale=0.1: start({time_scale!r})


get_ipython().events.register("pre_run_cell", _genlab_docs_pace)
'''
_WIDGET = "application/vnd.jupyter.widget-view+json"
_WIDGET_NOTE = (
    '<p class="genlab-widget-note"><em>A live widget shows here when the notebook runs in '
    "Jupyter (it needs a kernel); see the screenshots in <a href=\"../guide/notebooks.html#screenshots\">"
    "Notebooks and Binder</a>.</em></p>"
)
_EXTERNAL_SCRIPT = re.compile(r'<script[^>]*\ssrc="(?:https?:)?//[^"]*"[^>]*>\s*</script>', re.I)
_EXTERNAL_LOAD = re.compile(
    r'<(?:script|link|img|iframe|source|video|audio)\b[^>]*\s(?:src|href)="(?:https?:)?//', re.I)
_state: dict[str, Any] = {}


def _execute(notebook: Path, out: Path, root: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                   store_widget_state=False,
                   resources={"metadata": {"path": str(root)}}).execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if _WIDGET in data:
                output["data"] = {"text/html": _WIDGET_NOTE}
    nbformat.write(nb, out)


def _example_sections() -> None:
    """genlab's docstrings head their doctests "Example:" (Google style's singular); griffe
    reads only "Examples:" as examples, and would render the doctests as prose."""
    from griffe import DocstringSectionKind
    from griffe._internal.docstrings import google

    google._section_kind.setdefault("example", DocstringSectionKind.examples)


def on_config(config: Any) -> Any:
    """Runs the notebooks once per build, before the pages are read."""
    _example_sections()
    build = ROOT / "build" / "docs-notebooks"
    if os.environ.get("GENLAB_DOCS_REUSE_NOTEBOOKS") and any(build.glob("tutorials/*.ipynb")):
        _state["executed"] = build  # while editing pages: the last build's executed notebooks
        return config
    shutil.rmtree(build, ignore_errors=True)
    pages = build / "tutorials"
    pages.mkdir(parents=True)
    root = Path(tempfile.mkdtemp(prefix="genlab-docs-"))
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-genlab-docs.py").write_text(
        _STARTUP.format(root=str(root), time_scale=TIME_SCALE))
    # Kernels, IPython, Jupyter and Matplotlib write under the temporary folder, not in ~.
    os.environ["IPYTHONDIR"] = str(root / "ipython")
    os.environ["JUPYTER_RUNTIME_DIR"] = str(root / "runtime")
    os.environ["MPLCONFIGDIR"] = str(root / "matplotlib")
    for name in [n for n in os.environ if n.startswith("GENLAB_")]:
        del os.environ[name]  # the embedded emulator, whatever the shell points at
    notebooks = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for done in pool.map(lambda nb: _execute(nb, pages / nb.name, root), notebooks):
                assert done is None
        # What the cards and pages link (kept originals, exported pages, references), where
        # the links look for it: beside the notebook.
        for folder in root.glob("genlab-docs-*"):
            for linked in ("genlab-media", "genlab-output"):
                if (folder / linked).is_dir():
                    shutil.copytree(folder / linked, pages / linked, dirs_exist_ok=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _state["executed"] = build
    return config


@event_priority(100)  # before mkdocs-jupyter's, which makes pages of the .ipynb files it sees
def on_files(files: Any, config: Any) -> Any:
    """The executed notebooks, as pages under tutorials/, and the files their outputs link."""
    from mkdocs.structure.files import File

    executed = _state["executed"]
    for path in sorted(executed.rglob("*")):
        if path.is_file() and ".genlab" not in path.parts:
            files.append(File(path.relative_to(executed).as_posix(), str(executed),
                              config["site_dir"], config["use_directory_urls"]))
    return files


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Drops the CDN scripts nbconvert's template adds; fails if anything else loads from
    elsewhere."""
    output = _EXTERNAL_SCRIPT.sub("", output)
    found = _EXTERNAL_LOAD.search(output)
    if found:
        raise ValueError(f"{page.file.src_uri} loads from elsewhere: {found.group(0)}")
    return output
