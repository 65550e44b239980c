"""A request's probed reference media: every rule they break, and what an output plan reads
from them (the size an adaptive ratio follows, the length an edit follows).

Probed media come as a mapping from list name (``reference_videos``, ...) to the probed items in
the list's order, as the emulator (or a preflight check) measured them. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from genlab._errors import ErrorDetail
from genlab.catalog._base import RequestBase
from genlab.catalog._media import DURATION_TOLERANCE, media_problems
from genlab.catalog._parts import Reference
from genlab.media import MediaInfo

Probed = Mapping[str, Sequence[MediaInfo]]


def media_problems_for(request: RequestBase, probed: Probed) -> list[ErrorDetail]:
    """Every way probed reference media break the request's media rules.

    Args:
        request: a validated request.
        probed: list name (``reference_videos``, ...) -> the probed items, in order.

    Example:
        >>> from genlab.catalog import MediaInfo, validate
        >>> request = validate({"model": "video-a", "prompt": "x", "duration": 20,
        ...                     "reference_videos": [{"url": "https://x/a.mp4"}]})
        >>> clip = MediaInfo(kind="video", extension=".mp4", bytes=1000, width=640, height=360,
        ...                  duration=12.0, fps=24)
        >>> print(media_problems_for(request, {"reference_videos": [clip]})[0].message)
        video-a: input videos (12.00 s) plus the requested duration (20 s) exceed 30 s; shorten one of them
    """  # noqa: E501
    name = request.model_name
    out: list[ErrorDetail] = []
    total_input = 0.0
    for list_name, infos in probed.items():
        rules = request.media_requirements(list_name)
        if rules is None:
            continue
        total = 0.0
        for i, info in enumerate(infos):
            for message in media_problems(name, f"{list_name}[{i}]", info, rules):
                out.append(ErrorDetail((list_name, i), message))
            total += info.duration or 0.0
        most = rules.max_total_duration
        if most is not None and total > most + DURATION_TOLERANCE:
            out.append(
                ErrorDetail(
                    (list_name,),
                    f"{name}: {list_name} last {total:.2f} s in all; the total may be at most "
                    f"{rules.max_total_duration:g} s",
                )
            )
        if list_name == "reference_videos":
            total_input = total
    limit = request.MAX_INPUT_PLUS_OUTPUT
    if limit is not None and total_input:
        output = request.requested_duration or 0.0
        if total_input + output > limit + DURATION_TOLERANCE:
            out.append(
                ErrorDetail(
                    ("duration",),
                    f"{name}: input videos ({total_input:.2f} s) plus the requested duration "
                    f"({output:g} s) exceed {limit:g} s; shorten one of them",
                )
            )
    return out


def reference_size(probed: Probed) -> tuple[int, int] | None:
    """The size an adaptive ratio follows: the first reference image, else the first video."""
    for list_name in ("reference_images", "reference_videos"):
        for info in probed.get(list_name, ()):
            if info.width and info.height:
                return info.width, info.height
    return None


def input_video_seconds(request: RequestBase, probed: Probed) -> float | None:
    """The length of the input video an output may follow: the ``edit_source`` video, else the
    first reference video; None without one."""
    videos = probed.get("reference_videos", ())
    if not videos:
        return None
    items = request.references("reference_videos")
    for item, info in zip(items, videos, strict=False):
        if isinstance(item, Reference) and item.role == "edit_source":
            return info.duration
    return videos[0].duration


__all__ = ["Probed", "input_video_seconds", "media_problems_for", "reference_size"]
