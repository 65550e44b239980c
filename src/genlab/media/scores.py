"""Scorers: numbers measured on a kept result, to sort and compare generations by.

A scorer is a function of a kept :class:`~genlab.Result` returning a float, or None when it
does not apply (a still image has no motion) or there is nothing to measure (nothing kept).
The built-in ones need no model weights and no network; they read the kept files with PyAV
(videos) or Pillow (images) and compute with numpy:

============  =================================================================================
``as_asked``  1.0 when the measured media match the request, 0.0 when not, None when unknown
``motion``    mean absolute change between consecutive frames, 0..1: a still video is near 0
``flicker``   VBench's temporal flickering score, 0..1: 1 is no change between frames
``frozen``    share of frames that repeat the one before, 0..1
``black``     share of black frames (an image: 1.0 when it is black, else 0.0)
``sharpness`` variance of the Laplacian of the image, or the mean over sampled video frames
============  =================================================================================

A video is decoded once for all the scorers that need it (the measures are kept for the last
few files, by path, size and modification time), its frames downscaled to
:data:`WORK_WIDTH` px wide; at most :data:`MAX_FRAMES` frames are measured (pairs of
consecutive frames spread over the clip when it has more). A result with several media files
(an image task asking for four) scores the mean of its files; covers and last frames are not
scored.

Any function of a result plugs in beside them by name (its ``__name__``):
:func:`score` never lets a scorer break the caller (one that raises scores None, with a
logged warning).

This module is for the views and experiments, never the client (PyAV, Pillow and numpy load
only when something is scored).

Example:
    >>> r = Result(task_id="t1", status="succeeded", model="image-b")
    >>> score(r, ["as_asked", "motion"])
    {'as_asked': None, 'motion': None}
    >>> def prompt_words(result):
    ...     return len((result.prompt or "").split())
    >>> score(r, ["sharpness", prompt_words])
    {'sharpness': None, 'prompt_words': 0.0}
"""

from __future__ import annotations

import io
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from genlab.media._result import Result
from genlab.media._sniff import SNIFF_BYTES, sniff
from genlab.media._storage import is_remote, media_name, read_media

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BLACK_FRAME_SHARE",
    "BLACK_PIXEL_LEVEL",
    "FROZEN_DIFFERENCE",
    "LOWER_IS_BETTER",
    "MAX_FRAMES",
    "SCORERS",
    "SHARPNESS_WIDTH",
    "WORK_WIDTH",
    "Scorer",
    "as_asked",
    "black",
    "flicker",
    "frozen",
    "motion",
    "resolve",
    "score",
    "sharpness",
]

logger = logging.getLogger("genlab")

Scorer = Callable[[Result], "float | int | bool | None"]
"""A function of a kept result returning a number, or None when it does not apply."""

WORK_WIDTH = 160
"""Frames are compared at most this many pixels wide (motion, flicker, frozen, black)."""
SHARPNESS_WIDTH = 512
"""Sharpness is measured at most this wide, so results of different sizes compare fairly."""
MAX_FRAMES = 48
"""At most this many frames of a video are measured; a longer clip is sampled in pairs of
consecutive frames spread over its length."""
SHARPNESS_FRAMES = 5
"""How many frames, spread over a video, its sharpness is the mean of (of a sampled clip,
frames among the measured ones)."""
FROZEN_DIFFERENCE = 0.5
"""A frame repeats the one before when their mean absolute grey difference (0..255, at
:data:`WORK_WIDTH`) is under this: a re-encoded copy still counts, the slowest pan does not."""
BLACK_PIXEL_LEVEL = 0.10
"""A pixel is black under this share of full brightness (ffmpeg ``blackdetect``'s ``pix_th``)."""
BLACK_FRAME_SHARE = 0.98
"""A frame is black when at least this share of its pixels is (``blackdetect``'s
``picture_black_ratio_th``)."""

_CACHED = 32
_BOXED = frozenset({"video/mp4", "video/quicktime"})  # frame count, rate, start in boxes
_LOOP_FILTER = "noref"  # FFmpeg's skip_loop_filter: deblock every frame but non-reference ones
_GREY = (0.299, 0.587, 0.114)  # ITU-R BT.601 luma


@dataclass(frozen=True, slots=True)
class _Measures:
    """What the built-in scorers read from one media file (numbers only, so caching is
    cheap): per pair of consecutive frames, the mean absolute difference in RGB and in grey
    (0..255); per frame, whether it is black; per sampled frame, the Laplacian's variance."""

    video: bool
    rgb_differences: tuple[float, ...]
    grey_differences: tuple[float, ...]
    black: tuple[bool, ...]
    sharpness: tuple[float, ...]


_NOTHING = _Measures(video=False, rgb_differences=(), grey_differences=(), black=(),
                     sharpness=())

_cache: OrderedDict[tuple[Any, ...], _Measures] = OrderedDict()
_cache_lock = threading.Lock()


# --- the built-in scorers ----------------------------------------------------------------


def as_asked(result: Result) -> float | None:
    """1.0 when the measured media match the request (``result.as_asked``), 0.0 when they
    differ (``result.mismatches`` says how), None when there is nothing to compare."""
    asked = result.as_asked
    return None if asked is None else float(asked)


def motion(result: Result) -> float | None:
    """How much a video moves: the mean absolute difference between consecutive frames,
    downscaled to grey, over 255 (0..1). A still video scores near 0, a busy scene a few
    hundredths, a cut to a different picture every frame far more. None for an image."""
    return _mean_of_files(result, _motion)


def flicker(result: Result) -> float | None:
    """VBench's temporal flickering score (Huang et al., "VBench: Comprehensive Benchmark
    Suite for Video Generative Models", CVPR 2024, section 3.1, Temporal Flickering): the mean
    absolute difference between each pair of consecutive frames, over every RGB pixel
    (0..255), averaged over the pairs, then ``(255 - MAE) / 255``. 1.0 is no change between
    frames; a clip alternating bright and dark frames scores low.

    VBench applies it to videos of static scenes, where any change is flicker; on a moving
    scene motion lowers it too (read it beside :func:`motion`). Measured here on frames
    downscaled to :data:`WORK_WIDTH` px, which leaves out sensor-like grain. None for an
    image."""
    return _mean_of_files(result, _flicker)


def frozen(result: Result) -> float | None:
    """The share of a video's frames that repeat the one before (0..1; see
    :data:`FROZEN_DIFFERENCE`): a still or stalled video scores near 1, one whose frame rate
    was doubled by repeating frames about 0.5. None for an image."""
    return _mean_of_files(result, _frozen)


def black(result: Result) -> float | None:
    """The share of black frames (0..1), as ffmpeg's ``blackdetect`` judges a frame (see
    :data:`BLACK_PIXEL_LEVEL`, :data:`BLACK_FRAME_SHARE`); an image scores 1.0 when it is
    black, else 0.0."""
    return _mean_of_files(result, _black)


def sharpness(result: Result) -> float | None:
    """The variance of the Laplacian (the 4-neighbour kernel, as OpenCV's
    ``cv2.Laplacian(grey, CV_64F).var()``) of the image in grey, 0..255, at most
    :data:`SHARPNESS_WIDTH` px wide; for a video, its mean over frames spread over the clip.
    Higher is sharper; a blurred or out-of-focus picture scores lower than the same picture
    sharp. Compare results of one kind of content: a plain sky scores low however sharp."""
    return _mean_of_files(result, _sharpness)


SCORERS: Mapping[str, Scorer] = MappingProxyType({
    "as_asked": as_asked,
    "motion": motion,
    "flicker": flicker,
    "frozen": frozen,
    "black": black,
    "sharpness": sharpness,
})
"""The built-in scorers by name (what ``scorers=["motion", ...]`` accepts)."""

LOWER_IS_BETTER: frozenset[str] = frozenset({"frozen", "black"})
"""The built-in scorers whose lower values are the better results (a verdict on a scorer
reads the others as higher is better)."""


def score(
    result: Result, scorers: Sequence[str | Scorer] | Mapping[str, Scorer]
) -> dict[str, float | None]:
    """Score ``result`` with each of ``scorers``: a built-in's name (see :data:`SCORERS`) or
    any function of a result (named by its ``__name__``). Returns name -> float or None.

    A scorer that raises, or returns something that is not a finite number, scores None and
    logs a warning: one scorer never stops the others, nor the run that called it.

    Raises:
        ValueError: a name that is not a built-in scorer, or two scorers with one name.
        TypeError: a scorer that is neither a name nor a function.
    """
    named = dict(scorers) if isinstance(scorers, Mapping) else resolve(scorers)
    return {name: _one(name, function, result) for name, function in named.items()}


def resolve(scorers: Sequence[str | Scorer]) -> dict[str, Scorer]:
    """Name -> function for ``scorers`` (built-in names, or functions named by their
    ``__name__``), checked before anything is scored; see :func:`score` for what it raises.

    Example:
        >>> sorted(resolve(["motion", "black"]))
        ['black', 'motion']
    """
    if isinstance(scorers, str):
        scorers = [scorers]
    named: dict[str, Scorer] = {}
    for item in scorers:
        if isinstance(item, str):
            if item not in SCORERS:
                raise ValueError(
                    f"unknown scorer {item!r}: the built-in ones are {', '.join(SCORERS)}, "
                    "and any function of a result returning a number plugs in "
                    "(scorers=[my_score])")
            name, function = item, SCORERS[item]
        elif callable(item):
            name, function = str(getattr(item, "__name__", type(item).__name__)), item
        else:
            raise TypeError(f"a scorer is a built-in's name or a function of a result, not "
                            f"{type(item).__name__} ({item!r})")
        if name in named and named[name] is not function:
            raise ValueError(f"two scorers are named {name!r}; give each function its own "
                             "name (def ...), scores are keyed by it")
        named[name] = function
    return named


def _one(name: str, function: Scorer, result: Result) -> float | None:
    try:
        value = function(result)
    except Exception as exc:  # a user's scorer (or a file gone bad) never breaks the run
        logger.warning("genlab: scorer %s failed on task %s (%s: %s); its score is None",
                       name, result.task_id, type(exc).__name__, exc)
        return None
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        logger.warning("genlab: scorer %s returned %r for task %s, not a number; its score "
                       "is None", name, value, result.task_id)
        return None
    if not math.isfinite(number):
        logger.warning("genlab: scorer %s returned %s for task %s; its score is None",
                       name, number, result.task_id)
        return None
    return number


# --- per file ----------------------------------------------------------------------------


def _motion(m: _Measures) -> float | None:
    if not m.video or not m.grey_differences:
        return None
    return sum(m.grey_differences) / len(m.grey_differences) / 255.0


def _flicker(m: _Measures) -> float | None:
    if not m.video or not m.rgb_differences:
        return None
    return (255.0 - sum(m.rgb_differences) / len(m.rgb_differences)) / 255.0


def _frozen(m: _Measures) -> float | None:
    if not m.video or not m.grey_differences:
        return None
    repeated = sum(d < FROZEN_DIFFERENCE for d in m.grey_differences)
    return repeated / len(m.grey_differences)


def _black(m: _Measures) -> float | None:
    return sum(m.black) / len(m.black) if m.black else None


def _sharpness(m: _Measures) -> float | None:
    return sum(m.sharpness) / len(m.sharpness) if m.sharpness else None


def _mean_of_files(result: Result, measure: Callable[[_Measures], float | None]
                   ) -> float | None:
    values = [v for place in _scored_files(result)
              if (v := measure(_measures(place))) is not None]
    return sum(values) / len(values) if values else None


def _scored_files(result: Result) -> list[str]:
    """The kept media of a result, without its cover, last frame or sidecar."""
    files = []
    for place in result.paths:
        stem = PurePosixPath(media_name(place)).stem
        if not stem.endswith(("_cover", "_last_frame")):
            files.append(place)
    return files


def _measures(place: str) -> _Measures:
    """The measures of one kept file, decoded once while it is unchanged."""
    if is_remote(place):
        key: tuple[Any, ...] = (place,)
    else:
        stat = os.stat(place)
        key = (os.path.abspath(place), stat.st_size, stat.st_mtime_ns)
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    measured = _measure(place)
    with _cache_lock:
        _cache[key] = measured
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)
    return measured


def _measure(place: str) -> _Measures:
    if is_remote(place):
        data = read_media(place)
        head, source = data[:SNIFF_BYTES], io.BytesIO(data)
        opened: Any = source
    else:
        with open(place, "rb") as file:
            head = file.read(SNIFF_BYTES)
        opened = place
    kind = sniff(head)
    if kind is not None and kind.mime.startswith("audio/"):
        return _NOTHING  # a soundtrack kept beside the picture: nothing to see
    if kind is not None and kind.mime.startswith("image/"):
        return _measure_image(opened)
    boxed = kind is not None and kind.mime in _BOXED
    return _measure_video(opened, media_name(place), boxed=boxed)


def _measure_image(opened: Any) -> _Measures:
    from PIL import Image

    with Image.open(opened) as image:
        rgb = image.convert("RGB")
    small = _fit(rgb, WORK_WIDTH)
    grey_small = _grey(_array(small))
    sharp = _grey(_array(_fit(rgb, SHARPNESS_WIDTH)))
    return _Measures(video=False, rgb_differences=(), grey_differences=(),
                     black=(_is_black(grey_small),), sharpness=(_laplacian_variance(sharp),))


def _measure_video(opened: Any, name: str, *, boxed: bool = False) -> _Measures:
    import av
    import numpy as np
    from av.video.reformatter import VideoReformatter

    rgb_differences: list[float] = []
    grey_differences: list[float] = []
    blacks: list[bool] = []
    sharp: list[float] = []
    # One scaler per output size, so each keeps its scaling context from frame to frame.
    small_scaler, sharp_scaler = VideoReformatter(), VideoReformatter()
    # Opening a file reads ahead to learn its streams and decodes a few frames to do so (for
    # a 720p clip with B-frames, 20 ms of a 0.55 s decode, on one thread): an MP4's boxes
    # already say all that is used here, so its probe decodes none; other containers (their
    # headers may not give the duration or start) are probed in full.
    probe = {"skip_frame": "all"} if boxed else None
    with av.open(opened, mode="r", options=probe) as container:
        if not container.streams.video:
            raise ValueError(f"{name} has no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        # Frames nothing refers to skip the deblocking filter (a tenth of their decode): no
        # other frame is predicted from them, so no error spreads; every other frame is
        # decoded in full. See _LOOP_FILTER.
        stream.codec_context.options = {"skip_loop_filter": _LOOP_FILTER}
        width, height = stream.codec_context.width, stream.codec_context.height
        small_w, small_h = _size(width, height, WORK_WIDTH)
        sharp_w, sharp_h = _size(width, height, SHARPNESS_WIDTH)
        total = _frame_count(stream)
        wanted = _wanted_frames(total)
        sharp_at = _sharpness_frames(total, wanted)
        needed = None if wanted is None else wanted | sharp_at
        rate = stream.average_rate or stream.guessed_rate
        base, start = stream.time_base, stream.start_time or 0
        frames_per_tick = float(base * rate) if rate and base else 0.0  # once, not per frame

        def at(pts: int | None, fallback: int) -> int:
            if pts is None or not frames_per_tick:
                return fallback
            return round((pts - start) * frames_per_tick)

        previous: tuple[int, npt.NDArray[np.float32], npt.NDArray[np.float32]] | None = None
        count = 0
        for packet in container.demux(stream):
            if needed is not None and rate and base:
                # Frames nothing refers to are not decoded unless measured: a third less work.
                wanted_here = packet.pts is None or at(packet.pts, -1) in needed
                stream.codec_context.skip_frame = "DEFAULT" if wanted_here else "NONREF"
            for frame in packet.decode():
                index = at(frame.pts, count)
                count += 1
                if index in sharp_at or (not sharp_at and count == 1):
                    grey = sharp_scaler.reformat(frame, width=sharp_w, height=sharp_h,
                                                 format="gray")
                    sharp.append(_laplacian_variance(
                        grey.to_ndarray()[:, :sharp_w].astype(np.float32)))
                if wanted is not None and index not in wanted:
                    continue
                rgb = small_scaler.reformat(frame, width=small_w, height=small_h,
                                            format="rgb24").to_ndarray()
                rgb_f = rgb.astype(np.float32)
                grey_f = _grey(rgb_f)
                blacks.append(_is_black(grey_f))
                if previous is not None and previous[0] == index - 1:
                    rgb_differences.append(float(np.abs(rgb_f - previous[1]).mean()))
                    grey_differences.append(float(np.abs(grey_f - previous[2]).mean()))
                previous = (index, rgb_f, grey_f)
            if wanted is None and len(blacks) >= MAX_FRAMES:
                break  # no frame count known: the first MAX_FRAMES frames
    if count == 0:
        raise ValueError(f"{name} has no frames PyAV can decode")
    return _Measures(video=True, rgb_differences=tuple(rgb_differences),
                     grey_differences=tuple(grey_differences), black=tuple(blacks),
                     sharpness=tuple(sharp))


def _frame_count(stream: Any) -> int:
    """The video's frame count from its header, or its duration times its rate; 0 unknown."""
    if stream.frames:
        return int(stream.frames)
    rate = stream.average_rate or stream.guessed_rate
    if stream.duration and stream.time_base and rate:
        return int(float(stream.duration * stream.time_base) * float(rate))
    return 0


def _wanted_frames(total: int) -> frozenset[int] | None:
    """The frames measured: all when there are at most MAX_FRAMES, else MAX_FRAMES / 2 pairs
    of consecutive frames spread evenly; None when the count is unknown (the first ones)."""
    if total <= 0:
        return None
    if total <= MAX_FRAMES:
        return frozenset(range(total + 1))  # the header may undercount by one
    starts = _spread(total - 1, MAX_FRAMES // 2)
    return frozenset(i for s in starts for i in (s, s + 1))


def _sharpness_frames(total: int, wanted: frozenset[int] | None) -> frozenset[int]:
    """SHARPNESS_FRAMES frames spread over the clip, taken among the measured ones when the
    clip is sampled: a frame nothing refers to costs a decode of its own, so none is added."""
    if wanted is None or total <= MAX_FRAMES:
        return _spread(total, SHARPNESS_FRAMES)
    measured = sorted(wanted)
    return frozenset(measured[i] for i in _spread(len(measured), SHARPNESS_FRAMES))


def _spread(total: int, count: int) -> frozenset[int]:
    if total <= 0:
        return frozenset()
    if total <= count:
        return frozenset(range(total))
    return frozenset(round(i * (total - 1) / (count - 1)) for i in range(count))


def _size(width: int, height: int, limit: int) -> tuple[int, int]:
    if width <= limit:
        return width, height
    return limit, max(1, round(height * limit / width))


def _fit(image: Any, limit: int) -> Any:
    from PIL import Image

    if image.width <= limit:
        return image
    return image.resize(_size(image.width, image.height, limit), Image.Resampling.BILINEAR)


def _array(image: Any) -> npt.NDArray[np.float32]:
    import numpy as np

    return np.asarray(image, dtype=np.float32)


def _grey(rgb: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np

    weights = np.asarray(_GREY, dtype=np.float32)
    return rgb.astype(np.float32, copy=False) @ weights


def _is_black(grey: npt.NDArray[np.float32]) -> bool:
    return float((grey < BLACK_PIXEL_LEVEL * 255.0).mean()) >= BLACK_FRAME_SHARE


def _laplacian_variance(grey: npt.NDArray[np.float32]) -> float:
    if grey.shape[0] < 3 or grey.shape[1] < 3:
        return 0.0
    centre = grey[1:-1, 1:-1]
    laplacian = (grey[:-2, 1:-1] + grey[2:, 1:-1] + grey[1:-1, :-2] + grey[1:-1, 2:]
                 - 4.0 * centre)
    return float(laplacian.var())


def _clear_cache() -> None:
    """Forget every measure (benchmarks measure cold decoding with it)."""
    with _cache_lock:
        _cache.clear()

