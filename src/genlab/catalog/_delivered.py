"""Whether a result is what was asked: the request's planned output (:func:`plan_output`)
against the measured facts of the kept media (:class:`genlab.media.MediaInfo`).

Services clamp silently in the wild (a 15 s request delivered as 10 s, 1080P delivered as
720P, no audio track where one was asked); this is how a person finds out. Each difference is
one short phrase, shown on the result's card and kept in the history.

Example:
    >>> from genlab.catalog import validate
    >>> from genlab.media import MediaInfo
    >>> asked = validate({"model": "video-a", "prompt": "waves", "duration": 10})
    >>> got = MediaInfo(kind="video", width=1280, height=720, duration=5.0, has_audio=False)
    >>> delivery_mismatches(asked, [got])
    ('asked 10 s, got 5.0 s',)
    >>> delivery_mismatches(asked, [MediaInfo(kind="video", width=1280, height=720,
    ...                                       duration=10.0)])
    ()
"""

from __future__ import annotations

from collections.abc import Sequence

from genlab.catalog._base import RequestBase
from genlab.catalog._output import plan_output
from genlab.media import MediaInfo

DURATION_SLACK = 0.25
"""Seconds a video may differ from its planned length and still count as asked (containers
round to whole frames and audio packets)."""
SIZE_SLACK = 0.02
"""Relative difference in width or height still counted as the asked size (a service may
round to a multiple of 16 or 8 pixels)."""
RATIO_SLACK = 0.03
"""Relative difference in aspect ratio still counted as the asked one."""


def delivery_mismatches(request: RequestBase, media: Sequence[MediaInfo]) -> tuple[str, ...]:
    """How ``media`` (the measured result files, in order) differ from what ``request``
    asked for: size, aspect ratio, length, audio and the number of images. Facts a probe
    could not measure are not judged; an empty tuple means "as asked".

    Example:
        >>> from genlab.catalog import MediaInfo, validate
        >>> request = validate({"model": "video-a", "prompt": "a fox", "duration": 4})
        >>> clip = MediaInfo(kind="video", extension=".mp4", bytes=90_000, width=1280, height=720,
        ...                  duration=2.0, fps=24)
        >>> delivery_mismatches(request, [clip])
        ('asked 4 s, got 2.0 s',)
    """
    plan = plan_output(request)
    shown = [m for m in media if m.kind in ("video", "image")]
    if not shown:
        return ()
    found: list[str] = []
    if request.kind == "image" and len(shown) != plan.count:
        found.append(f"asked {plan.count} image{'s' * (plan.count != 1)}, got {len(shown)}")
    first = shown[0]
    width, height = first.width, first.height
    if width and height:
        asked_ratio, got_ratio = plan.width / plan.height, width / height
        if abs(got_ratio - asked_ratio) / asked_ratio > RATIO_SLACK:
            found.append(f"asked {_ratio(plan.width, plan.height)} ({plan.width}×{plan.height}),"
                         f" got {width}×{height}")
        elif abs(width - plan.width) / plan.width > SIZE_SLACK:
            found.append(f"asked {plan.width}×{plan.height}, got {width}×{height}")
    if plan.duration is not None and first.duration is not None:
        if abs(first.duration - plan.duration) > DURATION_SLACK:
            found.append(f"asked {plan.duration:g} s, got {first.duration:.1f} s")
    if request.kind == "video" and first.kind == "video":
        if plan.audio and not first.has_audio:
            found.append("asked for audio, got none")
        elif first.has_audio and not plan.audio:
            found.append("asked no audio, got an audio track")
    return tuple(found)


def _ratio(width: int, height: int) -> str:
    from math import gcd

    d = gcd(width, height) or 1
    return f"{width // d}:{height // d}"


__all__ = ["DURATION_SLACK", "delivery_mismatches"]
