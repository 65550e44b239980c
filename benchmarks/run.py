"""``make bench``: every benchmark, medians printed as tables.

Benchmarks measure speed goals; tests never do (the machines are shared and noisy).
Run one alone with ``python -m benchmarks.bench_<name>``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import print_generic, print_table  # noqa: E402

TITLES = {
    "bench_catalog": "Catalog validation (median per request)",
    "bench_media": "Media synthesis (median per file)",
    "bench_emulator": "Emulator throughput",
    "bench_polling": "Polling: requests per task against completion lag (Pareto tables)",
    "bench_time_to_media": "Time to media: submit to visible, minus the service's processing",
    "bench_history": "History journal",
    "bench_history_lock": "The history held by another process: client.get() (median of 3)",
    "bench_reuse": "Reuse: content-address lookup on a 100,000-task history (median)",
    "bench_embed": "Notebook size: bytes a video result adds when embedded (previews)",
    "bench_widgets": "Studio widgets",
    "bench_card": "A kept result's card: time to draw (median of 5)",
    "bench_client_memory": "Client memory: growth after 2,000 image tasks with 1 MB data: URIs",
    "bench_rating": ("Rating: leaderboards, the next pair, agreement between raters and votes "
                     "needed (median)"),
    "bench_experiment": "Prompt experiments: plan a 72-cell matrix; reopen it (median of 5)",
    "bench_grid": "The one grid at scale: plan 10,000 cells (median of 5)",
    "bench_experiment_10k": ("A 10,000-cell experiment: reopen (median of 3), df (median of 5), "
                             "memory over the run (fresh process)"),
    "bench_scores": "Scorers: each built-in one on a kept 5 s 720p video (median of 5, cold)",
    "bench_gate": "The gate: false alarms on 1,000 simulated A/A experiments (alpha 0.05)",
    "bench_grid_view": "A 1,000-cell image experiment's grid: notebook bytes, time to draw",
}


def main(names: list[str]) -> int:
    import benchmarks

    found = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    chosen = [n for n in found if not names or n in names or n.removeprefix("bench_") in names]
    failed = []
    for name in chosen:
        module = importlib.import_module(f"benchmarks.{name}")
        rows = module.run()
        title = TITLES.get(name, name)
        if hasattr(module, "table"):  # a module that prints its own comparison
            print(f"\n{title}\n{module.table(rows)}")
        elif rows and "value" in rows[0]:
            print_table(title, rows)
        else:
            print_generic(title, rows)
        failed += [str(r.get("name")) for r in rows if r.get("met") is False]
    if failed:
        print(f"\n{len(failed)} goal(s) not met: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
