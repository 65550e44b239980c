"""How long each built-in scorer takes on a kept 5 s 720p video, cold (its file not yet
decoded in this process), and all of them together (one decode serves every scorer).

The clip is camera-like (see :mod:`benchmarks.bench_embed`): textured, panning, with grain,
H.264 at a camera-like bitrate, so decoding costs what a generated video's does.

Goal: each built-in scorer under 0.5 s on a 5 s 720p video (median of 5, cold).

Wall time depends on what else the machine runs: the table also gives CPU seconds (every
decoder thread counted), which compare across runs on a busy machine, and the one-minute load
average before and after.

The floor: the clip has one keyframe, so every measured frame needs every reference frame
before it; decoding those alone (the scorers' decoder settings, nothing measured) is what no
scorer reading the whole clip at full quality can go under.

Run it::

    .venv/bin/python -m benchmarks.bench_scores
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._util import print_table, row

RUNS = 5
GOAL = 0.5


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)  # this process, all its threads
    return used.ru_utime + used.ru_stime


def _cold(result: Any, names: list[str], *, cpu: bool = False) -> float:
    """Median wall seconds (or CPU seconds) of scoring ``result`` cold."""
    from genlab.media import scores

    times = []
    for _ in range(RUNS):
        scores._clear_cache()  # cold: the file is decoded again
        began, used = time.perf_counter(), _cpu()
        scores.score(result, names)
        times.append(_cpu() - used if cpu else time.perf_counter() - began)
    return statistics.median(times)


def _floor(path: Path, *, cpu: bool = False) -> float:
    """Median wall seconds (or CPU seconds) of decoding the reference frames of ``path`` alone."""
    import av

    times = []
    for _ in range(RUNS):
        began, used = time.perf_counter(), _cpu()
        with av.open(str(path), options={"skip_frame": "all"}) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            stream.codec_context.skip_frame = "NONREF"
            for _frame in container.decode(stream):
                pass
        times.append(_cpu() - used if cpu else time.perf_counter() - began)
    return statistics.median(times)


def run() -> list[dict[str, Any]]:
    from benchmarks.bench_embed import camera_clip
    from genlab.media import MediaInfo, Result
    from genlab.media.scores import SCORERS

    rows = [row("load average (1 min) before", os.getloadavg()[0], "", None)]
    with tempfile.TemporaryDirectory(prefix="genlab-bench-scores-") as folder:
        clip = camera_clip(Path(folder) / "t1.mp4", 1280, 720, 5.0)
        result = Result(
            task_id="t1", status="succeeded", model="video-a", kept=(str(clip),),
            request={"model": "video-a", "prompt": "a harbour at dusk", "duration": 5},
            media=(MediaInfo(kind="video", width=1280, height=720, duration=5.0),),
        )
        for name in SCORERS:
            rows.append(row(f"{name}, 5 s 720p, cold", _cold(result, [name]), "s", GOAL))
        rows.append(row("all six together, 5 s 720p, cold", _cold(result, list(SCORERS)),
                        "s", None))
        rows.append(row("all six together, CPU seconds (all threads)",
                        _cold(result, list(SCORERS), cpu=True), "s", None))
        rows.append(row("motion alone, CPU seconds (all threads)",
                        _cold(result, ["motion"], cpu=True), "s", None))
        rows.append(row("floor: reference frames decoded alone", _floor(clip), "s", None))
        rows.append(row("floor, CPU seconds (all threads)", _floor(clip, cpu=True), "s",
                        None))
    rows.append(row("load average (1 min) after", os.getloadavg()[0], "", None))
    return rows


if __name__ == "__main__":
    print_table("Scorers on a kept 5 s 720p video (median of 5, cold)", run())
