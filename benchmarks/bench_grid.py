"""The one grid at scale: planning a 10,000-cell experiment and a 10,000-run comparison.

- a 10,000-cell experiment: 10 prompt versions x 125 variable sets x 4 models x 2 seeds, every
  cell filled, validated against its model, priced and given its content address, and its
  money line written; nothing sent. Goal: under 1 s.
- a 10,032-run comparison: 132 prompts x 4 video models x 25 swept durations (75 runs a
  prompt for the three with a duration, one for the one without), validated and priced, with
  its money line.
  Goal: under 1 s.

Medians of 5. Run it::

    .venv/bin/python -m benchmarks.bench_grid
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks._util import median_seconds, print_table, row

RUNS = 5
GOAL = 1.0
MODELS = ["image-b", "image-d", "video-a", "video-b"]
SEEDS = [1, 2]


def matrix(history: Any) -> tuple[list[Any], dict[str, Any]]:
    """The 10,000-cell matrix's prompt versions (kept in ``history``) and variables; with
    :data:`MODELS` and :data:`SEEDS` it is 10 x 125 x 4 x 2 cells (bench_experiment_10k reuses
    it)."""
    from genlab.experiments import prompt

    first = prompt("A {subject} over {place} at dusk, take {take}", name="kite",
                   history=history)
    versions = [first]
    for n in range(2, 11):
        versions.append(versions[-1].revise(
            f"A {{subject}} over {{place}} at dusk, take {{take}}, draft {n}"))
    variables = {"subject": [f"kite {i}" for i in range(25)],
                 "place": ["dunes", "sea", "hills", "city", "snow"], "take": "one"}
    return versions, variables


def run() -> list[dict[str, Any]]:
    from genlab.comparison import plan
    from genlab.experiments import plan_cells
    from genlab.history import History

    with tempfile.TemporaryDirectory() as folder:
        history = History(Path(folder) / "history.sqlite")
        try:
            versions, variables = matrix(history)
            cells: list[Any] = []

            def experiment() -> None:
                cells[:] = plan_cells(versions, MODELS, variables, {}, SEEDS)
                money = [c.credits for c in cells if c.request is not None]
                assert len(cells) == 10_000, len(cells)
                assert money is not None

            planned = median_seconds(experiment, repeat=RUNS)
        finally:
            history.close()
    prompts = [f"a kite, take {i}" for i in range(132)]
    durations = list(range(2, 27))

    def comparison() -> None:
        grid = plan(prompts, ["video-a", "video-b", "video-c", "video-d"],
                    {"duration": durations})
        assert len(grid.runs) >= 10_000, len(grid.runs)
        assert grid.money_line

    compared = median_seconds(comparison, repeat=RUNS)
    return [
        row("plan a 10,000-cell experiment (validate, price, address)", planned, "s", GOAL),
        row("plan a 10,000-run comparison with its money line", compared, "s", GOAL),
    ]


if __name__ == "__main__":
    print_table("The one grid at scale (median of 5)", run())
