"""Video previews for notebooks: re-encoded at display size, so embedding them keeps notebooks
small, and posters (a first frame) for reference lists.

A notebook embeds every video it shows as a base64 data URI, which adds 4/3 of the file's size
to the ``.ipynb``. A generated 1080p clip at a camera-like bitrate is several megabytes; its
preview, at most :data:`PREVIEW_WIDTH` pixels wide and :data:`PREVIEW_VIDEO_KBPS` kbit/s, is a
few hundred kilobytes and looks the same in a card or a gallery tile. The original stays on
disk and is linked. PyAV does the work; without it (or for bytes it cannot read) the original
is returned unchanged.

This module is apart from :mod:`genlab.media` (which does not import it): the views (report,
widgets) use it, the client never does, so a script using the client never loads PyAV or
Pillow.

Example:
    >>> video_preview(b"not a video") == b"not a video"
    True
    >>> poster(b"not a video") is None
    True
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
from collections import OrderedDict
from fractions import Fraction
from typing import Any

__all__ = [
    "PREVIEW_AUDIO_KBPS",
    "PREVIEW_FPS",
    "PREVIEW_VIDEO_KBPS",
    "PREVIEW_WIDTH",
    "poster",
    "video_preview",
]

logger = logging.getLogger("genlab")

PREVIEW_WIDTH = 640
"""Previews are at most this many pixels wide (a card shows 360 px, an enlarged one ~700)."""
PREVIEW_VIDEO_KBPS = 300
"""The preview's video bitrate ceiling; flat content stays far below it (CRF decides)."""
PREVIEW_AUDIO_KBPS = 48
PREVIEW_FPS = 30
_CRF = "30"
_CACHED = 32

_cache: OrderedDict[bytes, bytes] = OrderedDict()
_cache_lock = threading.Lock()


def _even(value: float) -> int:
    return max(2, int(round(value / 2)) * 2)


def video_preview(data: bytes, *, width: int = PREVIEW_WIDTH) -> bytes:
    """``data`` (a video) re-encoded for display: H.264 yuv420p MP4, at most ``width`` px wide.

    Returns the original bytes when they are already no larger than the preview would be,
    when PyAV is not installed, or when they cannot be decoded. Results are cached by content,
    so a gallery and a report built from the same run encode each video once.
    """
    key = hashlib.blake2b(data, digest_size=16).digest() + width.to_bytes(4, "big")
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    try:
        shown = data if _within_budget(data) else _encode(data, width)
    except ImportError:
        return data  # PyAV is optional for reports: embed the original
    except Exception as exc:  # an unreadable video is embedded as it is, never a crash
        logger.debug("genlab: no preview (%s: %s); embedding the original", type(exc).__name__, exc)
        return data
    if len(shown) >= len(data):
        shown = data
    with _cache_lock:
        _cache[key] = shown
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)
    return shown


def _within_budget(data: bytes) -> bool:
    """True when the video already averages no more than a preview's bitrate.

    Re-encoding such a file would not make the notebook smaller, only make the result wait:
    reading the container's duration is milliseconds, an encode is a good part of a second.
    """
    import av

    with av.open(io.BytesIO(data), mode="r") as source:
        seconds = float(source.duration) / 1_000_000 if source.duration else 0.0
    if seconds <= 0:
        return False
    budget = (PREVIEW_VIDEO_KBPS + PREVIEW_AUDIO_KBPS) * 1000 / 8 * seconds
    return len(data) <= budget


def _encode(data: bytes, width: int) -> bytes:
    import av

    out_buffer = io.BytesIO()
    with av.open(io.BytesIO(data), mode="r") as source:
        if not source.streams.video:
            raise ValueError("no video stream")
        vin = source.streams.video[0]
        ain = source.streams.audio[0] if source.streams.audio else None
        scale = min(1.0, width / vin.codec_context.width)
        out_w = _even(vin.codec_context.width * scale)
        out_h = _even(vin.codec_context.height * scale)
        rate = vin.average_rate or vin.guessed_rate or Fraction(24)
        rate = min(Fraction(rate), Fraction(PREVIEW_FPS))
        step = 1 / float(rate)
        # No +faststart: it reopens the output by name. A data URI arrives whole anyway.
        with av.open(out_buffer, mode="w", format="mp4") as target:
            vout: Any = target.add_stream("libx264", rate=rate)
            vout.width, vout.height, vout.pix_fmt = out_w, out_h, "yuv420p"
            kbps = PREVIEW_VIDEO_KBPS
            vout.options = {
                "crf": _CRF, "preset": "medium", "maxrate": f"{kbps}k",
                "bufsize": f"{2 * kbps}k", "profile": "main",
            }
            aout: Any = None
            if ain is not None:
                aout = target.add_stream("aac", rate=ain.codec_context.sample_rate or 48000)
                aout.bit_rate = PREVIEW_AUDIO_KBPS * 1000
            streams = [vin] + ([ain] if ain is not None else [])
            index = 0
            last = -1.0
            decoded: Any
            for decoded in source.decode(*streams):
                frame = decoded
                if isinstance(frame, av.AudioFrame):
                    frame.pts = None
                    for packet in aout.encode(frame):
                        target.mux(packet)
                    continue
                moment = float(frame.time) if frame.time is not None else index * step
                if last >= 0 and moment - last < step * 0.9:
                    continue  # above the preview's frame rate
                last = moment
                small = frame.reformat(width=out_w, height=out_h, format="yuv420p")
                small.pts = index
                small.time_base = Fraction(1) / rate
                index += 1
                for packet in vout.encode(small):
                    target.mux(packet)
            for packet in vout.encode(None):
                target.mux(packet)
            if aout is not None:
                for packet in aout.encode(None):
                    target.mux(packet)
    return out_buffer.getvalue()


def poster(data: bytes, *, width: int = 160) -> bytes | None:
    """The first frame of a video as JPEG bytes, at most ``width`` px wide (None if unreadable).

    Reference lists show it as the video's thumbnail.
    """
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(io.BytesIO(data), mode="r") as source:
            if not source.streams.video:
                return None
            first: Any
            for first in source.decode(video=0):
                image = first.to_image()
                image.thumbnail((width, width * 4))
                out = io.BytesIO()
                image.convert("RGB").save(out, "JPEG", quality=80)
                return out.getvalue()
    except Exception:  # not a video PyAV can read: no poster, the row shows its name
        return None
    return None
