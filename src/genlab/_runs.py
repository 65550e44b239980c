"""Reports as runs: a parameterised notebook executed headless, then exported as one HTML file.

``genlab report NOTEBOOK -p name value ... -o report.html`` runs :func:`run_report`: papermill
executes a copy of the notebook with the parameters injected after its cell tagged
``parameters``, and nbconvert exports the executed copy (outputs only, unless the code is
asked for). The notebook itself is never modified, so a team runs the same comparison on a
schedule or in CI. ``notebooks/reports/comparison-report.ipynb`` is one such notebook.

The page is one file that loads nothing from elsewhere: charts and media are embedded by the
notebook's own outputs, and the scripts nbconvert's template would fetch from a CDN (RequireJS,
MathJax, Mermaid: none of which a report of tables, pictures and videos needs) are left out.

Values given with ``-p`` are read as JSON when they parse (``5000``, ``true``, ``null``,
``["image-b", "image-d"]``, ``{"resolution": "1K"}``), else taken as text.

Example:
    >>> parameter_value("5000"), parameter_value('["image-b"]'), parameter_value("a kite")
    (5000, ['image-b'], 'a kite')
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# nbconvert's JupyterLab template, without the three scripts it would load from a CDN.
_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


def parameter_value(text: str) -> Any:
    """A ``-p`` value: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass(frozen=True, slots=True)
class ReportRun:
    """What :func:`run_report` did: the HTML written, the executed notebook if kept, and the
    error that stopped the run (None when every cell ran)."""

    html: Path
    notebook: Path | None
    error: str | None


def run_report(
    notebook: str | os.PathLike[str],
    output: str | os.PathLike[str],
    parameters: Mapping[str, Any] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    kernel: str | None = None,
    timeout: float | None = None,
    show_code: bool = False,
    keep: str | os.PathLike[str] | None = None,
) -> ReportRun:
    """Execute ``notebook`` with ``parameters`` and write its outputs to ``output`` (HTML).

    A cell that fails stops the run; the page is written all the same, with the error in it,
    and :attr:`ReportRun.error` says what failed.

    Args:
        notebook: the parameterised notebook (a cell tagged ``parameters`` holds defaults).
        output: the HTML file to write.
        parameters: values that replace the defaults.
        cwd: the folder the notebook runs in (default: the current one).
        kernel: the Jupyter kernel (default: the notebook's own).
        timeout: seconds a cell may take (default: no limit).
        show_code: keep the code cells in the page (default: outputs only).
        keep: also keep the executed notebook there.

    Raises:
        FileNotFoundError: the notebook does not exist.
    """
    import jinja2
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    source = Path(notebook)
    if not source.is_file():
        raise FileNotFoundError(f"no notebook at {source}")
    target = Path(output)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="genlab-report-") as scratch:
        executed = Path(keep) if keep is not None else Path(scratch) / source.name
        executed.parent.mkdir(parents=True, exist_ok=True)
        error = None
        try:
            papermill.execute_notebook(
                str(source), str(executed), parameters=dict(parameters or {}),
                cwd=str(cwd) if cwd is not None else None, kernel_name=kernel,
                execution_timeout=timeout, progress_bar=False, log_output=False,
                request_save_on_cell_execute=False,
            )
        except papermill.PapermillExecutionError as exc:  # the page still shows how far it got
            error = f"{exc.ename}: {exc.evalue} (in cell {exc.exec_count})"
        exporter = HTMLExporter(  # type: ignore[no-untyped-call]
            template_name="lab", template_file="genlab-report.html.j2",
            extra_loaders=[jinja2.DictLoader({"genlab-report.html.j2": _TEMPLATE})],
        )
        exporter.exclude_input = not show_code
        exporter.exclude_input_prompt = True
        exporter.exclude_output_prompt = True
        executed_nb = nbformat.read(executed, as_version=4)  # type: ignore[no-untyped-call]
        page, _resources = exporter.from_notebook_node(executed_nb)
        target.write_text(page, encoding="utf-8")
    return ReportRun(target, Path(keep) if keep is not None else None, error)
