"""Shared tables and helpers of the catalog tests.

Every table here is copied from the interface (../shared/spec/service-interface.md) or from
docs/spec-decisions.md, not read back from the catalog, so a test fails when the catalog drifts
from the interface. Where a table must cover the whole catalog, a test checks that it does
(adding a model without adding its rows here fails). Tables used by one test module only live
in that module.
"""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import ErrorDetail, InvalidParameterError, Mode
from genlab.catalog import RequestBase

IMG = "https://example.com/cat.png"
VID = "https://example.com/dance.mp4"
AUD = "https://example.com/voice.mp3"
DATA_IMG = "data:image/png;base64,iVBORw0KGgo="
MB = 1024 * 1024


def img(role: str | None = None, url: str = IMG) -> dict[str, Any]:
    return {"url": url} if role is None else {"url": url, "reference_type": role}


def vid(role: str | None = None, url: str = VID, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"url": url}
    if role is not None:
        item["reference_type"] = role
    return {**item, **extra}


def aud(role: str | None = None, url: str = AUD) -> dict[str, Any]:
    return {"url": url} if role is None else {"url": url, "reference_type": role}


# The smallest valid body of each model.
MINIMAL: dict[str, dict[str, Any]] = {
    "video-a": {"model": "video-a", "prompt": "a fox in snow"},
    "video-b": {"model": "video-b", "prompt": "a fox in snow"},
    "video-c": {"model": "video-c", "prompt": "a fox in snow"},
    "video-d": {"model": "video-d", "reference_images": [img()], "reference_videos": [vid()]},
    "video-e": {"model": "video-e", "prompt": "a fox in snow"},
    "video-f": {"model": "video-f", "prompt": "a fox in snow"},
    "image-a": {
        "model": "image-a", "prompt": "a kite", "resolution": "1K", "aspect_ratio": "1:1",
        "quality": "low",
    },
    "image-b": {"model": "image-b", "prompt": "a kite"},
    "image-c": {"model": "image-c", "prompt": "a kite"},
    "image-d": {"model": "image-d", "prompt": "a kite"},
}
VIDEO_MODELS = [m for m in MINIMAL if m.startswith("video-")]
IMAGE_MODELS = [m for m in MINIMAL if m.startswith("image-")]


def body(model: str, **fields: Any) -> dict[str, Any]:
    """The model's minimal body with ``fields`` added or replaced."""
    return {**MINIMAL[model], **fields}


def errors_of(request_body: Any) -> list[ErrorDetail]:
    with pytest.raises(InvalidParameterError) as caught:
        genlab.validate(request_body)
    exc = caught.value
    assert exc.code == "INVALID_PARAMETER"
    assert exc.status == 400
    assert exc.errors, "an InvalidParameterError must list its problems"
    return exc.errors


def rejected(request_body: Any, *words: str) -> str:
    """Assert the body is refused and every word appears in one of the messages."""
    errors = errors_of(request_body)
    text = "\n".join(e.message for e in errors)
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    return text


def notices_text(request: RequestBase) -> str:
    return "\n".join(request.notices)


def multi_shot(*durations: Any, **extra: Any) -> dict[str, Any]:
    shots = [
        {"index": i, "prompt": f"shot {i}", "duration": d} for i, d in enumerate(durations)
    ]
    return {"multi_shot": True, "multi_prompt": shots, **extra}


# --- tables shared by several modules ----------------------------------------------------

REF_MAX = {  # Limits > Number of reference items
    ("video-a", "reference_images"): 10,
    ("video-a", "reference_videos"): 5,
    ("video-a", "reference_audios"): 5,
    ("video-b", "reference_images"): 9,
    ("video-b", "reference_videos"): 3,
    ("video-b", "reference_audios"): 3,
    ("video-c", "reference_images"): 9,
    ("video-c", "reference_videos"): 1,
    ("video-d", "reference_images"): 1,
    ("video-d", "reference_videos"): 1,
    ("video-e", "reference_images"): 7,
    ("video-e", "reference_videos"): 1,
    ("video-f", "reference_images"): 4,
    ("image-a", "reference_images"): 3,
    ("image-b", "reference_images"): 3,
    ("image-c", "reference_images"): 14,
    ("image-d", "reference_images"): 14,
}

TEN_RATIOS = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
ENUMS: dict[tuple[str, str], list[str]] = {
    ("video-a", "resolution"): ["480P", "720P", "1080P"],
    ("video-a", "aspect_ratio"): ["16:9", "9:16", "1:1", "4:3", "3:4"],
    ("video-b", "resolution"): ["480P", "720P"],
    ("video-b", "aspect_ratio"): ["16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"],
    ("video-c", "resolution"): ["720P", "1080P"],
    ("video-c", "aspect_ratio"): ["16:9", "9:16", "1:1", "4:3", "3:4"],
    ("video-d", "resolution"): ["720P", "1080P"],
    ("video-e", "resolution"): ["720P", "1080P"],
    ("video-e", "aspect_ratio"): ["16:9", "9:16", "1:1"],
    ("video-f", "resolution"): ["720P", "1080P"],
    ("video-f", "aspect_ratio"): ["16:9", "9:16", "1:1"],
    ("image-a", "resolution"): ["1K", "2K", "4K"],
    ("image-a", "aspect_ratio"): [*TEN_RATIOS, "9:21"],
    ("image-a", "quality"): ["low", "medium", "high"],
    ("image-b", "aspect_ratio"): TEN_RATIOS,
    ("image-c", "resolution"): ["1K", "2K", "4K"],
    ("image-c", "aspect_ratio"): TEN_RATIOS,
    ("image-d", "resolution"): ["512", "1K", "2K", "4K"],
    ("image-d", "aspect_ratio"): [*TEN_RATIOS, "1:4", "1:8", "4:1", "8:1"],
}

FIRST = [img("first_frame")]
FIRST_LAST = [img("first_frame"), img("last_frame")]
MODE_CASES: list[tuple[dict[str, Any], Mode]] = [
    (body("video-a"), Mode.TEXT_TO_VIDEO),
    (body("video-a", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-a", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-a", reference_images=[img(), img("asset")], reference_videos=[vid()],
          reference_audios=[aud()]), Mode.REFERENCE),
    (body("video-a", reference_videos=[vid()]), Mode.REFERENCE),
    (body("video-a", reference_videos=[vid()], reference_audios=[aud()]), Mode.REFERENCE),
    (body("video-b"), Mode.TEXT_TO_VIDEO),
    (body("video-b", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-b", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-b", reference_images=[img()] * 9), Mode.REFERENCE),
    (body("video-b", reference_images=[img()], reference_videos=[vid()] * 3,
          reference_audios=[aud()] * 3), Mode.REFERENCE),
    (body("video-b", reference_videos=[vid("edit_source")]), Mode.VIDEO_EDIT),
    (body("video-b", reference_videos=[vid(), vid("edit_source"), vid()],
          reference_images=[img()], reference_audios=[aud()], duration=10,
          aspect_ratio="21:9"), Mode.VIDEO_EDIT),
    (body("video-c"), Mode.TEXT_TO_VIDEO),
    (body("video-c", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-c", reference_images=[img()] * 9, aspect_ratio="9:16"), Mode.REFERENCE),
    (body("video-c", reference_videos=[vid("edit_source")]), Mode.VIDEO_EDIT),
    (body("video-c", reference_videos=[vid("edit_source")], reference_images=[img()] * 5,
          extra_params={"audio_setting": "origin"}), Mode.VIDEO_EDIT),
    (body("video-d"), Mode.MOTION_CONTROL),
    (body("video-d", prompt="she dances", resolution="1080P", generate_audio=True,
          extra_params={"character_orientation": "image"}), Mode.MOTION_CONTROL),
    (body("video-e"), Mode.TEXT_TO_VIDEO),
    (body("video-e", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-e", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-e", reference_images=[img()] * 7), Mode.REFERENCE),
    (body("video-e", reference_videos=[vid()], reference_images=[img()] * 4), Mode.REFERENCE),
    (body("video-e", reference_videos=[vid("edit_source")]), Mode.VIDEO_EDIT),
    (body("video-e", reference_videos=[vid("edit_source")], reference_images=[img()] * 4),
     Mode.VIDEO_EDIT),
    ({"model": "video-e", "extra_params": multi_shot("3", 2)}, Mode.MULTI_SHOT),
    (body("video-e", extra_params={"multi_shot": True}), Mode.MULTI_SHOT),
    (body("video-f"), Mode.TEXT_TO_VIDEO),
    (body("video-f", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-f", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-f", reference_images=[img()] * 4), Mode.REFERENCE),
    ({"model": "video-f", "extra_params": multi_shot("2.5", "2.5")}, Mode.MULTI_SHOT),
    (body("video-f", reference_images=FIRST, extra_params=multi_shot(5)), Mode.MULTI_SHOT),
    *[
        case
        for m in IMAGE_MODELS
        for case in [
            (body(m), Mode.TEXT_TO_IMAGE),
            (body(m, reference_images=[IMG]), Mode.IMAGE_TO_IMAGE),
            (body(m, reference_images=[{"url": IMG}, DATA_IMG]), Mode.IMAGE_TO_IMAGE),
        ]
    ],
]


# video-c in first-frame, reference and video-edit mode (rules, output sizes, media rules)
VIDEO_C_FF = body("video-c", reference_images=FIRST)
VIDEO_C_REF = body("video-c", reference_images=[img(), img()])
VIDEO_C_EDIT = body("video-c", reference_videos=[vid("edit_source")])
