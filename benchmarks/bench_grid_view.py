"""A 1,000-cell image experiment's grid: how many bytes it puts in a notebook, how long it
takes to draw, and the one-file page of all of it.

The matrix: 5 prompt versions x 2 image models x 50 subjects x 2 seeds, each cell a kept
1024x1024 PNG (the emulator's own picture, one per cell), as a finished run leaves the
history. Measured:

- the grid as a notebook shows it (``exp._repr_html_()``, what a cell's output holds):
  its size in MB (goal: at most 3 MB) and the time to draw it, first after the experiment
  is opened (no thumbnail made yet in this process) and again (medians of 5; goal: at most
  1 s for the first);
- the whole grid written as one page (``exp.to_html``): its size in MB and the time.

Run it::

    .venv/bin/python -m benchmarks.bench_grid_view
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._util import print_table, row

RUNS = 5
BYTES_GOAL = 3.0
DRAW_GOAL = 1.0
MODELS = ["image-b", "image-c"]
VARS = {"subject": [f"kite {n}" for n in range(50)], "place": "dunes"}
SEEDS = [1, 2]
KEY = "bench-grid-key"
NAME = "grid-study"


def _versions(history: Any) -> list[Any]:
    from genlab.experiments import prompt

    first = prompt("A {subject} over {place} at dusk", name="kite", history=history)
    made = [first]
    for words in ("soaring", "in fading light", "35 mm grain", "at golden hour"):
        made.append(made[-1].revise(made[-1].template + f", {words}"))
    return made


def _fill(history: Any, cells: list[Any], folder: Path) -> None:
    """Every cell done with its picture kept, as a finished run leaves the history."""
    from genlab.emulator import samples

    now = time.time()
    rows = []
    for i, cell in enumerate(cells):
        task_id = f"task_grid_{i:04d}"
        kept = folder / f"{task_id}.png"
        kept.write_bytes(samples.image(1024, 1024, text=f"cell {i}"))
        rows.append({
            "task_id": task_id, "model": cell.model, "kind": cell.request.KIND,
            "status": "succeeded", "state": "accepted", "tag": NAME, "prompt": cell.text,
            "credits": None, "submitted_at": now, "created_at": now, "started_at": now + 1,
            "completed_at": now + 3, "result_count": 1, "request": json.dumps(cell.body),
            "entry_id": f"entry_grid_{i:04d}", "address": cell.address,
            "paths": json.dumps([str(kept)]), "media_width": 1024, "media_height": 1024,
            "as_asked": 1,
        })
    history.append_many(rows)
    history.plan_cells(NAME, [c.row() for c in cells])
    for i, cell in enumerate(cells):
        history.cell_task(NAME, cell.key, f"task_grid_{i:04d}")


def _forget_thumbnails() -> None:
    from genlab.media import card

    kept = getattr(card, "_THUMBS", None)  # absent before grids drew thumbnails
    if kept is not None:
        with card._THUMBS_LOCK:
            kept.clear()


def run() -> list[dict[str, Any]]:
    import genlab
    from genlab import emulator
    from genlab.experiments import plan_cells
    from genlab.history import History

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        here = Path(folder)
        history = History(os.path.join(folder, "history.sqlite"))
        try:
            versions = _versions(history)
            cells = plan_cells(versions, MODELS, VARS, {}, SEEDS)
            assert len(cells) == 1000 and all(c.request is not None for c in cells)
            _fill(history, cells, here)
            with emulator.start(api_key=KEY) as server, genlab.Client(
                server.base_url, KEY, history=history
            ) as client:
                def opened() -> Any:
                    return genlab.experiment(client, NAME, prompts=versions, models=MODELS,
                                             vars=VARS, seeds=SEEDS, quiet=True,
                                             progress=False)

                first, again, size = [], [], 0
                for _ in range(RUNS):
                    _forget_thumbnails()
                    exp = opened()
                    exp.df  # noqa: B018  # read before the clock starts: the grid is timed
                    began = time.perf_counter()
                    page = exp._repr_html_()
                    first.append(time.perf_counter() - began)
                    began = time.perf_counter()
                    exp._repr_html_()
                    again.append(time.perf_counter() - began)
                    size = len(page.encode("utf-8"))
                rows.append(row("grid of 1,000 image cells in a notebook", size / 1e6, "MB",
                                BYTES_GOAL))
                rows.append(row("draw it, first time (median of 5)",
                                statistics.median(first), "s", DRAW_GOAL))
                rows.append(row("draw it again (median of 5)", statistics.median(again),
                                "s", None))
                began = time.perf_counter()
                written = opened().to_html(here / "out" / "grid.html")
                took = time.perf_counter() - began
                rows.append(row("the whole grid as one page (to_html)",
                                os.path.getsize(written) / 1e6, "MB", None))
                rows.append(row("write that page", took, "s", None))
                assert not server.ledger()
        finally:
            history.close()
    return rows


if __name__ == "__main__":
    print_table("A 1,000-cell image experiment's grid", run())
