"""What a request produces, planned once: sizes, lengths, audio, count, billed seconds, credits.

:func:`plan_output` is the one place that turns a validated request (and, where the output
follows them, its probed inputs) into an :class:`OutputPlan`. The emulator renders exactly that
plan; :func:`output_size` and the credit estimate are read from the same functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from genlab.catalog._base import RequestBase
from genlab.catalog._dimensions import (
    DEFAULT_FPS,
    clamp_ratio,
    image_size,
    parse_ratio,
    video_size,
    whole_frames,
)
from genlab.catalog._image import ImageRequest
from genlab.catalog._inputs import input_video_seconds, reference_size
from genlab.catalog._video_base import VideoRequest
from genlab.media import MediaInfo


@dataclass(frozen=True, slots=True)
class OutputPlan:
    """What one accepted request produces. Built by :func:`plan_output`.

    Attributes:
        width, height: pixels of each output.
        duration: seconds of video, a whole number of frames (None for images).
        fps: frames per second of the video (None for images).
        audio: the video carries an audio track.
        last_frame: the last frame is also returned as an image.
        count: how many outputs one call produces (image-a's ``n``; 1 for a video).
        billed_seconds: seconds the service bills; None for images, and while the bill depends
            on an input video that was not given.
        credits: the price, where one is published; None everywhere else (never a guess).
        audio_from_input: the audio track is the input video's own (see
            ``VideoRequest.source_audio_video``), not generated.

    Example:
        >>> from genlab.catalog import plan_output, validate
        >>> plan = plan_output(validate({"model": "video-a", "prompt": "a fox", "duration": 4}))
        >>> plan.width, plan.height, plan.duration, plan.fps, plan.credits
        (1280, 720, 4.0, 24, 640)
    """

    width: int
    height: int
    duration: float | None = None
    fps: int | None = None
    audio: bool = False
    last_frame: bool = False
    count: int = 1
    billed_seconds: float | None = None
    credits: int | None = None
    audio_from_input: bool = False


def plan_output(
    request: RequestBase, *, inputs: Mapping[str, Sequence[MediaInfo]] | None = None
) -> OutputPlan:
    """The outputs a validated request produces, and what they cost.

    Args:
        request: a validated request (see :func:`~genlab.catalog.validate`).
        inputs: the probed reference media, list name -> items in order (as for
            :func:`~genlab.catalog.media_problems_for`). An adaptive ratio follows the first
            reference image (else video); an edit or motion control lasts as long as its input
            video. Without them, the requested (or default) ratio and length are planned.

    Example:
        >>> from genlab.catalog import MediaInfo, plan_output, validate
        >>> plan_output(validate({"model": "video-a", "prompt": "a fox", "duration": 10}))
        OutputPlan(width=1280, height=720, duration=10.0, fps=24, audio=False, last_frame=False, count=1, billed_seconds=10.0, credits=1600, audio_from_input=False)
        >>> edit = validate({"model": "video-e", "prompt": "make it snow",
        ...                  "reference_videos": [{"url": "https://x/a.mp4",
        ...                                        "reference_type": "edit_source"}]})
        >>> clip = MediaInfo(kind="video", extension=".mp4", bytes=1000, width=1280, height=720,
        ...                  duration=7.6, fps=30)
        >>> plan = plan_output(edit, inputs={"reference_videos": [clip]})
        >>> plan.width, plan.height, plan.duration, plan.billed_seconds
        (1280, 720, 7.583333333333333, 8.0)
    """  # noqa: E501
    probed = inputs or {}
    width, height = output_size(request, reference_size(probed))
    seconds = input_video_seconds(request, probed)
    billed = billed_seconds(request, seconds)
    credits = _credits(request, billed)
    if isinstance(request, VideoRequest):
        kept = _kept_audio(request, probed)
        return OutputPlan(
            width,
            height,
            duration=whole_frames(request.output_duration(seconds), DEFAULT_FPS),
            fps=DEFAULT_FPS,
            audio=request.generates_audio or kept,
            audio_from_input=kept,
            last_frame=request.wants_last_frame,
            billed_seconds=billed,
            credits=credits,
        )
    count = request.image_count if isinstance(request, ImageRequest) else 1
    return OutputPlan(width, height, count=count, billed_seconds=billed, credits=credits)


def _kept_audio(request: VideoRequest, probed: Mapping[str, Sequence[MediaInfo]]) -> bool:
    """Whether the output keeps an input video's audio: asked for, and the video has one."""
    index = request.source_audio_video
    videos = probed.get("reference_videos", ())
    return index is not None and index < len(videos) and videos[index].has_audio


def output_size(
    request: RequestBase, reference_size: tuple[int, int] | None = None
) -> tuple[int, int]:
    """The exact width and height of the request's output.

    Args:
        request: a validated request.
        reference_size: width and height of the input that an adaptive ratio follows (the first
            reference image, or the input video); None when there is none.

    Example:
        >>> from genlab.catalog import validate
        >>> output_size(validate({"model": "image-d", "prompt": "x", "resolution": "512",
        ...                       "aspect_ratio": "1:8"}))
        (64, 512)
    """
    aspect = requested_aspect(request)
    if aspect is not None:
        ratio = parse_ratio(aspect)
    elif reference_size is not None and reference_size[1] > 0:
        ratio = clamp_ratio(*reference_size)
    else:
        ratio = parse_ratio(request.DEFAULT_ASPECT)
    resolution = request.resolution_label or ""
    if request.kind == "video":
        return video_size(resolution, ratio)
    return image_size(resolution, ratio)


def requested_aspect(request: RequestBase) -> str | None:
    """The aspect ratio the request fixes, or None when the output follows its inputs."""
    value = request.aspect_label
    if value in (None, "adaptive"):
        return None
    mode = request.mode
    if "aspect_ratio" in request.REJECTED_IN_MODE.get(mode, {}):
        return None
    if mode in request.FOLLOWS_INPUT_VIDEO and "aspect_ratio" not in request.model_fields_set:
        return None
    return value


def billed_seconds(request: RequestBase, input_video_seconds: float | None = None) -> float | None:
    """Seconds billed for a video request (None for images or when it depends on an input)."""
    if isinstance(request, VideoRequest):
        return request.billed_seconds(input_video_seconds)
    return None


def credits_for(request: RequestBase, input_video_seconds: float | None = None) -> int | None:
    """Credits charged, where a price is published; None everywhere else (never a guess)."""
    return _credits(request, billed_seconds(request, input_video_seconds))


def _credits(request: RequestBase, seconds: float | None) -> int | None:
    per_second = request.credits_per_second()
    if per_second is None or seconds is None:
        return None
    return round(per_second * seconds)


__all__ = [
    "OutputPlan",
    "billed_seconds",
    "credits_for",
    "output_size",
    "plan_output",
    "requested_aspect",
]
