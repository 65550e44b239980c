"""``make demo``: the main job, end to end, on the embedded emulator.

1. The catalog: each model's example request, its mode and credit estimate; a bad request
   caught before it costs anything.
2. One image and one video generated, downloaded and checked.
3. A small comparison (a few prompts x several models): the summary table and an HTML report.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import genlab
from genlab.history import History

PROMPTS = [
    "A lighthouse on a cliff at dusk, waves below",
    "A paper crane unfolding into a real bird",
]
MODELS = ["image-b", "image-d", "video-a", "video-f"]


def _credits(value: int | None) -> str:
    return f"{value} credits" if value is not None else "price not published"


def show_catalog() -> None:
    """Validate each model's example request and print its mode and credit estimate."""
    print("1. The catalog: one example request per model")
    for name, cls in genlab.CATALOG.items():
        request = genlab.validate(cls.EXAMPLE)
        estimate = _credits(genlab.estimate_credits(request))
        print(f"   {name:8} {request.kind:5} {request.mode.label:34} {estimate}")
    bad = {"model": "video-c", "prompt": "x", "duration": 40, "generate_audio": True}
    try:
        genlab.validate(bad)
    except genlab.InvalidParameterError as exc:
        print("\n   A bad request is caught before it costs anything:")
        print("   " + str(exc).replace("\n", "\n   "))


def generate_two(client: genlab.Client, output: Path) -> None:
    """One image and one video, end to end, saved under ``output``."""
    print("\n2. One image and one video, end to end")
    jobs: list[dict[str, Any]] = [
        {
            "model": "image-a",
            "prompt": "A watercolor map of an imaginary island",
            "resolution": "1K",
            "aspect_ratio": "4:3",
            "quality": "medium",
        },
        {
            "model": "video-a",
            "prompt": "A red fox trots through fresh snow at dawn",
            "resolution": "720P",
            "duration": 4,
            "generate_audio": True,
        },
    ]
    for body in jobs:
        record = client.generate(body, on_update=lambda r: print(f"   {r.model}: {r.status}"))
        paths = client.download(record, output)
        item = record.results[0]
        length = item.duration if isinstance(item, genlab.VideoResult) else None
        seconds = f", {length:g} s" if length else ""
        print(
            f"   {record.model} {record.status} in {record.seconds:.1f} s: "
            f"{item.width}x{item.height}{seconds}, {_credits(genlab.estimate_credits(body))}"
        )
        for path in paths:
            print(f"     saved {path}")


def compare_models(client: genlab.Client, output: Path) -> None:
    """A few prompts across several models; print the summary and write the report."""
    print(f"\n3. A comparison: {len(PROMPTS)} prompts x {len(MODELS)} models")
    result = genlab.compare(
        client,
        prompts=PROMPTS,
        models=MODELS,
        params={"duration": [3, 5]},  # swept; models without a duration ignore it
        max_credits=5_000,
        progress=False,
    )
    print(result.summary().to_string())
    report = result.to_html(output / "comparison.html")
    print(f"\n   HTML report: {report.path.resolve()}")


def run_demo(output: str = "genlab-output", time_scale: float = 0.05) -> int:
    """Run the demo; returns the process exit code."""
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    show_catalog()
    os.environ.pop("GENLAB_BASE_URL", None)  # the demo always runs on the embedded emulator
    history = History(folder / "history.sqlite")
    with genlab.connect(history=history, time_scale=time_scale) as client:
        generate_two(client, folder)
        compare_models(client, folder)
    print(
        f"\n   History of this run: {history.path.resolve()} "
        f"({len(history.df())} tasks; history.df() shows them)"
    )
    history.close()
    return 0
