"""How fast the emulator renders media, cold: medians over repeated runs against goals.

Run it from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_media.py

or collect the rows from another script with ``run()``. Video timings clear the render
cache before every run, so each one pays for encoding its one-second GOP.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from genlab.emulator._render import (
    clear_render_cache,
    render_frame_png,
    render_image,
    render_video,
)

LINES = [
    "demo-video-model",
    "a red fox trotting through fresh snow at dawn, soft golden light, 35mm film grain",
    "1280x720 · 24 fps · seed 7",
]
REPEATS = 9


def _cold(render: Callable[[], bytes]) -> Callable[[], bytes]:
    def run() -> bytes:
        clear_render_cache()
        return render()

    return run


# (name, goal in ms, what to time)
CASES: list[tuple[str, float, Callable[[], bytes]]] = [
    (
        "video 5 s 1280x720 (cold)",
        100.0,
        _cold(lambda: render_video(1280, 720, 5.0, lines=LINES)),
    ),
    (
        "video 15 s 1920x1080 (cold)",
        250.0,
        _cold(lambda: render_video(1920, 1080, 15.0, lines=LINES)),
    ),
    (
        "video 5 s 1280x720 + audio (cold)",
        150.0,
        _cold(lambda: render_video(1280, 720, 5.0, lines=LINES, audio=True)),
    ),
    ("image 1024x1024 png", 20.0, lambda: render_image(1024, 1024, lines=LINES, seed=3)),
    ("cover png 1280x720", 30.0, lambda: render_frame_png(1280, 720, lines=LINES)),
]


def _median_ms(fn: Callable[[], bytes], repeats: int) -> float:
    fn()  # warm up imports, fonts and codec tables; the first call is not what we measure
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def run(repeats: int = REPEATS) -> list[dict[str, object]]:
    """Time every case; one row per case with ``name``, ``median_ms``, ``goal_ms``, ``met``."""
    rows: list[dict[str, object]] = []
    for name, goal, fn in CASES:
        median = _median_ms(fn, repeats)
        rows.append(
            {"name": name, "median_ms": round(median, 1), "goal_ms": goal, "met": median <= goal}
        )
    return rows


def main() -> None:
    rows = run()
    width = max(len(str(row["name"])) for row in rows)
    print(f"{'case':<{width}}  {'median ms':>9}  {'goal ms':>7}  met")
    for row in rows:
        met = "yes" if row["met"] else "no"
        print(f"{row['name']!s:<{width}}  {row['median_ms']:>9}  {row['goal_ms']:>7}  {met}")


if __name__ == "__main__":
    main()
