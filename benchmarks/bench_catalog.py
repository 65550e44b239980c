"""Median validation time of a typical request per model (goal: < 30 µs for text-to-video)."""

from __future__ import annotations

from typing import Any

import genlab
from benchmarks._util import median_seconds, print_table, row

TYPICAL: dict[str, dict[str, Any]] = {
    "video-a": {"model": "video-a", "prompt": "A red fox trots through fresh snow at dawn",
                "resolution": "1080P", "duration": 10, "aspect_ratio": "16:9"},
    "video-b (first+last frame)": {
        "model": "video-b", "prompt": "the kite rises",
        "reference_images": [{"url": "https://example.com/a.png", "reference_type": "first_frame"},
                             {"url": "https://example.com/b.png", "reference_type": "last_frame"}]},
    "video-e (multi-shot)": {
        "model": "video-e", "extra_params": {"multi_shot": True, "shot_type": "customize",
                                             "multi_prompt": [
                                                 {"index": 1, "prompt": "a door opens",
                                                  "duration": "2"},
                                                 {"index": 2, "prompt": "a cat walks in",
                                                  "duration": "3"}]}},
    "image-a": {"model": "image-a", "prompt": "A watercolor map", "resolution": "2K",
                "aspect_ratio": "4:3", "quality": "high", "n": 2},
}


def run() -> list[dict[str, Any]]:
    rows = []
    for name, cls in genlab.CATALOG.items():
        body = dict(cls.EXAMPLE)
        goal = 30.0 if genlab.validate(body).mode.value == "text-to-video" else None
        seconds = median_seconds(lambda b=body: genlab.validate(b), repeat=9, number=2000)
        rows.append(row(f"validate {name} example", seconds * 1e6, "µs", goal))
    for name, body in TYPICAL.items():
        seconds = median_seconds(lambda b=body: genlab.validate(b), repeat=9, number=2000)
        goal = 30.0 if name == "video-a" else None
        rows.append(row(f"validate {name}", seconds * 1e6, "µs", goal))
    return rows


def main() -> None:
    print_table("Catalog validation (median per request)", run())


if __name__ == "__main__":
    main()
