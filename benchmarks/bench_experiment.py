"""Prompt experiments: planning and validating a matrix, and reopening a finished one.

A matrix of 3 prompt versions x 4 models x 3 variable sets x 2 seeds (72 cells):

- planning and validating it (every cell filled, validated against its model, priced and
  given its content address; nothing sent). Goal: under 0.5 s.
- reopening it from the history once every cell is done: the same ``genlab.experiment``
  call in a new kernel (plan, find each cell's task, nothing to send) and its ``df`` (tasks,
  media facts and scores read back). Goal: under 1 s.

Medians of 5. Run it::

    .venv/bin/python -m benchmarks.bench_experiment
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from typing import Any

from benchmarks._util import print_table, row

RUNS = 5
PLAN_GOAL = 0.5
REOPEN_GOAL = 1.0
MODELS = ["image-b", "image-c", "image-d", "video-a"]
VARS = {"subject": ["paper kite", "dragon kite", "box kite"], "place": "dunes"}
SEEDS = [1, 2]
KEY = "bench-experiment-key"


def _median(fn: Any) -> float:
    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _versions(history: Any) -> list[Any]:
    from genlab.experiments import prompt

    kite = prompt("A {subject} over {place} at dusk", name="kite", history=history)
    kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
    return [kite, kite2, kite2.revise("A {subject} soaring over {place} at golden hour")]


def _fill(history: Any, cells: list[Any]) -> None:
    """Record every cell as done, as a finished run leaves the history."""
    now = time.time()
    rows, scores = [], {}
    for i, cell in enumerate(cells):
        task_id = f"task_bench_{i:03d}"
        rows.append({
            "task_id": task_id, "model": cell.model, "kind": cell.request.KIND,
            "status": "succeeded",
            "state": "accepted", "tag": "bench-study", "prompt": cell.text, "credits": None,
            "submitted_at": now, "created_at": now, "started_at": now + 1,
            "completed_at": now + 3, "result_count": 1, "request": json.dumps(cell.body),
            "entry_id": f"entry_bench_{i:03d}", "address": cell.address, "paths": "[]",
            "media_width": 1024, "media_height": 1024, "as_asked": 1,
        })
        scores[task_id] = {"sharpness": float(i)}
    history.append_many(rows)
    history.plan_cells("bench-study", [c.row() for c in cells])
    for i, cell in enumerate(cells):
        history.cell_task("bench-study", cell.key, f"task_bench_{i:03d}")
    for task_id, values in scores.items():
        history.save_scores(task_id, values)


def run() -> list[dict[str, Any]]:
    import genlab
    from genlab import emulator
    from genlab.experiments import plan_cells
    from genlab.history import History

    def sharpness(result: Any) -> float:  # never called: every cell is scored already
        raise AssertionError("a reopened experiment scores nothing again")

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        history = History(os.path.join(folder, "history.sqlite"))
        try:
            versions = _versions(history)
            cells = plan_cells(versions, MODELS, VARS, {}, SEEDS)
            assert len(cells) == 72 and all(c.request is not None for c in cells)
            planned = _median(lambda: plan_cells(versions, MODELS, VARS, {}, SEEDS))
            rows.append(row("plan and validate 72 cells", planned, "s", PLAN_GOAL))
            _fill(history, cells)
            with emulator.start(api_key=KEY) as server, genlab.Client(
                server.base_url, KEY, history=history
            ) as client:

                def reopen() -> None:
                    exp = genlab.experiment(client, "bench-study", prompts=versions,
                                            models=MODELS, vars=VARS, seeds=SEEDS,
                                            scorers=[sharpness], quiet=True, progress=False)
                    assert exp.money_line == "72 cells: 72 done earlier, nothing to send"
                    assert exp.df["sharpness"].notna().all()

                reopened = _median(reopen)
                assert not server.ledger()
            rows.append(row("reopen a 72-cell experiment (df included)", reopened, "s",
                            REOPEN_GOAL))
        finally:
            history.close()
    return rows


if __name__ == "__main__":
    print_table("Prompt experiments (median of 5)", run())
