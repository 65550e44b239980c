"""Combination rules: frames, assets, audio and editing together, and the per-model rules of
video-c, video-d and video-e."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import Mode

from ._tables import (
    FIRST,
    FIRST_LAST,
    IMG,
    VIDEO_C_EDIT,
    VIDEO_C_FF,
    VIDEO_C_REF,
    aud,
    body,
    errors_of,
    img,
    notices_text,
    rejected,
    vid,
)

# --- combination rules -------------------------------------------------------------------

FRAME_MODELS = ["video-a", "video-b", "video-e", "video-f"]


@pytest.mark.parametrize("model", [*FRAME_MODELS, "video-c"])
def test_frames_cannot_be_mixed_with_asset_images(model: str) -> None:
    errors = errors_of(body(model, reference_images=[img("first_frame"), img()]))
    assert [e.loc for e in errors] == [("reference_images",)]
    assert errors[0].message.startswith(f"{model}: frame inputs (first_frame, last_frame) "
                                        "cannot be mixed with asset references")


@pytest.mark.parametrize("model", ["video-a", "video-b"])
@pytest.mark.parametrize(
    "extra",
    [{"reference_videos": [vid()]}, {"reference_audios": [aud()]}],
    ids=["asset-video", "audio"],
)
def test_frames_cannot_be_mixed_with_asset_videos_or_audios(
    model: str, extra: dict[str, Any]
) -> None:
    rejected(body(model, reference_images=FIRST_LAST, **extra), model, "cannot be mixed")


@pytest.mark.parametrize("model", FRAME_MODELS)
def test_last_frame_needs_a_first_frame(model: str) -> None:
    errors = errors_of(body(model, reference_images=[img("last_frame")]))
    assert [e.message for e in errors] == [f"{model}: a last_frame requires a first_frame"]


@pytest.mark.parametrize("model", [*FRAME_MODELS, "video-c"])
def test_one_first_frame_only(model: str) -> None:
    rejected(
        body(model, reference_images=[img("first_frame"), img("first_frame")]),
        model, "one first_frame",
    )


@pytest.mark.parametrize("model", FRAME_MODELS)
def test_one_last_frame_only(model: str) -> None:
    rejected(
        body(model, reference_images=[img("first_frame"), img("last_frame"), img("last_frame")]),
        model, "one last_frame",
    )


@pytest.mark.parametrize("model", ["video-a", "video-b"])
def test_audio_cannot_come_alone(model: str) -> None:
    errors = errors_of(body(model, reference_audios=[aud()]))
    assert [e.loc for e in errors] == [("reference_audios",)]
    assert errors[0].message == (
        f"{model}: reference_audios need at least one reference image or reference video"
    )


@pytest.mark.parametrize("model", ["video-a", "video-b"])
@pytest.mark.parametrize("companion", ["reference_images", "reference_videos"])
def test_audio_with_an_asset_image_or_video_is_accepted(model: str, companion: str) -> None:
    item = img() if companion == "reference_images" else vid()
    request = genlab.validate(body(model, reference_audios=[aud()], **{companion: [item]}))
    assert request.mode is Mode.REFERENCE


@pytest.mark.parametrize("model", ["video-b", "video-c", "video-e"])
def test_frames_cannot_be_combined_with_editing(model: str) -> None:
    rejected(
        body(model, reference_images=FIRST, reference_videos=[vid("edit_source")]),
        model, "cannot be combined with video editing",
    )


def test_video_b_only_one_video_to_edit() -> None:
    rejected(
        body("video-b", reference_videos=[vid("edit_source"), vid("edit_source")]),
        "video-b: only one video can be marked edit_source",
    )


# video-c ---------------------------------------------------------------------------------


def test_video_c_aspect_ratio_in_first_frame_mode_is_the_interfaces_example() -> None:
    errors = errors_of({**VIDEO_C_FF, "aspect_ratio": "16:9"})
    assert [e.loc for e in errors] == [("aspect_ratio",)]
    assert errors[0].message.startswith(
        "video-c: aspect_ratio is not accepted in image-to-video, first frame mode "
        "(the output follows the first frame)"
    )


@pytest.mark.parametrize(
    ("request_body", "aspect_ok", "duration_ok"),
    [
        (body("video-c"), True, True),
        (VIDEO_C_REF, True, True),
        (VIDEO_C_FF, False, True),
        (VIDEO_C_EDIT, False, False),
    ],
    ids=["text-to-video", "reference", "first-frame", "video-edit"],
)
def test_video_c_aspect_ratio_and_duration_per_mode(
    request_body: dict[str, Any], aspect_ok: bool, duration_ok: bool
) -> None:
    for field, value, ok in (("aspect_ratio", "9:16", aspect_ok), ("duration", 8, duration_ok)):
        with_field = {**request_body, field: value}
        if ok:
            assert genlab.validate(with_field).to_body()[field] == value
        else:
            errors = errors_of(with_field)
            assert [e.loc for e in errors] == [(field,)]
            assert errors[0].message.startswith(f"video-c: {field} is not accepted in ")
            assert errors[0].message.endswith("; remove it")


def test_video_c_edit_lists_aspect_ratio_and_duration_together() -> None:
    errors = errors_of({**VIDEO_C_EDIT, "aspect_ratio": "1:1", "duration": 5})
    assert [e.loc for e in errors] == [("aspect_ratio",), ("duration",)]


@pytest.mark.parametrize(("count", "accepted"), [(n, n <= 5) for n in range(7)])
def test_video_c_edit_takes_0_to_5_asset_images(count: int, accepted: bool) -> None:
    request_body = {**VIDEO_C_EDIT, "reference_images": [img()] * count}
    if accepted:
        assert genlab.validate(request_body).mode is Mode.VIDEO_EDIT
    else:
        rejected(request_body, "video-c: at most 5 asset images may accompany a reference video")


@pytest.mark.parametrize(
    ("images", "mode"),
    [([], Mode.TEXT_TO_VIDEO), (FIRST, Mode.FIRST_FRAME), ([img()] * 9, Mode.REFERENCE)],
)
def test_video_c_asset_videos_are_ignored(images: list[Any], mode: Mode) -> None:
    request = genlab.validate(body("video-c", reference_images=images, reference_videos=[vid()]))
    assert request.mode is mode
    assert "asset reference_videos are ignored and do not trigger editing" in request.notices


@pytest.mark.parametrize("value", ["auto", "origin"])
def test_video_c_audio_setting(value: str) -> None:
    assert genlab.validate({**VIDEO_C_EDIT, "extra_params": {"audio_setting": value}}).notices == ()
    request = genlab.validate(body("video-c", extra_params={"audio_setting": value}))
    assert "only takes effect in video-edit mode" in notices_text(request)


def test_video_c_audio_setting_enum() -> None:
    rejected(
        {**VIDEO_C_EDIT, "extra_params": {"audio_setting": "mute"}},
        "video-c", "extra_params.audio_setting", "'mute'",
    )


# video-d ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("images", "videos"),
    [(0, 0), (1, 0), (0, 1)],
)
def test_video_d_needs_exactly_one_image_and_one_video(images: int, videos: int) -> None:
    request_body: dict[str, Any] = {"model": "video-d", "prompt": "dance"}
    if images:
        request_body["reference_images"] = [img()] * images
    if videos:
        request_body["reference_videos"] = [vid()] * videos
    text = rejected(request_body, "video-d", "exactly 1 reference image")
    assert f"got {images} image(s) and {videos} video(s)" in text


@pytest.mark.parametrize(
    "field", ["duration", "aspect_ratio", "reference_audios", "video_mode"]
)
def test_video_d_does_not_take(field: str) -> None:
    rejected(body("video-d", **{field: 5}), "video-d", f"{field} is not accepted by video-d")


@pytest.mark.parametrize("orientation", ["video", "image"])
def test_video_d_character_orientation(orientation: str) -> None:
    request = genlab.validate(
        body("video-d", extra_params={"character_orientation": orientation})
    )
    assert request.character_orientation == orientation  # type: ignore[attr-defined]


def test_video_d_character_orientation_enum() -> None:
    rejected(
        body("video-d", extra_params={"character_orientation": "side"}),
        "video-d", "extra_params.character_orientation", "'side'",
    )


# video-e ---------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["asset", "edit_source"])
@pytest.mark.parametrize(("count", "accepted"), [(0, True), (4, True), (5, False)])
def test_video_e_up_to_4_asset_images_with_a_video(role: str, count: int, accepted: bool) -> None:
    request_body = body("video-e", reference_videos=[vid(role)], reference_images=[img()] * count)
    if accepted:
        genlab.validate(request_body)
    else:
        errors = errors_of(request_body)
        assert [e.message for e in errors] == [
            "video-e: at most 4 asset images may accompany a reference video; got 5"
        ]


@pytest.mark.parametrize("role", ["asset", "edit_source"])
@pytest.mark.parametrize("images", [FIRST, FIRST_LAST], ids=["first", "first-last"])
def test_video_e_frames_cannot_come_with_a_video(role: str, images: list[Any]) -> None:
    rejected(
        body("video-e", reference_videos=[vid(role)], reference_images=images),
        "video-e", "first_frame/last_frame cannot be combined with",
    )


def test_video_e_edit_ignores_duration_and_bills_on_the_input() -> None:
    request = genlab.validate(body("video-e", reference_videos=[vid("edit_source")], duration=9))
    assert request.mode is Mode.VIDEO_EDIT
    assert "duration is ignored in video edit mode" in notices_text(request)
    assert request.to_body()["duration"] == 9
    assert request.billed_seconds(7.6) == 8  # type: ignore[attr-defined]
    assert request.billed_seconds(7.4) == 7  # type: ignore[attr-defined]
    assert request.billed_seconds() is None  # type: ignore[attr-defined]
    assert genlab.estimate_credits(request, input_video_seconds=7.6) is None


def test_video_e_audio_has_no_effect_with_a_video() -> None:
    with_video = genlab.validate(body("video-e", generate_audio=True, reference_videos=[vid()]))
    assert not with_video.generates_audio  # type: ignore[attr-defined]
    alone = genlab.validate(body("video-e", generate_audio=True))
    assert alone.generates_audio  # type: ignore[attr-defined]
    edit = genlab.validate(
        body("video-e", generate_audio=True, reference_videos=[vid("edit_source")])
    )
    assert "generate_audio is ignored in video edit mode" in notices_text(edit)


@pytest.mark.parametrize("value", [True, False, "yes", "no", None])
def test_video_e_keep_original_sound_on_the_video_item(value: Any) -> None:
    sent = genlab.validate(
        body("video-e", reference_videos=[vid("edit_source", keep_original_sound=value)])
    ).to_body()
    assert sent["reference_videos"][0]["keep_original_sound"] == value
    assert genlab.validate(sent).to_body() == sent


@pytest.mark.parametrize("value", [1, 0, "true", "maybe", ["yes"]])
def test_video_e_keep_original_sound_values(value: Any) -> None:
    errors = errors_of(body("video-e", reference_videos=[vid(keep_original_sound=value)]))
    assert [e.loc for e in errors] == [("reference_videos", 0, "keep_original_sound")]
    assert errors[0].message == (
        "video-e: reference_videos[0].keep_original_sound must be true, false, 'yes' or 'no' "
        f"(got {value!r})"
    )


@pytest.mark.parametrize(
    "request_body",
    [
        body("video-e", keep_original_sound=True),
        body("video-e", reference_images=[img(), {"url": IMG, "keep_original_sound": True}]),
        body("video-b", reference_videos=[vid(keep_original_sound=True)]),
    ],
    ids=["top-level", "image-item", "other-model"],
)
def test_keep_original_sound_only_on_video_e_videos(request_body: dict[str, Any]) -> None:
    rejected(request_body, request_body["model"], "keep_original_sound")
