"""Studio responsiveness, headless: switching models, building forms, live validation.

Goal: switching to a model whose form was already built takes under 30 ms (the median of
many switches back and forth between two built forms). Headless ipywidgets still serialise
every trait change for the (absent) frontend, so this counts the kernel's side of the work.

Run it::

    .venv/bin/python -m benchmarks.bench_widgets
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import genlab
from benchmarks._util import median_seconds, print_table, row

SWITCH_GOAL_MS = 30.0
PAIRS = {
    "video-a <-> video-c": ("video-a", "video-c"),
    "video-e <-> video-b (extra params)": ("video-e", "video-b"),
    "video-a <-> image-a (across kinds)": ("video-a", "image-a"),
}


def run() -> list[dict[str, Any]]:
    from genlab.widgets import Studio

    # No request is ever sent: the Studio only needs the client's history and address.
    client = genlab.Client("http://127.0.0.1:9", "bench-key")
    try:
        started = time.perf_counter()
        studio = Studio(client)
        construct = time.perf_counter() - started
        builds = []
        for name in genlab.CATALOG:
            started = time.perf_counter()
            studio.select(name)
            builds.append(time.perf_counter() - started)
            studio.set(prompt=f"a short prompt for {name}")
        rows = [
            row("Studio() with its first form", construct * 1e3, "ms", None),
            row("first show of a model (build its form), median", statistics.median(builds) * 1e3,
                "ms", None),
        ]
        for label, (a, b) in PAIRS.items():

            def switch(a: str = a, b: str = b) -> None:
                studio.select(a)
                studio.select(b)

            seconds = median_seconds(switch, repeat=15, number=20) / 2
            rows.append(row(f"switch built forms {label}", seconds * 1e3, "ms", SWITCH_GOAL_MS))
        studio.select("video-a")
        prompt = studio.form.fields["prompt"].control  # type: ignore[attr-defined]
        texts = iter(range(10**9))

        def keystroke() -> None:
            prompt.value = f"a fox {next(texts)}"

        seconds = median_seconds(keystroke, repeat=15, number=50)
        rows.append(row("live validation per prompt keystroke (video-a)", seconds * 1e3, "ms",
                        None))
        frame = {"url": "https://example.com/a.png", "reference_type": "first_frame"}

        def mode_flip() -> None:
            studio.set(model="video-c", reference_images=[frame])
            studio.set(reference_images=[])

        seconds = median_seconds(mode_flip, repeat=15, number=10) / 2
        rows.append(row("mode change (video-c first frame on/off)", seconds * 1e3, "ms", None))
        return rows
    finally:
        client.close()


def main() -> None:
    print_table("Studio widgets (median, headless)", run())


if __name__ == "__main__":
    main()
