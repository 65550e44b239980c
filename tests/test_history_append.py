"""History.append_many: what is appended reads back the same, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from genlab.history import History

START = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC

# Text that a bulk path must carry through untouched: COPY's separators and escapes, its
# null marker, quotes, other scripts, an empty string (not a missing value).
AWKWARD = ["tab\there", "two\nlines", "back\\slash", "\\N", "'single' \"double\"",
           "r\u00e9sum\u00e9 \u52d5\u753b \U0001f98a", "", "comma, and ; semicolon", "\r\n"]


@pytest.fixture
def history(history_location: str) -> Iterator[History]:
    h = History(history_location)  # SQLite, then PostgreSQL
    yield h
    h.close()


def test_appended_rows_read_back_as_given(history: History) -> None:
    rows = [
        {"entry_id": f"e{i}", "task_id": f"t{i}", "model": "video-a", "kind": "video",
         "mode": "text-to-video", "state": "accepted", "status": "succeeded", "prompt": text,
         "credits": 10**12 + i, "duration": 2.5, "request": json.dumps({"prompt": text}),
         "submitted_at": START + i + 0.125, "completed_at": None}
        for i, text in enumerate(AWKWARD)
    ]
    assert history.append_many(rows) == len(rows)
    found = {r["entry_id"]: r for r in history.query(
        "SELECT entry_id, prompt, credits, duration, request, submitted_at, completed_at, "
        "updated_at, reason FROM tasks")}
    assert len(found) == len(rows)
    for i, text in enumerate(AWKWARD):
        got = found[f"e{i}"]
        assert got["prompt"] == text
        assert json.loads(got["request"]) == {"prompt": text}
        assert (got["credits"], got["duration"]) == (10**12 + i, 2.5)
        assert got["submitted_at"] == START + i + 0.125
        assert got["completed_at"] is None and got["reason"] is None
        assert got["updated_at"] is not None  # filled in when not given


def test_appending_nothing_writes_nothing(history: History) -> None:
    assert history.append_many([]) == 0
    assert history.query("SELECT entry_id FROM tasks") == []


def test_a_batch_that_breaks_a_constraint_appends_none_of_its_rows(history: History) -> None:
    good = {"entry_id": "e1", "model": "video-a", "kind": "video", "mode": "text-to-video",
            "state": "accepted", "submitted_at": START}
    with pytest.raises(Exception):  # noqa: B017  (the driver's own integrity error)
        history.append_many([good, dict(good)])  # the same entry id twice
    assert history.query("SELECT entry_id FROM tasks") == []
