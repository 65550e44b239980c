"""Find out what a media file is, from its bytes alone, without trusting it.

    info = probe_media(data)        # MediaInfo(kind="video", format="mp4", width=1280, ...)
    with open(path, "rb") as f:     # or an open file: nothing is read into memory whole
        info = probe_media(f)

Images go through Pillow, videos and audios through PyAV. Anything that is not media or is
cut short raises :class:`MediaProbeError` with a message a person can act on; no other
exception escapes, and the work and memory spent are bounded whatever the input. An image's
dimensions come from its header, so a 65536-pixel-wide PNG is described, not refused; only
images of at most :data:`DECODE_PIXELS` pixels are decoded (to notice files cut short), larger
ones are checked from their structure.
"""

from __future__ import annotations

import io
import math
import os
import struct
import zlib
from fractions import Fraction
from typing import IO, Any

import av
from PIL import Image, ImageFile, UnidentifiedImageError

from genlab.catalog import MediaInfo

__all__ = ["DECODE_PIXELS", "MediaProbeError", "probe_media"]

# Formats Pillow may claim. Listing them keeps plugins with weak signatures (TGA, ...)
# from mistaking random bytes for an image.
_IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF", "AVIF")
_IMAGE_NAMES = {"mpo": "jpeg"}
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")
DECODE_PIXELS = 4096 * 4096
"""Images up to this many pixels are decoded whole (~50 MB of RGB at most) to prove they are
complete; larger ones are judged from their structure (PNG chunk checksums, JPEG end marker)."""
_HEAD = 64  # bytes of the file's start that tell formats apart
_MAX_PACKETS = 20_000  # when a container states no duration, count at most this many packets
_MAX_FIRST_FRAME_PACKETS = 64  # packets to read while looking for a first decodable frame

Source = bytes | IO[bytes]


class MediaProbeError(ValueError):
    """The bytes are not usable media; the message says why (empty, corrupt, not media...)."""


def probe_media(source: Source) -> MediaInfo:
    """Kind, format, size and timing of an image, video or audio file.

    Args:
        source: the whole file as bytes, or a file opened for binary reading (read from its
            start; it is left open).

    Returns:
        A :class:`MediaInfo`. Formats are lower-case: ``png``, ``jpeg``, ``webp``, ``gif``,
        ``bmp``, ``tiff``; ``mp4``, ``mov`` (told apart by the ``ftyp`` brand), ``webm``,
        ``wav``, ``mp3`` and otherwise FFmpeg's first name for the container.

    Raises:
        MediaProbeError: for an empty file, bytes that are no media, or a truncated or corrupt
            file.

    Example:
        >>> from genlab.emulator import samples
        >>> info = probe_media(samples.image(640, 480))
        >>> info.kind, info.format, info.width, info.height
        ('image', 'png', 640, 480)
    """
    stream: IO[bytes] = io.BytesIO(source) if isinstance(source, bytes) else source
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    if not size:
        raise MediaProbeError("empty file")
    stream.seek(0)
    head = stream.read(_HEAD)
    try:
        return _probe_image(stream, head, size)
    except _NotAnImage:
        stream.seek(0)
        return _probe_av(stream, head, size)


class _NotAnImage(Exception):
    pass


def _looks_like_image(head: bytes) -> bool:
    return head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def _open_image(stream: IO[bytes], head: bytes) -> ImageFile.ImageFile:
    """Pillow's reader of the first format that claims the file, opened without Pillow's
    decompression-bomb refusal: only the header is read, so the size costs nothing yet."""
    Image.init()
    for name in _IMAGE_FORMATS:
        if name not in Image.OPEN:
            continue
        factory, accept = Image.OPEN[name]
        claimed = accept(head[:16]) if accept else True
        if not claimed or isinstance(claimed, str):
            continue
        stream.seek(0)
        try:
            image = factory(stream, "")
        except (SyntaxError, IndexError, TypeError, struct.error) as exc:
            raise UnidentifiedImageError(str(exc)) from exc
        assert isinstance(image, ImageFile.ImageFile)
        return image
    raise UnidentifiedImageError("no image format claims the file")


def _probe_image(stream: IO[bytes], head: bytes, size: int) -> MediaInfo:
    """Pillow's view of the file; raises _NotAnImage when Pillow does not recognise it."""
    try:
        img = _open_image(stream, head)
    except UnidentifiedImageError as exc:
        if _looks_like_image(head):
            raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc
        raise _NotAnImage from exc
    except Exception as exc:  # Pillow raises many types for malformed headers
        raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc
    with img:
        width, height = img.size
        fmt = (img.format or "image").lower()
        if width <= 0 or height <= 0:
            raise MediaProbeError(f"the file is truncated or corrupt (size {width}x{height})")
        try:
            if width * height <= DECODE_PIXELS:
                img.load()  # decoding the pixels is the surest way to notice a file cut short
            else:
                _check_structure(img, stream, fmt, size)
        except MediaProbeError:
            raise
        except Exception as exc:
            raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc
    return MediaInfo(
        kind="image",
        format=_IMAGE_NAMES.get(fmt, fmt),
        size_bytes=size,
        width=width,
        height=height,
    )


def _check_structure(img: ImageFile.ImageFile, stream: IO[bytes], fmt: str, size: int) -> None:
    """Notice a large image cut short without decoding it."""
    if fmt == "png":
        _check_png(stream, size)
    elif fmt in ("jpeg", "mpo"):
        stream.seek(max(0, size - 64))
        if b"\xff\xd9" not in stream.read(64):
            raise MediaProbeError("the file is truncated or corrupt (no JPEG end marker)")


# Deflate cannot shrink data by more than ~1032:1; pixel data smaller than this share of the
# rows it must hold cannot be complete.
_DEFLATE_MAX_RATIO = 1100
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _check_png(stream: IO[bytes], size: int) -> None:
    """Walk a PNG's chunks to IEND, checking each CRC, and check that the compressed pixel data
    could hold every row; reads the file in bounded pieces and decodes nothing."""
    stream.seek(8)
    width = height = row_bits = 0
    idat = 0
    for _ in range(1_000_000):
        header = stream.read(8)
        if len(header) < 8:
            raise MediaProbeError("the file is truncated or corrupt (no PNG end chunk)")
        length, tag = struct.unpack(">I4s", header)
        if stream.tell() + length + 4 > size:
            raise MediaProbeError("the file is truncated or corrupt (a PNG chunk is cut short)")
        crc = zlib.crc32(tag)
        left = length
        first = b""
        while left:
            piece = stream.read(min(left, 1 << 20))
            if not piece:
                raise MediaProbeError("the file is truncated or corrupt (a PNG chunk is cut short)")
            first = first or piece[:13]
            crc = zlib.crc32(piece, crc)
            left -= len(piece)
        if struct.unpack(">I", stream.read(4))[0] != crc:
            raise MediaProbeError("the file is truncated or corrupt (a PNG chunk checksum fails)")
        if tag == b"IHDR" and len(first) == 13:
            width, height, depth, colour = struct.unpack(">IIBB", first[:10])
            row_bits = width * _PNG_CHANNELS.get(colour, 1) * depth
        elif tag == b"IDAT":
            idat += length
        elif tag == b"IEND":
            rows = height * (1 + (row_bits + 7) // 8)
            if idat * _DEFLATE_MAX_RATIO < rows:
                raise MediaProbeError(
                    f"the file is truncated or corrupt (too little pixel data for "
                    f"{width}x{height})"
                )
            return
    raise MediaProbeError("the file is truncated or corrupt (too many PNG chunks)")


def _probe_av(stream: IO[bytes], head: bytes, size: int) -> MediaInfo:
    try:
        container = av.open(stream, "r")
    except Exception as exc:
        if _is_iso_media(head):
            reason = getattr(exc, "strerror", None) or exc
            raise MediaProbeError(f"the file is truncated or corrupt ({reason})") from exc
        raise MediaProbeError("not an image, video or audio file") from exc
    with container:
        try:
            return _describe(container, head, size)
        except MediaProbeError:
            raise
        except Exception as exc:
            raise MediaProbeError(f"the file is truncated or corrupt ({exc})") from exc


def _is_iso_media(head: bytes) -> bool:
    return head[4:8] == b"ftyp"


def _describe(container: av.container.InputContainer, head: bytes, size: int) -> MediaInfo:
    name = container.format.name
    if name.endswith("_pipe") or name == "image2":
        # FFmpeg reads still images too; Pillow already refused this one.
        raise MediaProbeError("the file is truncated or corrupt (unreadable image)")
    videos = [s for s in container.streams.video if not _is_cover_art(s)]
    audios = list(container.streams.audio)
    if not videos and not audios:
        raise MediaProbeError("not an image, video or audio file")
    _check_extent(container, head, size)
    fmt = _container_name(name, head)
    if videos:
        video = videos[0]
        _check_first_frame(container, video)
        rate = video.average_rate or video.guessed_rate
        fps = float(rate) if rate else None
        ctx = video.codec_context
        return MediaInfo(
            kind="video",
            format=fmt,
            size_bytes=size,
            width=ctx.width or None,
            height=ctx.height or None,
            duration=_duration(container, video, fps),
            fps=fps,
            has_audio=bool(audios),
        )
    duration = _duration(container, audios[0], None)
    bit_rate = audios[0].codec_context.bit_rate or container.bit_rate
    if bit_rate and size * 8 < 0.5 * bit_rate * duration:
        # Headers (an MP3's Xing frame, say) promise far more audio than the bytes hold.
        raise MediaProbeError("the file is truncated or corrupt (less data than it claims)")
    return MediaInfo(kind="audio", format=fmt, size_bytes=size, duration=duration)


def _is_cover_art(stream: Any) -> bool:
    # MP3s and M4As carry album art as a one-picture "video" stream.
    return bool(stream.disposition & av.stream.Disposition.attached_pic)


def _container_name(name: str, head: bytes) -> str:
    if name == "mov,mp4,m4a,3gp,3g2,mj2":
        return "mov" if head[8:12] == b"qt  " else "mp4"
    if name == "matroska,webm":
        return "webm" if b"webm" in head[:64] else "mkv"
    return name.split(",")[0]


def _check_extent(container: av.container.InputContainer, head: bytes, size: int) -> None:
    """Refuse files whose own bookkeeping points past the end of the bytes.

    That catches an MP4 cut short after its moov (the sample index) and a WAV cut short (the
    RIFF size), without decoding anything.
    """
    riff = int.from_bytes(head[4:8], "little") if head[:4] == b"RIFF" else 0
    past_end = 0 < riff < 0xFFFFFFFF and riff + 8 > size
    for stream in container.streams:
        entries = stream.index_entries
        if len(entries) and max(e.pos + e.size for e in entries[-8:]) > size:
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
