"""Output plans: sizes, lengths, frame rate, audio, last frame, count, billed seconds, credits.

Expectations come from the interface and docs/spec-decisions.md (the size and price tables of
``test_output_sizes`` and ``test_credits``), never from the catalog itself.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import genlab
from genlab.catalog import (
    DEFAULT_DURATION,
    DEFAULT_FPS,
    MediaInfo,
    OutputPlan,
    plan_output,
)

from ._tables import FIRST, IMAGE_MODELS, MINIMAL, VIDEO_C_EDIT, VIDEO_MODELS, body, img, vid
from .test_credits import PRICE
from .test_output_sizes import OUTPUT_SIZES, SIZE_TABLE, TIERS, _model_for

FPS = 24  # the interface: video-e "output is always 24 fps"; the decisions: all videos


def image_info(width: int, height: int) -> MediaInfo:
    return MediaInfo(kind="image", extension=".png", bytes=10_000, width=width, height=height)


def video_info(width: int, height: int, seconds: float = 4.0) -> MediaInfo:
    return MediaInfo(kind="video", extension=".mp4", bytes=100_000, width=width, height=height,
                     duration=seconds, fps=30.0)


def plan(request_body: dict[str, Any], **inputs: list[MediaInfo]) -> OutputPlan:
    return plan_output(genlab.validate(request_body, warn=False), inputs=inputs or None)


def test_the_defaults_are_the_interfaces() -> None:
    assert DEFAULT_DURATION == 5  # "Default 5" for every model with a duration
    assert DEFAULT_FPS == FPS


# --- sizes: the same tables output_size is pinned against ---------------------------------


@pytest.mark.parametrize(("request_body", "reference", "size"), OUTPUT_SIZES)
def test_plan_size_matches_the_output_size_table(
    request_body: dict[str, Any], reference: tuple[int, int] | None, size: tuple[int, int]
) -> None:
    inputs: dict[str, list[MediaInfo]] = {}
    if reference is not None:
        # The reference an adaptive ratio follows: the first image, else the input video.
        if request_body.get("reference_images"):
            inputs["reference_images"] = [image_info(*reference)]
        else:
            inputs["reference_videos"] = [video_info(*reference)]
    result = plan(request_body, **inputs)
    assert (result.width, result.height) == size


@pytest.mark.parametrize(
    ("ratio", "resolution", "size"),
    [
        (ratio, resolution, size)
        for ratio, sizes in SIZE_TABLE.items()
        for resolution, size in zip(TIERS, sizes, strict=True)
        if size is not None
    ],
)
def test_plan_size_matches_the_decisions_table(ratio: str, resolution: str, size: str) -> None:
    model = _model_for(resolution, ratio)
    assert model is not None
    result = plan(body(model, resolution=resolution, aspect_ratio=ratio))
    assert f"{result.width}x{result.height}" == size


def test_an_adaptive_ratio_follows_the_first_image_before_the_video() -> None:
    request_body = body(
        "video-b", reference_images=[img()], reference_videos=[vid()], resolution="720P"
    )
    result = plan(
        request_body,
        reference_images=[image_info(600, 600)],
        reference_videos=[video_info(1280, 720)],
    )
    assert (result.width, result.height) == (720, 720)


# --- credits and billed seconds: video-a's price table -------------------------------------


@pytest.mark.parametrize("resolution", list(PRICE))
@pytest.mark.parametrize("duration", [2, 5, 17, 30])
def test_video_a_plan_bills_the_price_table(resolution: str, duration: int) -> None:
    result = plan(body("video-a", resolution=resolution, duration=duration))
    assert result.credits == PRICE[resolution] * duration
    assert result.billed_seconds == duration


def test_video_a_default_plan_bills_five_seconds_at_720p() -> None:
    result = plan(MINIMAL["video-a"])
    assert result.billed_seconds == 5 and result.credits == 160 * 5


@pytest.mark.parametrize("model", [m for m in MINIMAL if m != "video-a"])
def test_other_models_plan_no_price(model: str) -> None:
    assert plan(MINIMAL[model]).credits is None


@pytest.mark.parametrize(
    ("request_body", "seconds"),
    [
        (body("video-a", duration=10, resolution="1080P"), None),
        (body("video-a", duration=10, reference_videos=[vid()]), 12.0),
        (body("video-e", reference_videos=[vid("edit_source")]), 7.6),
    ],
)
def test_estimate_credits_is_the_plans_figure(
    request_body: dict[str, Any], seconds: float | None
) -> None:
    inputs = {} if seconds is None else {"reference_videos": [video_info(1280, 720, seconds)]}
    estimate = genlab.estimate_credits(request_body, input_video_seconds=seconds)
    assert estimate == plan(request_body, **inputs).credits


# --- lengths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [m for m in VIDEO_MODELS if m != "video-d"])
def test_videos_last_five_seconds_by_default(model: str) -> None:
    result = plan(MINIMAL[model])
    assert result.duration == 5.0 and result.fps == FPS and result.count == 1


@pytest.mark.parametrize("duration", [3, 8, 15])
def test_videos_last_the_requested_duration(duration: int) -> None:
    assert plan(body("video-f", duration=duration)).duration == duration


@pytest.mark.parametrize(
    ("request_body", "seconds", "expected"),
    [
        # video-e edit: the input video's length, in whole frames at 24 fps.
        (body("video-e", duration=10, reference_videos=[vid("edit_source")]), 7.6, 182 / 24),
        # video-c edit: the input video, at most 15 s.
        (VIDEO_C_EDIT, 20.0, 15.0),
        (VIDEO_C_EDIT, 4.03, 97 / 24),
        # video-d: the motion clip.
        (MINIMAL["video-d"], 7.3, 175 / 24),
    ],
    ids=["video-e-edit", "video-c-edit-capped", "video-c-edit", "video-d-motion"],
)
def test_outputs_that_follow_their_input_last_as_long_as_it(
    request_body: dict[str, Any], seconds: float, expected: float
) -> None:
    result = plan(request_body, reference_videos=[video_info(1280, 720, seconds)])
    assert result.duration == pytest.approx(expected)
    assert round(result.duration * FPS, 9) == round(result.duration * FPS)  # whole frames


def test_motion_control_without_its_clip_plans_the_default_length() -> None:
    assert plan(MINIMAL["video-d"]).duration == 5.0


@pytest.mark.parametrize(("seconds", "billed"), [(7.6, 8), (7.4, 7), (3.0, 3)])
def test_video_e_edits_bill_the_input_rounded(seconds: float, billed: int) -> None:
    request_body = body("video-e", reference_videos=[vid("edit_source")])
    result = plan(request_body, reference_videos=[video_info(1280, 720, seconds)])
    assert result.billed_seconds == billed
    assert plan(request_body).billed_seconds is None  # unknown until the input is probed


# --- audio, last frame, count ------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_body", "audio"),
    [
        (MINIMAL["video-a"], False),
        (body("video-a", generate_audio=True), True),
        (MINIMAL["video-b"], True),  # video-b: generate_audio defaults to true
        (body("video-b", generate_audio=False), False),
        (body("video-e", generate_audio=True), True),
        # video-e: "has no effect when a video is supplied".
        (body("video-e", generate_audio=True, reference_videos=[vid()]), False),
    ],
)
def test_plans_carry_audio_as_the_interface_says(
    request_body: dict[str, Any], audio: bool
) -> None:
    assert plan(request_body).audio is audio


def test_video_b_plans_its_last_frame_when_asked() -> None:
    assert plan(body("video-b", extra_params={"return_last_frame": True})).last_frame
    assert not plan(MINIMAL["video-b"]).last_frame
    assert not plan(body("video-b", reference_images=FIRST)).last_frame


@pytest.mark.parametrize("n", [1, 3, 10])
def test_image_a_plans_n_images(n: int) -> None:
    assert plan(body("image-a", n=n)).count == n


@pytest.mark.parametrize("model", IMAGE_MODELS)
def test_image_plans_have_no_video_facts(model: str) -> None:
    result = plan(MINIMAL[model])
    assert result.count == 1
    assert result.duration is None and result.fps is None
    assert not result.audio and not result.last_frame
    assert result.billed_seconds is None and result.credits is None


def test_a_plan_cannot_be_changed() -> None:
    result = plan(MINIMAL["video-a"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.width = 1  # type: ignore[misc]
