"""Output dimensions for a resolution tier and an aspect ratio.

Videos: the tier is the *shorter* side (720P 16:9 is 1280x720, 9:16 is 720x1280), the other
side is rounded to an even number (H.264 yuv420p needs even sides). Images: the tier is the
*longer* side (1K 16:9 is 1024x576), the other side is rounded to a multiple of 8.
"""

from __future__ import annotations

from genlab.catalog._base import Mode, RequestBase

VIDEO_SHORT_SIDE = {"480P": 480, "720P": 720, "1080P": 1080}
IMAGE_LONG_SIDE = {"512": 512, "1K": 1024, "2K": 2048, "4K": 4096}
MIN_RATIO, MAX_RATIO = 1 / 2.5, 2.5


def parse_ratio(text: str) -> float:
    """``"16:9"`` -> ``1.777...``."""
    width, _, height = text.partition(":")
    return float(width) / float(height)


def video_size(resolution: str, ratio: float) -> tuple[int, int]:
    """Width and height of a video, e.g. ``video_size("720P", 16 / 9) == (1280, 720)``."""
    short = VIDEO_SHORT_SIDE[resolution]
    if ratio >= 1:
        return 2 * round(short * ratio / 2), short
    return short, 2 * round(short / ratio / 2)


def image_size(resolution: str, ratio: float) -> tuple[int, int]:
    """Width and height of an image, e.g. ``image_size("1K", 16 / 9) == (1024, 576)``."""
    long = IMAGE_LONG_SIDE[resolution]
    if ratio >= 1:
        return long, max(8, 8 * round(long / ratio / 8))
    return max(8, 8 * round(long * ratio / 8)), long


def requested_aspect(request: RequestBase) -> str | None:
    """The aspect ratio the request fixes, or None when the output follows its inputs."""
    value = getattr(request, "aspect_ratio", None)
    if value in (None, "adaptive"):
        return None
    mode = request.mode
    if "aspect_ratio" in request.REJECTED_IN_MODE.get(mode, {}):
        return None
    follows = getattr(request, "FOLLOWS_INPUT_VIDEO", {})
    if mode in follows and "aspect_ratio" not in request.model_fields_set:
        return None
    return str(value)


def output_size(
    request: RequestBase, reference_size: tuple[int, int] | None = None
) -> tuple[int, int]:
    """The exact width and height of the request's output.

    Args:
        request: a validated request.
        reference_size: width and height of the input that an adaptive ratio follows (the first
            reference image, or the input video); None when there is none.
    """
    aspect = requested_aspect(request)
    if aspect is not None:
        ratio = parse_ratio(aspect)
    elif reference_size is not None and reference_size[1] > 0:
        ratio = min(MAX_RATIO, max(MIN_RATIO, reference_size[0] / reference_size[1]))
    else:
        ratio = parse_ratio(getattr(request, "DEFAULT_ASPECT", "16:9"))
    resolution = str(getattr(request, "resolution", ""))
    if request.kind == "video":
        return video_size(resolution, ratio)
    return image_size(resolution, ratio)


def billed_seconds(request: RequestBase, input_video_seconds: float | None = None) -> float | None:
    """Seconds billed for a video request (None for images or when it depends on an input)."""
    method = getattr(request, "billed_seconds", None)
    return method(input_video_seconds) if method is not None else None


def credits_for(request: RequestBase, input_video_seconds: float | None = None) -> int | None:
    """Credits charged, where a price is published; None everywhere else (never a guess)."""
    per_second = request.credits_per_second()
    seconds = billed_seconds(request, input_video_seconds)
    if per_second is None or seconds is None:
        return None
    return round(per_second * seconds)


__all__ = [
    "IMAGE_LONG_SIDE",
    "Mode",
    "VIDEO_SHORT_SIDE",
    "billed_seconds",
    "credits_for",
    "image_size",
    "output_size",
    "parse_ratio",
    "requested_aspect",
    "video_size",
]
