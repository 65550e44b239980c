"""A result in a real Jupyter kernel (nbclient drives ipykernel, no simulated shell): each
displayed result is exactly one card with its media, in the cell that made it and in any
later cell, and nothing shows by itself twice."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

SETUP = """
import genlab
client = genlab.connect()
"""


def _run(tmp_path: Path, *cells: str) -> list[list[dict[str, Any]]]:
    """Run ``cells`` in a fresh kernel in ``tmp_path``; each cell's outputs."""
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(SETUP), *(nbformat.v4.new_code_cell(c) for c in cells)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}},
    )
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # starts the kernel in tmp_path and shuts it down after
    return [cell.outputs for cell in notebook.cells[1:]]


def _cards(outputs: list[dict[str, Any]]) -> list[str]:
    return [o["data"]["text/html"] for o in outputs
            if "genlab-record" in o.get("data", {}).get("text/html", "")]


def _plain_only(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in outputs if "data" in o and "text/html" not in o["data"]]


@pytest.mark.slow
def test_each_displayed_result_is_one_card_in_a_real_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("GENLAB_")]:
        monkeypatch.delenv(name)  # the kernel inherits the environment: the embedded default
    made, later, both, twice = _run(
        tmp_path,
        'r = client.generate(model="image-b", prompt="a red kite over dunes")',
        "r",
        'v = client.generate(model="video-a", prompt="waves at dusk", duration=5)\nv',
        "display(r)\ndisplay(r)",
    )
    # The cell that made it without showing it: only the wait's line, ended as one line.
    assert _cards(made) == []
    lines = [o["data"]["text/html"] for o in made if "genlab-live" in
             o.get("data", {}).get("text/html", "")]
    assert len(lines) == 1 and "succeeded in" in lines[0]
    assert not [o for o in made if o["output_type"] == "stream" and o["name"] == "stderr"]
    # A later cell: one card, with the image embedded and the prompt.
    (card,) = _cards(later)
    assert card.count("<img src=\"data:image/") == 1 and "a red kite over dunes" in card
    assert _plain_only(later) == []
    # Made and shown in one cell: one card (the video with its poster), no bare repr.
    (video,) = _cards(both)
    assert video.count("<video") == 1 and "genlab-poster" in video and "waves at dusk" in video
    assert _plain_only(both) == []
    # display() twice: two cards.
    assert len(_cards(twice)) == 2


def test_a_result_draws_its_card_outside_ipython(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import genlab

    monkeypatch.chdir(tmp_path)
    with genlab.connect() as client:
        result = client.generate(model="image-b", prompt="a paper kite")
    page = result._repr_html_()
    assert "a paper kite" in page and page.count("<img src=\"data:image/png") == 1
    assert "original: <a href=" in page
