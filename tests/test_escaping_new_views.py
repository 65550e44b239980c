"""Markup from a service or a person never survives into the views added with kept results
and ratings: the record card, a map's grid, and the leaderboard."""

from __future__ import annotations

import pandas as pd

import genlab
from genlab.client import Outcome, TaskRecord
from genlab.report import outcomes_html, record_html

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def test_a_record_card_shows_every_service_text_as_text() -> None:
    record = TaskRecord(task_id=f"t{HOSTILE}", status="failed", model=f"m{HOSTILE}",
                        error={"code": f"C{HOSTILE}", "message": f"why{HOSTILE}"})
    page = record_html(record) + outcomes_html([Outcome(request={}, error=ValueError(HOSTILE))])
    assert "<img" not in page and "<script" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_leaderboard_shows_model_names_as_text() -> None:
    votes = pd.DataFrame({"left_model": [f"a{HOSTILE}", "b"] * 10,
                          "right_model": ["b", f"a{HOSTILE}"] * 10,
                          "answer": ["left", "right"] * 10})
    page = genlab.leaderboard(votes)._repr_html_() or ""
    assert page and "<script" not in page and "<img src=x" not in page
