"""Output sizes: examples, the table of docs/spec-decisions.md and the tier rules."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import CATALOG
from genlab.catalog import output_size

from ._tables import (
    ENUMS,
    FIRST,
    IMG,
    VIDEO_C_EDIT,
    VIDEO_C_FF,
    body,
    vid,
)

# --- output sizes ------------------------------------------------------------------------

OUTPUT_SIZES = [
    # (body, reference_size, (width, height))
    (body("video-a", aspect_ratio="16:9"), None, (1280, 720)),
    (body("video-a", aspect_ratio="9:16"), None, (720, 1280)),
    (body("video-a", aspect_ratio="16:9", resolution="480P"), None, (854, 480)),
    (body("video-a", aspect_ratio="9:16", resolution="480P"), None, (480, 854)),
    (body("video-a", aspect_ratio="1:1", resolution="1080P"), None, (1080, 1080)),
    (body("video-a", aspect_ratio="4:3", resolution="1080P"), None, (1440, 1080)),
    (body("video-a", aspect_ratio="3:4"), None, (720, 960)),
    (body("video-a"), None, (1280, 720)),
    (body("video-a", reference_images=FIRST), (1000, 500), (1440, 720)),
    (body("video-b", aspect_ratio="21:9", resolution="480P"), None, (1120, 480)),
    (body("video-b"), (600, 600), (720, 720)),
    (body("video-b"), (100, 1000), (720, 1800)),
    (body("video-b"), (5000, 100), (1800, 720)),
    (body("video-c"), None, (1920, 1080)),
    (VIDEO_C_FF, (1080, 1920), (1080, 1920)),
    (VIDEO_C_EDIT, (1280, 720), (1920, 1080)),
    (VIDEO_C_EDIT, (720, 720), (1080, 1080)),
    (body("video-d"), (720, 1280), (720, 1280)),
    (body("video-d", resolution="1080P"), None, (1920, 1080)),
    (body("video-e", aspect_ratio="9:16", resolution="1080P"), None, (1080, 1920)),
    (body("video-e", reference_videos=[vid("edit_source")]), (1000, 1000), (720, 720)),
    (body("video-f", aspect_ratio="1:1"), None, (720, 720)),
    (body("image-a", aspect_ratio="16:9"), None, (1024, 576)),
    (body("image-a", aspect_ratio="9:16"), None, (576, 1024)),
    (body("image-a", resolution="2K", aspect_ratio="21:9"), None, (2048, 880)),
    (body("image-a", resolution="4K", aspect_ratio="9:21"), None, (1752, 4096)),
    (body("image-b", aspect_ratio="3:2"), None, (1024, 680)),
    (body("image-b", resolution="4K", aspect_ratio="1:1"), None, (1024, 1024)),
    (body("image-c", resolution="2K", aspect_ratio="4:5"), None, (1640, 2048)),
    (body("image-c"), None, (1024, 1024)),
    (body("image-d", resolution="512", aspect_ratio="1:8"), None, (64, 512)),
    (body("image-d", resolution="4K", aspect_ratio="8:1"), None, (4096, 512)),
    (body("image-d", reference_images=[IMG]), (800, 600), (1024, 768)),
]


@pytest.mark.parametrize(("request_body", "reference", "size"), OUTPUT_SIZES)
def test_output_size(
    request_body: dict[str, Any], reference: tuple[int, int] | None, size: tuple[int, int]
) -> None:
    # image-b's 4K: the size of what it makes (the warning is tested in test_enums)
    assert output_size(genlab.validate(request_body, warn=False), reference) == size


# docs/spec-decisions.md, "Output sizes": ratio -> sizes per tier (None: no model has it).
SIZE_TABLE: dict[str, list[str | None]] = {
    "16:9": ["854x480", "1280x720", "1920x1080", "512x288", "1024x576", "2048x1152", "4096x2304"],
    "9:16": ["480x854", "720x1280", "1080x1920", "288x512", "576x1024", "1152x2048", "2304x4096"],
    "1:1": ["480x480", "720x720", "1080x1080", "512x512", "1024x1024", "2048x2048", "4096x4096"],
    "4:3": ["640x480", "960x720", "1440x1080", "512x384", "1024x768", "2048x1536", "4096x3072"],
    "3:4": ["480x640", "720x960", "1080x1440", "384x512", "768x1024", "1536x2048", "3072x4096"],
    "21:9": ["1120x480", "1680x720", None, "512x216", "1024x440", "2048x880", "4096x1752"],
}
TIERS = ["480P", "720P", "1080P", "512", "1K", "2K", "4K"]


def _model_for(resolution: str, ratio: str) -> str | None:
    """The first model that takes both the tier and the ratio."""
    for model in CATALOG:
        if resolution in ENUMS.get((model, "resolution"), []) and ratio in ENUMS.get(
            (model, "aspect_ratio"), []
        ):
            return model
    return None


@pytest.mark.parametrize(
    ("ratio", "resolution", "size"),
    [
        (ratio, resolution, size)
        for ratio, sizes in SIZE_TABLE.items()
        for resolution, size in zip(TIERS, sizes, strict=True)
        if size is not None
    ],
)
def test_output_size_table_of_the_decisions(ratio: str, resolution: str, size: str) -> None:
    model = _model_for(resolution, ratio)
    assert model is not None
    request = genlab.validate(body(model, resolution=resolution, aspect_ratio=ratio))
    width, height = output_size(request)
    assert f"{width}x{height}" == size


VIDEO_TIER = {"480P": 480, "720P": 720, "1080P": 1080}
IMAGE_TIER = {"512": 512, "1K": 1024, "2K": 2048, "4K": 4096}
SIZE_GRID = [
    (model, resolution, ratio)
    for (model, field), values in ENUMS.items()
    if field == "resolution"
    for resolution in values
    for ratio in ENUMS.get((model, "aspect_ratio"), ["16:9"])
    if ratio != "adaptive"
]


@pytest.mark.parametrize(("model", "resolution", "ratio"), SIZE_GRID)
def test_output_size_follows_the_tier_rules(model: str, resolution: str, ratio: str) -> None:
    fields: dict[str, Any] = {"resolution": resolution}
    if (model, "aspect_ratio") in ENUMS:
        fields["aspect_ratio"] = ratio
    width, height = output_size(genlab.validate(body(model, **fields)))
    w, h = (float(x) for x in ratio.split(":"))
    if model.startswith("video-"):
        assert min(width, height) == VIDEO_TIER[resolution]
        assert width % 2 == 0 and height % 2 == 0
    else:
        assert max(width, height) == IMAGE_TIER[resolution]
        assert width % 8 == 0 and height % 8 == 0
    assert (width >= height) == (w >= h)
    assert abs(width / height - w / h) < 0.05 * (w / h)
