"""Media requirements as data, and the one function that judges probed media against them.

The emulator fetches reference media, measures them with :func:`genlab.media.probe`
(``strict=True``) and asks :func:`media_problems` what is wrong with the facts
(:class:`genlab.media.MediaInfo`); a preflight check on the client side can do the same.
Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from genlab.media import MediaInfo

MediaKind = Literal["image", "video", "audio"]

MB = 1024 * 1024
"""One "MB" of the interface's media rules: a mebibyte (2**20 bytes), the tolerant reading.

Reading "MB" as 10**6 bytes would refuse files the service may well accept; reading it as a
mebibyte accepts everything the stricter reading accepts. Every byte limit, message and cap in
genlab uses this one constant (see docs/spec-decisions.md)."""

DURATION_TOLERANCE = 0.05
"""Seconds a clip's measured duration may pass a duration bound by.

A container's stated length differs from the nominal one by a frame or an audio codec's
priming samples (an AAC track of "3 s" lasts 3.0213 s); 0.05 s absorbs that and nothing a
person would call longer. Applied to every clip, total and input-plus-output bound."""

RESOLUTION_TIERS: tuple[tuple[int, str], ...] = (
    (2160, "2160P"),
    (1440, "1440P"),
    (1080, "1080P"),
    (720, "720P"),
    (480, "480P"),
)
"""Video tiers by the shorter side, largest first."""


def resolution_tier(width: int, height: int) -> str | None:
    """The tier of a video: the largest tier its shorter side reaches (None below 480P).

    The tier names the shorter side, as the output sizes do (720P 16:9 is 1280x720).

    Example:
        >>> resolution_tier(1280, 720), resolution_tier(834, 1112), resolution_tier(1000, 410)
        ('720P', '720P', None)
    """
    short = min(width, height)
    for floor, label in RESOLUTION_TIERS:
        if short >= floor:
            return label
    return None


@dataclass(frozen=True, slots=True)
class MediaRequirements:
    """The rules one kind of reference media must meet for one model.

    ``None`` means the interface states no bound. Aspect ratios are width / height.

    Example:
        >>> rules = MediaRequirements(kind="image", formats=("png", "jpeg"), min_side=300)
        >>> rules.min_side, rules.max_bytes
        (300, None)
    """

    kind: MediaKind
    formats: tuple[str, ...]
    max_bytes: int | None = None
    min_side: int | None = None
    max_side: int | None = None
    min_short_side: int | None = None
    max_long_side: int | None = None
    min_aspect: float | None = None
    max_aspect: float | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    min_duration: float | None = None
    max_duration: float | None = None
    max_total_duration: float | None = None
    min_fps: float | None = None
    min_fps_exclusive: bool = False
    max_fps: float | None = None
    resolutions: tuple[str, ...] | None = None
    allow_data_uri: bool = False

    def describe(self) -> str:
        """One line a person can read, e.g. for a tooltip."""
        parts = [f"{self.kind}: {', '.join(self.formats)}"]
        if self.max_bytes:
            parts.append(f"at most {self.max_bytes // MB} MB")
        if self.min_side or self.max_side:
            parts.append(f"sides {self.min_side or 1} to {self.max_side or 'any'} px")
        if self.min_duration is not None or self.max_duration is not None:
            lo = _num(self.min_duration) if self.min_duration is not None else "0"
            hi = _num(self.max_duration) if self.max_duration is not None else "any"
            parts.append(f"{lo} to {hi} s per clip")
        if self.max_total_duration is not None:
            parts.append(f"{_num(self.max_total_duration)} s in total")
        parts.append("public URL or data: URI" if self.allow_data_uri else "public URL only")
        return "; ".join(parts)


# Format names as probes report them, mapped to the names the interface uses.
_FORMAT_ALIASES = {
    "jpg": "jpeg",
    "mpo": "jpeg",
    "tif": "tiff",
    "mov,mp4,m4a,3gp,3g2,mj2": "mp4",
    "quicktime": "mov",
    "mp3": "mp3",
    "wave": "wav",
}


def normalize_format(name: str) -> str:
    """``JPG`` -> ``jpeg``, ``MOV`` -> ``mov``: one spelling for comparisons."""
    lowered = name.strip().lower()
    return _FORMAT_ALIASES.get(lowered, lowered)


def _num(value: float) -> str:
    return f"{value:g}"


def media_problems(
    model: str, where: str, info: MediaInfo, rules: MediaRequirements
) -> list[str]:
    """Every way ``info`` breaks ``rules``, as messages naming the model and the item.

    Args:
        model: the model name, for the message.
        where: the item's location, e.g. ``reference_videos[0]``.
        info: what the probe found (:func:`genlab.media.probe`).
        rules: what the model requires.

    Example:
        >>> rules = MediaRequirements(kind="image", formats=("png", "jpeg"), min_side=300)
        >>> from genlab.media import MediaInfo
        >>> small = MediaInfo(kind="image", extension=".png", bytes=1_000, width=100, height=100)
        >>> media_problems("video-c", "reference_images[0]", small, rules)
        ['video-c: reference_images[0] is 100x100; width and height must each be at least 300 px']
        >>> print(*media_problems("video-c", "reference_images[0]", MediaInfo(kind="image"), rules))
        video-c: reference_images[0] is in a format genlab does not recognise; video-c accepts png, jpeg
    """  # noqa: E501
    out: list[str] = []

    def bad(text: str) -> None:
        out.append(f"{model}: {where} {text}")

    if info.kind is not None and info.kind != rules.kind:
        bad(f"is {'an' if info.kind[0] in 'aeiou' else 'a'} {info.kind}, not {rules.kind}")
        return out
    allowed = {normalize_format(f) for f in rules.formats}
    accepts = f"{model} accepts {', '.join(rules.formats)}"
    if info.extension is None:
        bad(f"is in a format genlab does not recognise; {accepts}")
    else:
        fmt = normalize_format(info.extension.lstrip("."))
        # mp4 and mov share one container family; accept either where either is allowed.
        if fmt not in allowed and not (fmt in {"mp4", "mov"} and allowed & {"mp4", "mov"}):
            bad(f"has format {fmt}; {accepts}")
    if rules.max_bytes is not None and info.bytes > rules.max_bytes:
        bad(f"is {info.bytes / MB:.1f} MB; the maximum is {rules.max_bytes // MB} MB")
    if info.width is not None and info.height is not None:
        w, h = info.width, info.height
        size = f"{w}x{h}"
        if rules.min_side is not None and min(w, h) < rules.min_side:
            bad(f"is {size}; width and height must each be at least {rules.min_side} px")
        if rules.max_side is not None and max(w, h) > rules.max_side:
            bad(f"is {size}; width and height must each be at most {rules.max_side} px")
        if rules.min_short_side is not None and min(w, h) < rules.min_short_side:
            bad(f"is {size}; the shorter side must be at least {rules.min_short_side} px")
        if rules.max_long_side is not None and max(w, h) > rules.max_long_side:
            bad(f"is {size}; the longer side must be at most {rules.max_long_side} px")
        ratio = w / h if h else 0.0
        lo, hi = rules.min_aspect, rules.max_aspect
        if (lo is not None and ratio < lo - 1e-9) or (hi is not None and ratio > hi + 1e-9):
            bad(f"has aspect ratio {ratio:.2f}:1; it must lie between 1:2.5 and 2.5:1")
        pixels = w * h
        if rules.min_pixels is not None and pixels < rules.min_pixels:
            bad(f"has {pixels} pixels ({size}); at least {rules.min_pixels} are required")
        if rules.max_pixels is not None and pixels > rules.max_pixels:
            bad(f"has {pixels} pixels ({size}); at most {rules.max_pixels} are allowed")
        if rules.resolutions is not None and resolution_tier(w, h) not in rules.resolutions:
            tier = resolution_tier(w, h) or "below 480P"
            bad(
                f"is {size} ({tier} by its shorter side of {min(w, h)} pixels); {model} "
                f"accepts {' or '.join(rules.resolutions)} videos"
            )
    if info.duration is not None:
        d = info.duration
        if rules.min_duration is not None and d < rules.min_duration - DURATION_TOLERANCE:
            bad(f"lasts {d:.2f} s; each clip must last at least {_num(rules.min_duration)} s")
        if rules.max_duration is not None and d > rules.max_duration + DURATION_TOLERANCE:
            bad(f"lasts {d:.2f} s; each clip may last at most {_num(rules.max_duration)} s")
    if info.fps is not None:
        if rules.min_fps is not None:
            too_low = info.fps <= rules.min_fps if rules.min_fps_exclusive else (
                info.fps < rules.min_fps - 0.01
            )
            if too_low:
                word = "above" if rules.min_fps_exclusive else "at least"
                floor = _num(rules.min_fps)
                bad(f"runs at {info.fps:.2f} fps; the frame rate must be {word} {floor}")
        if rules.max_fps is not None and info.fps > rules.max_fps + 0.01:
            bad(f"runs at {info.fps:.2f} fps; the frame rate may be at most {_num(rules.max_fps)}")
    return out
