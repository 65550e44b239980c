"""The history's one column table (SQL, df() dtypes, the panel's columns) and History.recent()."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from genlab.history import COLUMNS, DISPLAY_COLUMNS, FRAME_COLUMNS, PROMPT_SHOWN, History

START = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC


def row(i: int, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "entry_id": f"e{i}", "task_id": f"t{i}", "model": "video-a", "kind": "video",
        "mode": "text-to-video", "state": "accepted", "status": "succeeded",
        "prompt": f"prompt {i}", "resolution": "480P", "duration": 2.0, "credits": 160,
        "request": json.dumps({"model": "video-a"}), "submitted_at": START + i,
        "created_at": START + i + 0.5, "started_at": START + i + 1.0,
        "completed_at": START + i + 12.76,
    }
    return base | fields


@pytest.fixture
def history(history_location: str) -> Iterator[History]:
    h = History(history_location)  # SQLite, then PostgreSQL
    h.append_many(
        [
            row(0),
            row(1, model="image-d", kind="image", mode="text-to-image", credits=None,
                status="failed", error_code="GENERATION_FAILED", error_message="it broke"),
            row(2, prompt="x" * 200, status="processing", completed_at=None),
            row(3, task_id=None, state="uncertain", status=None, created_at=None,
                started_at=None, completed_at=None, reason="the connection dropped"),
        ]
    )
    yield h
    h.close()


def test_the_panels_columns_and_headings() -> None:
    assert list(DISPLAY_COLUMNS.items()) == [
        ("submitted_at", "submitted"), ("model", "model"), ("mode", "mode"),
        ("status", "status"), ("prompt", "prompt"), ("credits", "credits"),
        ("total_seconds", "seconds"), ("task_id", "task"), ("error_message", "error"),
    ]
    assert set(DISPLAY_COLUMNS) <= set(FRAME_COLUMNS)


def test_the_sql_table_and_the_frame_follow_the_one_column_table(history: History) -> None:
    # The migrations built the table; it has exactly the stored columns (order is theirs).
    stored = [c["name"] for c in sa.inspect(history.engine).get_columns("tasks")]
    assert sorted(stored) == sorted(c.name for c in COLUMNS if c.stored)
    df = history.df()
    assert list(df.columns) == list(FRAME_COLUMNS)
    assert {name: str(dtype) for name, dtype in df.dtypes.items()} == {
        c.name: c.dtype for c in COLUMNS if c.in_frame
    }
    assert df["total_seconds"].tolist()[0] == pytest.approx(12.26)


def test_recent_is_newest_first_and_formatted_as_text(history: History) -> None:
    rows = history.recent()
    assert [r["task_id"] for r in rows] == ["", "t2", "t1", "t0"]
    assert all(list(r) == list(DISPLAY_COLUMNS) for r in rows)
    assert all(isinstance(v, str) for r in rows for v in r.values())
    uncertain, running, failed, done = rows
    assert done["submitted_at"] == "2027-01-15 08:00:00"
    assert done["total_seconds"] == "12.3" and done["credits"] == "160"
    assert done["error_message"] == ""
    assert failed["credits"] == "" and failed["error_message"] == "it broke"
    assert running["total_seconds"] == "" and running["status"] == "processing"
    assert len(running["prompt"]) == PROMPT_SHOWN and running["prompt"].endswith("…")
    assert uncertain["status"] == "" and uncertain["task_id"] == ""
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", uncertain["submitted_at"])


def test_recent_is_limited_and_filtered(history: History) -> None:
    assert [r["task_id"] for r in history.recent(2)] == ["", "t2"]
    assert [r["task_id"] for r in history.recent(model="image-d")] == ["t1"]
    assert [r["task_id"] for r in history.recent(status="succeeded")] == ["t0"]
    assert history.recent(model="video-a", status="failed") == []
    assert history.recent(0) == []


def test_df_refuses_a_filter_that_does_not_exist(history: History) -> None:
    with pytest.raises(TypeError, match="modle"):
        history.df(modle="video-a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="modle"):
        history.summary(modle="video-a")  # type: ignore[call-arg]


def test_df_reads_as_people_write_numbers_in_a_notebook_and_in_print(history: History) -> None:
    df = history.df()
    shown = df[["model", "duration", "credits", "total_seconds"]]
    page = shown._repr_html_()
    cells = re.findall(r'class="data row\d+ col\d+" >([^<]*)</td>', page)
    assert cells[:8] == ["video-a", "2", "160", "12.3", "image-d", "2", "–", "12.3"]
    assert "2.000000" not in page and "<NA>" not in page
    printed = shown.to_string(index=False).splitlines()
    assert printed[1].split() == ["video-a", "2", "160", "12.3"]
    assert printed[2].split() == ["image-d", "2", "–", "12.3"]
    assert "<NA>" not in repr(df) and "<NA>" not in df.to_string()
    assert df["duration"].dtype == "Float64" and df["credits"].isna().tolist()[1]  # data as is


def test_the_spend_table_and_the_summary_both_show_a_dash_without_a_price(
    history: History,
) -> None:
    summary = history.summary(by="model").to_string().splitlines()
    spend = history.spend(by="model").to_string(index=False).splitlines()
    # credits, unpriced, and as_asked (nothing was measured: unknown, a dash too)
    assert summary[-1].split()[0] == "image-d" and summary[-1].split()[-3:] == ["–", "1", "–"]
    assert spend[1].split()[:3] == ["image-d", "1", "–"]
    assert ">–</td>" in history.spend(by="model")._repr_html_()
