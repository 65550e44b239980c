"""Find out what a media file is, from its bytes alone, without trusting it.

    info = probe_media(data)        # MediaInfo(kind="video", format="mp4", width=1280, ...)

Images go through Pillow, videos and audios through PyAV. Anything that is not media, is
cut short or is absurdly large raises :class:`MediaProbeError` with a message a person can
act on; no other exception escapes, and the work done is bounded whatever the input.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction
from typing import Any

import av
from PIL import Image, UnidentifiedImageError

from genlab.catalog import MediaInfo

__all__ = ["MediaProbeError", "probe_media"]

# Formats Pillow may claim. Listing them keeps plugins with weak signatures (TGA, ...)
# from mistaking random bytes for an image.
_IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF", "AVIF")
_IMAGE_NAMES = {"mpo": "jpeg"}
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")
_DEFAULT_MAX_PIXELS = 89_478_485  # Pillow's own default for MAX_IMAGE_PIXELS
_MAX_PACKETS = 20_000  # when a container states no duration, count at most this many packets
_MAX_FIRST_FRAME_PACKETS = 64  # packets to read while looking for a first decodable frame


class MediaProbeError(ValueError):
    """The bytes are not usable media; the message says why (empty, corrupt, not media...)."""


def probe_media(data: bytes) -> MediaInfo:
    """Kind, format, size and timing of an image, video or audio file.

    Args:
        data: the whole file.

    Returns:
        A :class:`MediaInfo`. Formats are lower-case: ``png``, ``jpeg``, ``webp``, ``gif``,
        ``bmp``, ``tiff``; ``mp4``, ``mov`` (told apart by the ``ftyp`` brand), ``webm``,
        ``wav``, ``mp3`` and otherwise FFmpeg's first name for the container.

    Raises:
        MediaProbeError: for an empty file, bytes that are no media, a truncated or corrupt
            file, or an image with too many pixels.
    """
    if not data:
        raise MediaProbeError("empty file")
    try:
        return _probe_image(data)
    except _NotAnImage:
        return _probe_av(data)


class _NotAnImage(Exception):
    pass


def _looks_like_image(data: bytes) -> bool:
    return data.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def _probe_image(data: bytes) -> MediaInfo:
    """Pillow's view of ``data``; raises _NotAnImage when Pillow does not recognise it."""
    limit = Image.MAX_IMAGE_PIXELS or _DEFAULT_MAX_PIXELS
    try:
        img = Image.open(io.BytesIO(data), formats=_IMAGE_FORMATS)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        # The warning only arrives as an exception where warnings are errors (as in tests);
        # elsewhere Pillow just warns and the size check below refuses the image.
        raise MediaProbeError(f"the image has too many pixels (more than {limit:,})") from exc
    except UnidentifiedImageError as exc:
        if _looks_like_image(data):
            raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc
        raise _NotAnImage from exc
    except Exception as exc:  # Pillow raises many types for malformed headers
        raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc
    with img:
        width, height = img.size
        if width * height > limit:
            raise MediaProbeError(
                f"the image has too many pixels ({width}x{height}; at most {limit:,})"
            )
        fmt = (img.format or "image").lower()
        try:
            # Decoding the pixels is the only sure way to notice a file cut short.
            img.load()
        except Exception as exc:
            raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc
    return MediaInfo(
        kind="image",
        format=_IMAGE_NAMES.get(fmt, fmt),
        size_bytes=len(data),
        width=width,
        height=height,
    )


def _probe_av(data: bytes) -> MediaInfo:
    try:
        container = av.open(io.BytesIO(data), "r")
    except Exception as exc:
        if _is_iso_media(data):
            reason = getattr(exc, "strerror", None) or exc
            raise MediaProbeError(f"the file is truncated or corrupt ({reason})") from exc
        raise MediaProbeError("not an image, video or audio file") from exc
    with container:
        try:
            return _describe(container, data)
        except MediaProbeError:
            raise
        except Exception as exc:
            raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc


def _is_iso_media(data: bytes) -> bool:
    return data[4:8] == b"ftyp"


def _describe(container: av.container.InputContainer, data: bytes) -> MediaInfo:
    name = container.format.name
    if name.endswith("_pipe") or name == "image2":
        # FFmpeg reads still images too; Pillow already refused this one.
        raise MediaProbeError("the file is truncated or corrupt (unreadable image)")
    videos = [s for s in container.streams.video if not _is_cover_art(s)]
    audios = list(container.streams.audio)
    if not videos and not audios:
        raise MediaProbeError("not an image, video or audio file")
    _check_extent(container, data)
    fmt = _container_name(name, data)
    if videos:
        video = videos[0]
        _check_first_frame(container, video)
        rate = video.average_rate or video.guessed_rate
        fps = float(rate) if rate else None
        ctx = video.codec_context
        return MediaInfo(
            kind="video",
            format=fmt,
            size_bytes=len(data),
            width=ctx.width or None,
            height=ctx.height or None,
            duration=_duration(container, video, fps),
            fps=fps,
            has_audio=bool(audios),
        )
    duration = _duration(container, audios[0], None)
    bit_rate = audios[0].codec_context.bit_rate or container.bit_rate
    if bit_rate and len(data) * 8 < 0.5 * bit_rate * duration:
        # Headers (an MP3's Xing frame, say) promise far more audio than the bytes hold.
        raise MediaProbeError("the file is truncated or corrupt (less data than it claims)")
    return MediaInfo(kind="audio", format=fmt, size_bytes=len(data), duration=duration)


def _is_cover_art(stream: Any) -> bool:
    # MP3s and M4As carry album art as a one-picture "video" stream.
    return bool(stream.disposition & av.stream.Disposition.attached_pic)


def _container_name(name: str, data: bytes) -> str:
    if name == "mov,mp4,m4a,3gp,3g2,mj2":
        return "mov" if data[8:12] == b"qt  " else "mp4"
    if name == "matroska,webm":
        return "webm" if b"webm" in data[:64] else "mkv"
    return name.split(",")[0]


def _check_extent(container: av.container.InputContainer, data: bytes) -> None:
    """Refuse files whose own bookkeeping points past the end of the bytes.

    That catches an MP4 cut short after its moov (the sample index) and a WAV cut short (the
    RIFF size), without decoding anything.
    """
    riff = int.from_bytes(data[4:8], "little") if data[:4] == b"RIFF" else 0
    past_end = 0 < riff < 0xFFFFFFFF and riff + 8 > len(data)
    for stream in container.streams:
        entries = stream.index_entries
        if len(entries) and max(e.pos + e.size for e in entries[-8:]) > len(data):
            past_end = True
    if past_end:
        raise MediaProbeError("the file is truncated or corrupt (shorter than its headers say)")


def _check_first_frame(container: av.container.InputContainer, stream: Any) -> None:
    """Decode the first video frame, reading a bounded number of packets."""
    for count, packet in enumerate(container.demux(stream)):
        if count >= _MAX_FIRST_FRAME_PACKETS:
            break
        if packet.decode():  # the last, empty packet flushes frames the decoder held back
            return
    raise MediaProbeError("the file is truncated or corrupt (no video frame decodes)")


def _duration(container: av.container.InputContainer, stream: Any, fps: float | None) -> float:
    """Seconds, from the stream, the container, the frame count, or a bounded packet scan."""
    time_base: Fraction | None = stream.time_base
    if stream.duration and time_base:
        return float(stream.duration * time_base)
    if container.duration:
        return float(container.duration / av.time_base)
    if stream.frames and fps:
        return float(stream.frames / fps)
    container.seek(0)
    end = 0.0
    for count, packet in enumerate(container.demux(stream)):
        if count >= _MAX_PACKETS:
            break
        if packet.pts is not None and packet.time_base:
            end = max(end, float((packet.pts + (packet.duration or 0)) * packet.time_base))
    if not math.isfinite(end) or end <= 0:
        raise MediaProbeError("the file is truncated or corrupt (no duration)")
    return end
