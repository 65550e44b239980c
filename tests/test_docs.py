"""The README's model table is generated from the catalog and must match it exactly."""

from __future__ import annotations

from pathlib import Path

from genlab._docs import BEGIN, END, model_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_model_table_matches_the_catalog() -> None:
    text = README.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == model_table(), (
        "README.md's model table is out of date: replace it with `python -m genlab._docs`"
    )


def test_the_table_lists_every_model_once() -> None:
    import genlab

    table = model_table()
    for name in genlab.CATALOG:
        assert table.count(f"| {name} |") == 1
