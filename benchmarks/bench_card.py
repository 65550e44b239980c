"""How long a result's card takes to draw once its files are kept: the card of a 5 s 720p
video result (``result._repr_html_()``), cold (no preview made yet in this process) and warm.

Two clips: the embedded emulator's own result (H.264 8-bit 4:2:0 at a low bitrate: it plays
everywhere, so it is embedded as it is), and a camera-like clip (see
:mod:`benchmarks.bench_embed`), whose bitrate calls for a display-size preview.

Goal: under 0.3 s for a 5 s 720p result's card once kept (median of 5, cold).

Run it::

    .venv/bin/python -m benchmarks.bench_card
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._util import print_table, row

RUNS = 5
GOAL = 0.3


def _cold(result: Any) -> float:
    from genlab.media import preview

    times = []
    for _ in range(RUNS):
        with preview._cache_lock:
            preview._cache.clear()  # cold: as the first card of a fresh kernel
        began = time.perf_counter()
        result._repr_html_()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _warm(result: Any) -> float:
    result._repr_html_()
    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        result._repr_html_()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def run() -> list[dict[str, Any]]:
    import genlab
    from benchmarks.bench_embed import camera_clip
    from genlab.catalog import result_of

    rows = []
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            with genlab.connect() as client:
                result = client.generate(model="video-a", prompt="waves at dusk", duration=5,
                                         progress=False)
            camera = camera_clip(Path(folder) / "camera.mp4", 1280, 720, 5.0)
            camera_result = result_of(result, result.request, kept=[str(camera)])
            for name, shown in (("emulator's 5 s 720p", result),
                                ("camera-like 5 s 720p", camera_result)):
                cold = _cold(shown)
                rows.append(row(f"card, {name}, cold", cold, "s", GOAL))
                rows.append(row(f"card, {name}, warm", _warm(shown), "s", None))
        finally:
            os.chdir(here)
    return rows


if __name__ == "__main__":
    print_table("A kept result's card (median of 5)", run())
