"""What a page embeds for a media file: bytes every notebook front end plays, chosen by what
browsers decode (codec, profile, pixel format), never by size alone.

A notebook embeds what it shows as base64 data URIs. Chromium (JupyterLab, Notebook 7, Binder)
plays H.264, VP8/VP9 and AV1 video, but VS Code's notebook webview decodes H.264 video and MP3
audio only (no AAC, no Opus), and no browser plays HEVC, 10-bit or 4:4:4 H.264 or ProRes
reliably. So :func:`embed` passes a video through unchanged only when it already is H.264
8-bit 4:2:0 (baseline, main or high profile) with even dimensions, in MP4, with no audio or MP3
audio, at no more than a preview's bitrate; anything else is re-encoded to exactly that, at most
:data:`PREVIEW_WIDTH` pixels wide, with the index (``moov``) at the front. Images browsers show
(PNG, JPEG, GIF, WebP, AVIF, BMP, SVG) are embedded as they are when small; others (TIFF,
HEIC) and large ones get a PNG (transparent) or JPEG (opaque) preview, turned upright by its
EXIF orientation. The original stays on disk, whole, and is linked.

PyAV and Pillow do the work, imported only when needed; without them (or for bytes they cannot
read) the original is embedded as it is. This module is apart from :mod:`genlab.media` (which
does not import it): the views (report, widgets) use it, and the client only through
:func:`genlab.media.card.prepare_previews`, in the background, when it keeps a result.

Example:
    >>> shown = embed(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(8))
    >>> shown.kind, shown.mime, shown.note
    ('image', 'image/png', None)
    >>> embed(b"<html>").note
    'media in an unrecognised format'
    >>> video_preview(b"not a video") == b"not a video"
    True
    >>> poster(b"not a video") is None
    True
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import tempfile
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from genlab.media._info import MediaInfo, pillow_reads, probe
from genlab.media._sniff import SNIFF_BYTES, sniff

__all__ = [
    "BROWSER_IMAGES",
    "MAX_EMBED_BYTES",
    "MAX_EMBED_PIXELS",
    "PREVIEW_AUDIO_KBPS",
    "PREVIEW_FPS",
    "PREVIEW_VIDEO_KBPS",
    "PREVIEW_WIDTH",
    "Embed",
    "declared_pixels",
    "embed",
    "image_preview",
    "plays_everywhere",
    "poster",
    "video_preview",
]

logger = logging.getLogger("genlab")

PREVIEW_WIDTH = 640
"""Previews are at most this many pixels wide (a card shows 360 px, an enlarged one ~700)."""
PREVIEW_VIDEO_KBPS = 300
"""The preview's video bitrate ceiling; flat content stays far below it (CRF decides)."""
PREVIEW_AUDIO_KBPS = 64
"""The preview's MP3 audio bitrate."""
PREVIEW_FPS = 30
MAX_EMBED_BYTES = 5 * 1024 * 1024
"""The most bytes one embedded item may have: a larger video is shown by its first frame."""
MAX_EMBED_PIXELS = 4096 * 4096
"""The largest bitmap an embedded image may decode to; a larger one (a PNG declaring
40000x40000 in a few kilobytes) is never handed to the browser: a note says so instead."""
BROWSER_IMAGES = frozenset({
    "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
    "image/svg+xml",
})
"""Image types every notebook front end shows as they are (all are Chromium inside)."""

_PLAYABLE_PROFILES = frozenset({"baseline", "constrained baseline", "main", "high"})
_PLAYABLE_AUDIO = frozenset({"mp3"})
_BROWSER_AUDIO = frozenset({"audio/mpeg", "audio/wav"})
_CRF = "30"
_CACHED = 32

_cache: OrderedDict[bytes, bytes] = OrderedDict()
_cache_lock = threading.Lock()
_making: dict[bytes, threading.Event] = {}
"""Previews being made now, by content key: a second caller waits for the first one's."""


@dataclass(frozen=True, slots=True)
class Embed:
    """What a page shows for one media file.

    ``kind`` is the element to use (``<video>``, ``<img>``, ``<audio>``), None when nothing can
    be shown; ``data`` are the bytes for its data URI and ``mime`` their type; ``poster`` is a
    video's first frame (JPEG); ``note`` says, for people, why something is not shown (or what
    is shown instead).
    """

    kind: Literal["video", "image", "audio"] | None
    mime: str | None = None
    data: bytes = b""
    poster: bytes | None = None
    note: str | None = None


def _even(value: float) -> int:
    return max(2, int(round(value / 2)) * 2)


def plays_everywhere(info: MediaInfo) -> bool:
    """True when a video plays, as it is, in every notebook front end (VS Code's included):
    H.264 8-bit 4:2:0 in baseline, main or high profile, even dimensions, MP4, and no audio or
    MP3 audio.

    Example:
        >>> plays_everywhere(MediaInfo(kind="video", mime="video/mp4", video_codec="hevc"))
        False
    """
    return (
        info.mime == "video/mp4"
        and info.video_codec == "h264"
        and info.pix_fmt == "yuv420p"
        and (info.profile or "").lower() in _PLAYABLE_PROFILES
        and bool(info.width) and bool(info.height)
        and (info.width or 1) % 2 == 0 and (info.height or 1) % 2 == 0
        and (not info.has_audio or info.audio_codec in _PLAYABLE_AUDIO)
    )


def _within_budget(info: MediaInfo) -> bool:
    """True when the video already averages no more than a preview's bitrate.

    Re-encoding such a file would not make the notebook smaller, only make the result wait:
    reading the container's headers is milliseconds, an encode is a good part of a second.
    """
    if not info.duration or info.duration <= 0:
        return False
    budget = (PREVIEW_VIDEO_KBPS + PREVIEW_AUDIO_KBPS) * 1000 / 8 * info.duration
    return info.bytes <= budget


def _cached(key: bytes) -> bytes | None:
    """The cached preview for ``key``; the caller holds ``_cache_lock``."""
    found = _cache.get(key)
    if found is not None:
        _cache.move_to_end(key)
    return found


def _remember(key: bytes, value: bytes) -> None:
    with _cache_lock:
        _cache[key] = value
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)


_WAIT_FOR_MAKER = 120.0  # seconds a card waits for a preview another thread is making


def video_preview(data: bytes, *, width: int = PREVIEW_WIDTH) -> bytes:
    """``data`` (a video) as every notebook front end plays it: H.264 8-bit yuv420p MP4 with
    MP3 audio (or none), at most ``width`` px wide, ``moov`` first.

    Returns the original bytes when they already play everywhere (:func:`plays_everywhere`)
    within a preview's bitrate, when PyAV is not installed, or when they cannot be decoded.
    Results are cached by content, so a gallery and a report built from the same run encode
    each video once; and each is made once: a caller asking while the same preview is being
    made (a card drawn while the client still makes it, at keep time) waits for that one.

    Example:
        >>> from genlab.emulator import samples
        >>> clip = samples.video(160, 120, 0.5)   # H.264 MP4: it already plays everywhere
        >>> video_preview(clip) == clip, video_preview(b"not a video")
        (True, b'not a video')
    """
    key = hashlib.blake2b(data, digest_size=16).digest() + width.to_bytes(4, "big")
    while True:  # made once: a caller that finds it in the making waits for it
        with _cache_lock:
            cached = _cached(key)
            if cached is not None:
                return cached
            making = _making.get(key)
            if making is None:
                making = _making[key] = threading.Event()
                break
        if not making.wait(_WAIT_FOR_MAKER):
            return _made(data, key, width)  # the other maker is stuck: never hang a card
    try:
        return _made(data, key, width)
    finally:
        with _cache_lock:
            del _making[key]
        making.set()


def _made(data: bytes, key: bytes, width: int) -> bytes:
    info = probe(data)
    playable = plays_everywhere(info)
    if playable and _within_budget(info):
        shown = data
    else:
        try:
            shown = _encode(data, width)
        except ImportError:
            return data  # PyAV is optional for reports: embed the original
        except Exception as exc:  # an unreadable video is embedded as it is, never a crash
            logger.debug("genlab: no preview (%s: %s); embedding the original",
                         type(exc).__name__, exc)
            return data
        if playable and len(shown) >= len(data):
            shown = data
    _remember(key, shown)
    return shown


def _encode(data: bytes, width: int) -> bytes:
    import av

    with tempfile.TemporaryDirectory(prefix="genlab-preview-") as folder:
        # A file, not a buffer: +faststart rewrites it with the index first, so a player
        # (and VS Code's webview) starts without reading to the end.
        target_path = os.path.join(folder, "preview.mp4")
        with av.open(io.BytesIO(data), mode="r") as source:
            if not source.streams.video:
                raise ValueError("no video stream")
            vin = source.streams.video[0]
            vin.thread_type = "AUTO"  # decode 4K on every core
            ain = source.streams.audio[0] if source.streams.audio else None
            in_w, in_h = vin.codec_context.width, vin.codec_context.height
            scale = min(1.0, width / in_w)
            out_w, out_h = _even(in_w * scale), _even(in_h * scale)
            rate = vin.average_rate or vin.guessed_rate or Fraction(24)
            rate = min(Fraction(rate), Fraction(PREVIEW_FPS))
            step = 1 / float(rate)
            with av.open(target_path, mode="w", format="mp4",
                         options={"movflags": "+faststart"}) as target:
                vout: Any = target.add_stream("libx264", rate=rate)
                vout.width, vout.height, vout.pix_fmt = out_w, out_h, "yuv420p"
                kbps = PREVIEW_VIDEO_KBPS
                # veryfast: at display size it spends ~30 % less time than "fast" and, at
                # this CRF, makes a smaller file (benchmarks/bench_embed.py).
                vout.options = {
                    "crf": _CRF, "preset": "veryfast", "maxrate": f"{kbps}k",
                    "bufsize": f"{2 * kbps}k", "profile": "main",
                }
                aout: Any = None
                if ain is not None:
                    rate_in = ain.codec_context.sample_rate or 48000
                    aout = target.add_stream(
                        "libmp3lame", rate=rate_in if rate_in in (32000, 44100, 48000) else 48000
                    )
                    aout.bit_rate = PREVIEW_AUDIO_KBPS * 1000
                    if ain.codec_context.channels and ain.codec_context.channels > 2:
                        aout.layout = "stereo"
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
                if index == 0:
                    raise ValueError("no video frame could be decoded")
                for packet in vout.encode(None):
                    target.mux(packet)
                if aout is not None:
                    for packet in aout.encode(None):
                        target.mux(packet)
        with open(target_path, "rb") as done:
            return done.read()


def poster(data: bytes, *, width: int = 160) -> bytes | None:
    """The first frame of a video as JPEG bytes, at most ``width`` px wide (None if unreadable).

    Cards show it until the video plays; reference lists show it as the video's thumbnail.

    Example:
        >>> import io
        >>> from PIL import Image
        >>> from genlab.emulator import samples
        >>> jpeg = poster(samples.video(320, 240, 0.5), width=80)
        >>> Image.open(io.BytesIO(jpeg)).size, poster(b"not a video") is None
        ((80, 60), True)
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


def declared_pixels(data: bytes) -> tuple[int, int] | None:
    """The width and height an image's header declares, read without decoding it (None when
    it is no image Pillow reads).

    Example:
        >>> declared_pixels(b"not an image") is None
        True
    """
    try:
        from PIL import Image
    except ImportError:
        return None
    pillow_reads(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as image:
                return image.size
        except Image.DecompressionBombError as exc:  # beyond Pillow's own cap: read the size
            found = re.findall(r"\d+", str(exc))
            return (int(found[0]), 1) if found else (1 << 20, 1 << 20)
        except (OSError, ValueError):
            return None


def image_preview(data: bytes, *, width: int = PREVIEW_WIDTH) -> tuple[bytes, str] | None:
    """An image (or a video's first frame) as a browser shows it: upright by its EXIF
    orientation, at most ``width`` px wide, in 8-bit RGB(A); PNG where there is transparency,
    JPEG otherwise. Returns the bytes and their type, None when it cannot be read.

    Example:
        >>> image_preview(b"not an image") is None
        True
    """
    try:
        from PIL import Image, ImageOps
    except ImportError:  # Pillow is optional for reports; the caller embeds the original
        return None
    pillow_reads(data)
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.seek(0)
            image = ImageOps.exif_transpose(opened) or opened
            image.thumbnail((width, width * 16))  # bounded by width only, aspect kept
            alpha = image.mode in ("RGBA", "LA", "PA") or (
                image.mode == "P" and "transparency" in image.info
            )
            if image.mode.startswith("I;16") or image.mode == "I":
                image = image.point(lambda v: v / 256).convert("L")  # 16-bit grey to 8-bit
            out = io.BytesIO()
            if alpha:
                image.convert("RGBA").save(out, "PNG", optimize=True)
                return out.getvalue(), "image/png"
            image.convert("RGB").save(out, "JPEG", quality=85)
            return out.getvalue(), "image/jpeg"
    except (OSError, ValueError, Image.DecompressionBombError):
        pass
    frame = poster(data, width=width)  # stills only FFmpeg reads (HEIC without pillow-heif)
    return (frame, "image/jpeg") if frame else None


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def embed(
    data: bytes,
    *,
    width: int = PREVIEW_WIDTH,
    image_width: int | None = None,
    max_bytes: int = MAX_EMBED_BYTES,
    fit_images: bool = False,
) -> Embed:
    """What a page embeds for ``data`` (a whole media file): the one decision genlab has.

    Videos: :func:`video_preview` at most ``width`` px wide (the original when it already
    plays everywhere), with a first-frame poster; past ``max_bytes``, only the poster and a
    note. Images: as they are when browsers show the type and they are at most ``max_bytes``
    (and, with ``fit_images``, at most ``image_width`` px wide); else :func:`image_preview`
    at ``image_width`` (``width`` when not given). Audio: MP3 and WAV as they are. A
    bitmap past :data:`MAX_EMBED_PIXELS` and unknown bytes get a note only.

    Example:
        >>> embed(b"GIF89a" + bytes(8), max_bytes=4).note
        'image is 0.0 MB, too large to embed'
    """
    found = sniff(data[:SNIFF_BYTES])
    if found is None:
        return Embed(None, note="media in an unrecognised format")
    mime = found.mime
    if mime.startswith("video/"):
        return _embed_video(data, mime, width, max_bytes)
    if mime.startswith("audio/"):
        if mime in _BROWSER_AUDIO and len(data) <= max_bytes:
            return Embed("audio", mime, data)
        return Embed(None, note=f"audio ({mime}) is not embedded; open the original")
    return _embed_image(data, mime, image_width or width, max_bytes, fit_images)


def _embed_video(data: bytes, mime: str, width: int, max_bytes: int) -> Embed:
    shown = video_preview(data, width=width)
    known = sniff(shown[:SNIFF_BYTES])
    shown_mime = known.mime if known else mime
    frame = poster(shown, width=width)
    if len(shown) > max_bytes:
        note = f"video is {_size(len(data))}, too large to embed"
        return Embed(None, note=f"{note}; showing its first frame" if frame else note,
                     poster=frame)
    return Embed("video", shown_mime, shown, poster=frame)


def _embed_image(data: bytes, mime: str, width: int, max_bytes: int, fit: bool) -> Embed:
    size = declared_pixels(data)
    if size is not None and size[0] * size[1] > MAX_EMBED_PIXELS:
        shown = f"{size[0]:,}×{size[1]:,}" if size[1] > 1 else f"{size[0]:,}"
        return Embed(None, note=f"image declares {shown} pixels, too large for a browser to "
                                "decode here; open the original")
    showable = mime in BROWSER_IMAGES
    small = len(data) <= max_bytes and not (fit and size is not None and size[0] > width)
    if showable and small:
        return Embed("image", mime, data)
    preview = image_preview(data, width=width)
    if preview is not None:
        note = None
        if showable and len(data) > max_bytes:
            note = f"image is {_size(len(data))}, too large to embed; showing a smaller copy"
        return Embed("image", preview[1], preview[0], note=note)
    if showable:
        return Embed(None, note=f"image is {_size(len(data))}, too large to embed")
    return Embed(None, note=f"an image browsers do not show ({mime}); open the original")
