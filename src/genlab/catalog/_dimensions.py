"""Output geometry and timing, without any request: tiers, sizes, the default length and frame rate.

Videos: the tier is the *shorter* side (720P 16:9 is 1280x720, 9:16 is 720x1280), the other
side is rounded to an even number (H.264 yuv420p needs even sides). Images: the tier is the
*longer* side (1K 16:9 is 1024x576), the other side is rounded to a multiple of 8. Video lengths
are whole frames at :data:`DEFAULT_FPS`.
"""

from __future__ import annotations

DEFAULT_DURATION = 5
"""Seconds of video when a request states none: every model's ``duration`` default, and the
length of an output that follows an input video not yet probed."""

DEFAULT_FPS = 24
"""Frames per second of every generated video (the interface states 24 fps for video-e)."""

VIDEO_SHORT_SIDE = {"480P": 480, "720P": 720, "1080P": 1080}
IMAGE_LONG_SIDE = {"512": 512, "1K": 1024, "2K": 2048, "4K": 4096}
MIN_RATIO, MAX_RATIO = 1 / 2.5, 2.5


def parse_ratio(text: str) -> float:
    """``"16:9"`` -> ``1.777...``.

    Example:
        >>> parse_ratio("4:3")
        1.3333333333333333
    """
    width, _, height = text.partition(":")
    return float(width) / float(height)


def clamp_ratio(width: int, height: int) -> float:
    """The ratio of an input's size, clamped to the accepted 1:2.5 ... 2.5:1.

    Example:
        >>> clamp_ratio(5000, 100)
        2.5
    """
    return min(MAX_RATIO, max(MIN_RATIO, width / height))


def video_size(resolution: str, ratio: float) -> tuple[int, int]:
    """Width and height of a video.

    Example:
        >>> video_size("720P", 16 / 9)
        (1280, 720)
    """
    short = VIDEO_SHORT_SIDE[resolution]
    if ratio >= 1:
        return 2 * round(short * ratio / 2), short
    return short, 2 * round(short / ratio / 2)


def image_size(resolution: str, ratio: float) -> tuple[int, int]:
    """Width and height of an image.

    Example:
        >>> image_size("1K", 16 / 9)
        (1024, 576)
    """
    long = IMAGE_LONG_SIDE[resolution]
    if ratio >= 1:
        return long, max(8, 8 * round(long / ratio / 8))
    return max(8, 8 * round(long * ratio / 8)), long


def whole_frames(seconds: float, fps: int = DEFAULT_FPS) -> float:
    """``seconds`` rounded to a whole number of frames.

    Example:
        >>> whole_frames(4.03)
        4.041666666666667
    """
    return round(seconds * fps) / fps


__all__ = [
    "DEFAULT_DURATION",
    "DEFAULT_FPS",
    "IMAGE_LONG_SIDE",
    "MAX_RATIO",
    "MIN_RATIO",
    "VIDEO_SHORT_SIDE",
    "clamp_ratio",
    "image_size",
    "parse_ratio",
    "video_size",
    "whole_frames",
]
