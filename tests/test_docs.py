"""The site's model table (docs/guide/models.md) is generated from the catalog and must match it
exactly."""

from __future__ import annotations

from pathlib import Path

from genlab._docs import BEGIN, END, model_table

MODELS = Path(__file__).resolve().parent.parent / "docs" / "guide" / "models.md"


def test_the_model_table_matches_the_catalog() -> None:
    text = MODELS.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == model_table(), (
        "docs/guide/models.md's model table is out of date: replace it with "
        "`python -m genlab._docs`"
    )


def test_the_table_lists_every_model_once() -> None:
    import genlab

    table = model_table()
    for name in genlab.CATALOG:
        assert table.count(f"| {name} |") == 1
