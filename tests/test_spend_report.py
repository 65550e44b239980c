"""The money in reports: the spend chart and the HTML report's Spend section."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from genlab import report
from genlab.history import History
from genlab.report import plot_spend, spend_of

RUNS = pd.DataFrame({
    "prompt": ["a fox", "a fox", "a fox"],
    "model": ["video-a", "video-a", "video-b"],
    "status": ["succeeded"] * 3,
    "seconds": [3.0, 0.0, 4.0],
    "credits": [160, 160, None],
    "reused": [False, True, False],
})


def _spend_section(page: str) -> str:
    found = re.search(r"<h2>Spend</h2>(.*?)<h2>", page, re.S)
    assert found is not None, "no Spend section"
    return found.group(1)


def test_spend_of_rows_counts_a_reused_row_as_saved_not_spent() -> None:
    spend = spend_of(RUNS).set_index("model")
    assert spend.loc["video-a", "runs"] == 1
    assert spend.loc["video-a", "credits"] == 160
    assert spend.loc["video-a", "credits_saved"] == 160
    assert spend.loc["video-b", "unpriced"] == 1


def test_the_report_shows_spend_when_rows_have_credits(tmp_path: Path) -> None:
    page = report.write_report(RUNS, tmp_path / "r.html").path.read_text(encoding="utf-8")
    section = _spend_section(page)
    assert "credits_saved" in section
    assert "<th>video-a</th><td>1</td><td>160</td>" in section
    assert "<th>all models</th>" in section
    assert 'alt="credits spent, estimated and saved by reuse" src="data:image/png' in section


def test_no_spend_section_without_credits(tmp_path: Path) -> None:
    free = RUNS.assign(credits=[None, None, None], reused=[False, False, False])
    page = report.report_html(free)
    assert "<h2>Spend</h2>" not in page


def test_the_report_takes_a_history_spend_frame(tmp_path: Path) -> None:
    spend = pd.DataFrame({"day": ["2026-11-20", "2026-11-21"], "runs": [2, 1],
                          "credits": [320, 0], "estimated": [0, 100], "unpriced": [0, 0],
                          "reused": [0, 3], "credits_saved": [0, 480]})
    section = _spend_section(report.report_html(RUNS, spend=spend))
    assert "<th>2026-11-21</th><td>1</td><td>0</td><td>100</td><td>0</td><td>3</td>" \
           "<td>480</td>" in section
    assert "<th>all days</th><td>3</td><td>320</td><td>100</td>" in section


def test_plot_spend_draws_plain_text_labels_from_history_spend(tmp_path: Path) -> None:
    history = History(tmp_path / "h.db")
    empty = plot_spend(history.spend(by="tag"))
    history.close()
    assert [t.get_text() for t in empty.axes[0].texts] == ["no runs"]
    frame = pd.DataFrame({"tag": ["$5 test", "b"], "runs": [1, 2], "credits": [10, 20],
                          "estimated": [0, 5], "unpriced": [1, 0], "reused": [0, 1],
                          "credits_saved": [0, 10]})
    fig = plot_spend(frame)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [r"\$5 test", "b"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "spent", "estimated (unpriced)", "saved by reuse"]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [10, 20, 0, 5, 0, 10]
    assert "1 without a price" in [t.get_text() for t in ax.texts]
    assert fig._repr_png_().startswith(b"\x89PNG")  # type: ignore[attr-defined]


@pytest.mark.parametrize("by", ["model", "day", "tag"])
def test_plot_spend_takes_every_grouping(tmp_path: Path, by: str) -> None:
    history = History(tmp_path / "h.db")
    assert plot_spend(history.spend(by=by)).axes  # type: ignore[arg-type]
    history.close()
