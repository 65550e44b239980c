"""Media rules checked on probed reference media (MediaInfo): lengths, frame rates,
sizes, formats and aspect ratios."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab.catalog import MediaInfo, media_problems_for

from ._tables import (
    IMG,
    MB,
    VIDEO_C_FF,
    VIDEO_C_REF,
    aud,
    body,
    img,
    vid,
)

# --- media rules -------------------------------------------------------------------------


def video_info(seconds: float, *, width: int = 1280, height: int = 720, fps: float = 24.0,
               fmt: str = "mp4") -> MediaInfo:
    return MediaInfo(kind="video", extension=f".{fmt}", bytes=5 * MB, width=width, height=height,
                     duration=seconds, fps=fps)


def image_info(width: int, height: int, fmt: str = "png") -> MediaInfo:
    return MediaInfo(kind="image", extension=f".{fmt}", bytes=1 * MB, width=width, height=height)


def test_video_a_input_videos_may_total_15_s() -> None:
    request = genlab.validate(body("video-a", reference_videos=[vid(), vid()]))
    assert media_problems_for(request, {"reference_videos": [video_info(7), video_info(8)]}) == []
    problems = media_problems_for(request, {"reference_videos": [video_info(7), video_info(8.5)]})
    assert [p.loc for p in problems] == [("reference_videos",)]
    assert problems[0].message.startswith("video-a: reference_videos last 15.50 s in all")
    assert "15 s" in problems[0].message


def test_video_a_input_plus_output_may_total_30_s() -> None:
    request = genlab.validate(body("video-a", duration=20, reference_videos=[vid()]))
    assert media_problems_for(request, {"reference_videos": [video_info(10)]}) == []
    problems = media_problems_for(request, {"reference_videos": [video_info(10.5)]})
    assert [p.loc for p in problems] == [("duration",)]
    assert problems[0].message.startswith("video-a: input videos (10.50 s) plus the requested")


def test_video_a_each_input_video_lasts_1_to_15_s() -> None:
    request = genlab.validate(body("video-a", reference_videos=[vid()]))
    problems = media_problems_for(request, {"reference_videos": [video_info(0.5)]})
    assert [p.loc for p in problems] == [("reference_videos", 0)]
    assert "at least 1 s" in problems[0].message
    problems = media_problems_for(request, {"reference_videos": [video_info(16)]})
    assert ("reference_videos", 0) in [p.loc for p in problems]


@pytest.mark.parametrize(("fps", "ok"), [(20, False), (23.5, False), (24, True), (60, True),
                                         (61, False)])
def test_video_b_frame_rate_24_to_60(fps: float, ok: bool) -> None:
    request = genlab.validate(body("video-b", reference_videos=[vid()]))
    info = video_info(5, width=720, height=1280, fps=fps)
    problems = media_problems_for(request, {"reference_videos": [info]})
    if ok:
        assert problems == []
    else:
        assert [p.loc for p in problems] == [("reference_videos", 0)]
        assert problems[0].message.startswith("video-b: reference_videos[0] runs at ")
        assert "fps" in problems[0].message


@pytest.mark.parametrize(
    ("extra_params", "seconds", "ok"),
    [
        (None, 12, True),
        ({"character_orientation": "video"}, 12, True),
        ({"character_orientation": "video"}, 30, True),
        ({"character_orientation": "video"}, 31, False),
        ({"character_orientation": "image"}, 10, True),
        ({"character_orientation": "image"}, 12, False),
        (None, 2, False),
    ],
)
def test_video_d_clip_length_depends_on_orientation(
    extra_params: dict[str, Any] | None, seconds: float, ok: bool
) -> None:
    fields = {} if extra_params is None else {"extra_params": extra_params}
    request = genlab.validate(body("video-d", **fields))
    problems = media_problems_for(
        request,
        {"reference_images": [image_info(800, 1200)], "reference_videos": [video_info(seconds)]},
    )
    if ok:
        assert problems == []
    else:
        assert [p.loc for p in problems] == [("reference_videos", 0)]
        assert problems[0].message.startswith(
            f"video-d: reference_videos[0] lasts {seconds:.2f} s"
        )


@pytest.mark.parametrize(
    ("request_body", "side", "ok"),
    [
        (VIDEO_C_FF, 250, False),
        (VIDEO_C_FF, 300, True),
        (VIDEO_C_FF, 350, True),
        (VIDEO_C_REF, 350, False),
        (VIDEO_C_REF, 400, True),
    ],
    ids=["first-frame-250", "first-frame-300", "first-frame-350", "reference-350",
         "reference-400"],
)
def test_video_c_image_size_depends_on_mode(
    request_body: dict[str, Any], side: int, ok: bool
) -> None:
    request = genlab.validate(request_body)
    infos = [image_info(side, side)] * len(request_body["reference_images"])
    problems = media_problems_for(request, {"reference_images": infos})
    if ok:
        assert problems == []
    else:
        assert problems and problems[0].loc == ("reference_images", 0)
        assert problems[0].message.startswith(f"video-c: reference_images[0] is {side}x{side}")


@pytest.mark.parametrize("model", ["video-a", "video-b", "video-e", "image-c"])
def test_an_image_that_is_a_video_is_rejected(model: str) -> None:
    items: list[Any] = [IMG] if model.startswith("image-") else [img()]
    request = genlab.validate(body(model, reference_images=items))
    problems = media_problems_for(request, {"reference_images": [video_info(5)]})
    assert [p.loc for p in problems] == [("reference_images", 0)]
    assert problems[0].message == f"{model}: reference_images[0] is a video, not image"


def test_video_b_audio_clips_total_15_s() -> None:
    request = genlab.validate(body("video-b", reference_images=[img()],
                                   reference_audios=[aud(), aud()]))
    clips = [MediaInfo(kind="audio", extension=".mp3", bytes=MB, duration=8.0)] * 2
    problems = media_problems_for(request, {"reference_audios": clips})
    assert [p.loc for p in problems] == [("reference_audios",)]
    assert problems[0].message.startswith("video-b: reference_audios last 16.00 s in all")


@pytest.mark.parametrize(
    ("width", "height", "ok"),
    [(640, 640, True), (834, 1112, True), (1280, 720, True), (600, 600, False),
     (1920, 1080, False)],
)
def test_video_b_video_pixel_product(width: int, height: int, ok: bool) -> None:
    request = genlab.validate(body("video-b", reference_videos=[vid()]))
    info = video_info(5, width=width, height=height)
    problems = media_problems_for(request, {"reference_videos": [info]})
    assert (problems == []) is ok
    assert all("pixels" in p.message for p in problems)


def test_video_e_video_sides_720_to_2160() -> None:
    request = genlab.validate(body("video-e", reference_videos=[vid()]))
    assert media_problems_for(request, {"reference_videos": [video_info(5)]}) == []
    small = video_info(5, width=640, height=360)
    problems = media_problems_for(request, {"reference_videos": [small]})
    assert [p.loc for p in problems] == [("reference_videos", 0)]
    assert "at least 720 px" in problems[0].message


def test_media_format_and_size() -> None:
    request = genlab.validate(body("video-e", reference_images=[img()]))
    problems = media_problems_for(
        request, {"reference_images": [MediaInfo(kind="image", extension=".webp", bytes=11 * MB,
                                                 width=800, height=800)]}
    )
    text = "\n".join(p.message for p in problems)
    assert "has format webp" in text
    assert "10 MB" in text


def test_a_jpg_is_a_jpeg_and_an_unknown_format_is_named_as_such() -> None:
    request = genlab.validate(body("video-e", reference_images=[img()]))
    assert media_problems_for(request, {"reference_images": [image_info(800, 800, "jpg")]}) == []
    unknown = MediaInfo(kind="image", bytes=MB, width=800, height=800)  # the sniffer knew none
    [problem] = media_problems_for(request, {"reference_images": [unknown]})
    assert problem.message.startswith(
        "video-e: reference_images[0] is in a format genlab does not recognise; video-e accepts")


def test_media_aspect_ratio_limit() -> None:
    request = genlab.validate(body("video-f", reference_images=[img()]))
    assert media_problems_for(request, {"reference_images": [image_info(1000, 400)]}) == []
    problems = media_problems_for(request, {"reference_images": [image_info(1000, 390)]})
    assert ["aspect ratio" in p.message for p in problems] == [True]
