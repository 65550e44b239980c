"""How long a result's card takes to draw once its files are kept: the card of a 5 s 720p
video result (``result._repr_html_()``), cold (no preview made yet in this process) and warm.

Two clips: the embedded emulator's own result (H.264 8-bit 4:2:0 at a low bitrate: it plays
everywhere, so it is embedded as it is), and a camera-like clip (see
:mod:`benchmarks.bench_embed`), whose bitrate calls for a display-size preview.

In a Jupyter kernel the client makes that preview when it keeps the result, in the background
(``generate`` does not wait for it). The camera-like clip is kept the same way here, through a
client whose service sends it (the script tells the client it shows cards, as a kernel does),
and measured: ``generate`` itself; the card drawn at once (it waits for the preview being
made); the card once kept (the preview made); and, for comparison, the card of a result whose
preview was never made (kept in an earlier kernel: the card makes it).

Goal: under 0.3 s for a 5 s 720p result's card once kept (median of 5).

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


def _clear() -> None:
    from genlab.media import preview

    with preview._cache_lock:
        preview._cache.clear()


def _made() -> bool:
    from genlab.media import preview

    with preview._cache_lock:
        return bool(preview._cache) and not preview._making


def _service(data: bytes) -> Any:
    """A service whose one video task answers ``data``."""
    import httpx

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.host == "cdn.example":
            return httpx.Response(200, content=data, headers={"content-type": "video/mp4"})
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t-camera", "model": "video-a"})
        return httpx.Response(200, json={
            "task_id": "t-camera", "status": "succeeded", "model": "video-a",
            "videos": [{"url": "https://cdn.example/o/t-camera"}]})

    return httpx.MockTransport(handle)


def _kept(camera: Path, folder: Path) -> list[dict[str, Any]]:
    """The camera-like clip kept through the client, as in a Jupyter kernel."""
    import genlab
    import genlab.client._media as client_media
    from genlab.history import History

    client_media.shows_cards = lambda: True  # as in a Jupyter kernel
    data = camera.read_bytes()
    generating, first, once = [], [], []
    for run in range(RUNS):
        _clear()
        history = History(folder / f"history-{run}.sqlite")
        try:
            with genlab.Client("http://svc", "k", history=history, transport=_service(data),
                               keep=folder / f"kept-{run}", poll_scale=0.01) as client:
                began = time.perf_counter()
                result = client.generate(model="video-a", prompt="waves at dusk", duration=5,
                                         progress=False)
                generating.append(time.perf_counter() - began)
        finally:
            history.close()
        if run % 2 == 0:  # the card at once: it waits for the preview being made
            began = time.perf_counter()
            result._repr_html_()
            first.append(time.perf_counter() - began)
        waited = time.monotonic()
        while not _made():  # the preview made in the background
            if time.monotonic() - waited > 120:
                raise RuntimeError("no preview was made at keep time")
            time.sleep(0.01)
        began = time.perf_counter()
        result._repr_html_()
        once.append(time.perf_counter() - began)
    name = "camera-like 5 s 720p"
    return [
        row(f"generate, {name}, kept",
            statistics.median(generating), "s", None),
        row(f"card, {name}, at once after generate", statistics.median(first), "s",
            None),
        row(f"card, {name}, once kept", statistics.median(once), "s", GOAL),
    ]


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
            rows.append(row("card, emulator's 5 s 720p, cold", _cold(result), "s", GOAL))
            rows.append(row("card, emulator's 5 s 720p, warm", _warm(result), "s", None))
            camera = camera_clip(Path(folder) / "camera.mp4", 1280, 720, 5.0)
            rows.extend(_kept(camera, Path(folder)))
            earlier = result_of(result, result.request, kept=[str(camera)])
            rows.append(row("card, camera-like 5 s 720p, no preview made (cold)",
                            _cold(earlier), "s", None))
            rows.append(row("card, camera-like 5 s 720p, warm", _warm(earlier), "s", None))
        finally:
            os.chdir(here)
    return rows


if __name__ == "__main__":
    print_table("A kept result's card (median of 5)", run())
