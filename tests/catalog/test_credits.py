"""Credits: video-a's published price; other models have none."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import InvalidParameterError

from ._tables import (
    FIRST_LAST,
    MINIMAL,
    MODE_CASES,
    aud,
    body,
    img,
    vid,
)

# --- credits -----------------------------------------------------------------------------

PRICE = {"480P": 80, "720P": 160, "1080P": 280}  # Limits > Credits (video-a)


@pytest.mark.parametrize("resolution", list(PRICE))
@pytest.mark.parametrize("duration", [2, 5, 17, 30])
def test_video_a_credits(resolution: str, duration: int) -> None:
    request_body = body("video-a", resolution=resolution, duration=duration)
    assert genlab.estimate_credits(request_body) == PRICE[resolution] * duration
    assert genlab.estimate_credits(genlab.validate(request_body)) == PRICE[resolution] * duration


def test_video_a_default_credits() -> None:
    assert genlab.estimate_credits(MINIMAL["video-a"]) == 160 * 5


@pytest.mark.parametrize(
    "extra",
    [
        {"generate_audio": True},
        {"reference_videos": [vid()]},
        {"reference_images": FIRST_LAST},
        {"reference_images": [img()], "reference_videos": [vid()], "reference_audios": [aud()]},
    ],
    ids=["audio", "reference-video", "frames", "references"],
)
def test_video_a_credits_do_not_depend_on_audio_or_references(extra: dict[str, Any]) -> None:
    request_body = body("video-a", duration=10, resolution="1080P", **extra)
    assert genlab.estimate_credits(request_body) == 2800
    assert genlab.estimate_credits(request_body, input_video_seconds=12.0) == 2800


@pytest.mark.parametrize("request_body", [b for b, _ in MODE_CASES if b["model"] != "video-a"])
def test_other_models_have_no_published_price(request_body: dict[str, Any]) -> None:
    assert genlab.estimate_credits(request_body) is None


def test_estimate_credits_validates() -> None:
    with pytest.raises(InvalidParameterError):
        genlab.estimate_credits(body("video-a", duration=31))
