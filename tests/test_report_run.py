"""Reports as runs: `genlab report NOTEBOOK -p name value -o page.html` executes a parameterised
notebook headless and writes one HTML page that loads nothing from elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from genlab.cli import main
from genlab.history import History, RatingEntry

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "notebooks" / "reports" / "comparison-report.ipynb"


def _no_fetches(page: str) -> None:
    assert not re.findall(r'<script[^>]+src="http', page)
    assert not re.findall(r'<link[^>]+href="http', page)
    assert not re.findall(r'import [^;]*https://', page)


def test_the_comparison_report_runs_with_parameters_and_shows_the_votes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("GENLAB_BASE_URL", "GENLAB_API_KEY", "GENLAB_HISTORY", "GENLAB_MEDIA"):
        monkeypatch.delenv(name, raising=False)
    history = History(tmp_path / "team.sqlite")
    for i in range(3):  # votes from an earlier week: image-d preferred to image-b
        history.add_rating(RatingEntry(f"old-d{i}", f"old-b{i}", "left", left_model="image-d",
                                       right_model="image-b", prompt_address=f"p{i}"))
    history.close()
    code = main(["report", str(REPORT), "-o", "out/kites.html",
                 "-p", "title", "Kites <script>alert(1)</script>",
                 "-p", "prompts", '["A paper kite"]',
                 "-p", "models", '["image-b", "image-d"]',
                 "-p", "history", str(tmp_path / "team.sqlite"),
                 "-p", "max_credits", "100"])
    assert code == 0, capsys.readouterr().err
    page = (tmp_path / "out" / "kites.html").read_text()
    assert "Kites &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert "genlab-board-table" in page and page.count('class="genlab-interval"') == 2
    assert "genlab-gallery" in page and "data:image/" in page  # media embedded
    assert "cmp = genlab.compare" not in page  # outputs only: the code stays out
    _no_fetches(page)
    assert History(tmp_path / "team.sqlite").df(tag="comparison-report")["model"].tolist() == [
        "image-b", "image-d"]


def test_a_notebook_that_fails_still_writes_its_page_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    parameters = nbformat.v4.new_code_cell("limit = 1")
    parameters.metadata["tags"] = ["parameters"]
    notebook = nbformat.v4.new_notebook(cells=[
        parameters,
        nbformat.v4.new_code_cell("print('counted to', limit)"),
        nbformat.v4.new_code_cell("raise ValueError(f'limit {limit} is too low')"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})
    path = tmp_path / "fails.ipynb"
    nbformat.write(notebook, path)
    code = main(["report", str(path), "-p", "limit", "7", "-o", str(tmp_path / "fails.html"),
                 "--show-code"])
    assert code == 1
    assert "limit 7 is too low" in capsys.readouterr().err
    page = (tmp_path / "fails.html").read_text()
    assert "counted to 7" in page and "ValueError" in page
    assert nbformat.read(path, as_version=4).cells[0].source == "limit = 1"  # untouched
    _no_fetches(page)


def test_a_missing_notebook_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nope.ipynb")]) == 2
    assert "no notebook at" in capsys.readouterr().err
