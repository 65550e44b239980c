"""Small helpers shared by the benchmark scripts: medians and a printed table."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any


def median_seconds(fn: Callable[[], Any], *, repeat: int = 7, number: int = 1) -> float:
    """Median wall time of ``number`` calls of ``fn``, over ``repeat`` runs, per call."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def row(name: str, value: float, unit: str, goal: float | None, *, lower_is_better: bool = True
        ) -> dict[str, Any]:
    """One result row; ``met`` compares with the goal."""
    met = None
    if goal is not None:
        met = value <= goal if lower_is_better else value >= goal
    return {"name": name, "value": value, "unit": unit, "goal": goal, "met": met,
            "lower_is_better": lower_is_better}


def print_table(title: str, rows: Sequence[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(f"  {'benchmark':52} {'median':>12} {'goal':>12}  met")
    for r in rows:
        goal = "" if r["goal"] is None else (
            f"{'<=' if r['lower_is_better'] else '>='} {r['goal']:g} {r['unit']}")
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        print(f"  {r['name']:52} {r['value']:>9.3f} {r['unit']:2} {goal:>12}  {met}")


def print_generic(title: str, rows: Sequence[dict[str, Any]]) -> None:
    """Any list of flat dicts as an aligned table."""
    print(f"\n{title}")
    if not rows:
        return
    keys = list(rows[0])
    cells = [[f"{r.get(k):.3f}" if isinstance(r.get(k), float) else str(r.get(k)) for k in keys]
             for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  " + "  ".join(k.ljust(w) for k, w in zip(keys, widths, strict=True)))
    for c in cells:
        print("  " + "  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))
