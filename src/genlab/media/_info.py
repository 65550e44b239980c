"""The facts of a media file: what it is, how large, how long, which codecs, which audio.

:func:`probe` reads them from the container and stream headers (PyAV) or the image header
(Pillow), decoding no frame of a video; both are imported only when it is called, so the client
and a base install (without them) stay light. Without them, or for bytes neither reads, the
facts are what the first bytes and the size tell. :class:`MediaInfo` round-trips through
JSON (:meth:`MediaInfo.to_dict`, :meth:`MediaInfo.from_dict`), so a history can journal it and
a newer genlab read it back.

Example:
    >>> info = probe(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(8))  # a PNG header, nothing more
    >>> info.kind, info.mime, info.extension, info.bytes
    ('image', 'image/png', '.png', 16)
    >>> MediaInfo.from_dict(info.to_dict() | {"added_later": 1}) == info
    True
"""

from __future__ import annotations

import dataclasses
import functools
import io
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from pathlib import Path
from typing import IO, Any, Literal

from genlab.media._sniff import BMP, GIF, HEIC, JPEG, PNG, SNIFF_BYTES, TIFF, WEBP, sniff

logger = logging.getLogger("genlab")

Kind = Literal["video", "image", "audio"]


@dataclass(frozen=True, slots=True)
class MediaInfo:
    """What one media file is. Unknown facts are None (``has_audio`` False, ``images`` 1).

    ``width`` and ``height`` are as shown (an EXIF-rotated photo's are swapped); ``duration``
    is in seconds; ``images`` counts the frames of an animated image (1 for a still one);
    ``bit_depth`` is bits per sample (8, 10, 16 ...); ``pix_fmt`` is FFmpeg's pixel format for
    videos (``yuv420p``) and Pillow's mode for images (``RGB``, ``CMYK``, ``I;16``).

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> png = buffer.getvalue()
        >>> info = probe(png)
        >>> info.kind, info.mime, info.width, info.height, info.has_audio
        ('image', 'image/png', 64, 48, False)
    """

    kind: Kind | None = None
    mime: str | None = None
    extension: str | None = None
    bytes: int = 0
    width: int | None = None
    height: int | None = None
    duration: float | None = None
    fps: float | None = None
    frames: int | None = None
    video_codec: str | None = None
    pix_fmt: str | None = None
    bit_depth: int | None = None
    profile: str | None = None
    audio_codec: str | None = None
    has_audio: bool = False
    images: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The facts as a JSON-safe dict (numbers, strings, booleans and None).

        Example:
            >>> MediaInfo(kind="video", width=8).to_dict()["width"]
            8
        """
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MediaInfo:
        """Facts read back from :meth:`to_dict`'s dict; keys this version does not know are
        ignored and missing ones take their defaults, so older and newer journals both read.

        Example:
            >>> MediaInfo.from_dict({"kind": "image", "width": "4", "colour": "red"}).width
            4
        """
        known: dict[str, Any] = {}
        for field in fields(cls):
            if field.name not in data:
                continue
            value = data[field.name]
            default = field.default
            try:
                if value is None:
                    pass
                elif isinstance(default, bool):
                    value = bool(value)
                elif field.name in ("bytes", "images", "width", "height", "frames", "bit_depth"):
                    value = int(value)
                elif field.name in ("duration", "fps"):
                    value = float(value)
                else:
                    value = str(value)
            except (TypeError, ValueError):
                continue  # an unreadable value: that fact stays unknown
            if value is None and field.name in ("bytes", "images", "has_audio"):
                continue
            known[field.name] = value
        if known.get("kind") not in (None, "video", "image", "audio"):
            known.pop("kind")
        return cls(**known)


class MediaProbeError(ValueError):
    """The bytes are not usable media (:func:`probe` with ``strict=True``); the message says
    why: empty, not media, or truncated or corrupt.

    Example:
        >>> probe(b"<html>not media</html>", strict=True)
        Traceback (most recent call last):
        ...
        genlab.media._info.MediaProbeError: not an image, video or audio file
    """


Source = bytes | str | os.PathLike[str] | IO[bytes]
"""What :func:`probe` reads: the bytes, a local path, or a file opened for binary reading."""

DECODE_PIXELS = 4096 * 4096
"""A strict probe decodes images up to this many pixels (~50 MB of RGB at most) to prove they
are complete; larger ones are judged from their structure (PNG chunk checksums, JPEG end
marker), so a 65536-pixel-wide PNG is described, not refused."""

# Formats Pillow may claim. Listing them keeps plugins with weak signatures (TGA, ...) from
# mistaking random bytes for an image; HEIF is there once pillow-heif registered it.
_IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF", "AVIF", "HEIF")
# Formats only Pillow reads: when it refuses one of these, the file is broken, not foreign.
_PILLOW_ONLY = (PNG, JPEG, GIF, WEBP, BMP, TIFF)
_MAX_PACKETS = 20_000  # when a container states no duration, count at most this many packets
_MAX_FIRST_FRAME_PACKETS = 64  # packets a strict probe reads looking for a first frame
_FRAME_WALK_PIXELS = 8 * DECODE_PIXELS  # an animation's frames are read for its length up to this


def probe(source: Source, *, strict: bool = False) -> MediaInfo:
    """The facts of a media file: its bytes, a local path, or a file opened for binary
    reading (read from its start, left open; nothing is read into memory whole).

    By default it never raises on unreadable bytes: it returns what is known (at least the
    size), which is what a kept result needs. ``strict=True`` is for media that must be usable
    (the emulator's uploads and reference media): it also decodes an image (up to
    :data:`DECODE_PIXELS`) or a video's first frame and checks that the file is as long as its
    headers say, and raises :class:`MediaProbeError` for an empty file, bytes that are no media,
    or a file cut short. Work and memory are bounded whatever the input.

    Example:
        >>> probe(b"<html>not media</html>")
        MediaInfo(kind=None, mime=None, extension=None, bytes=22, width=None, height=None, duration=None, fps=None, frames=None, video_codec=None, pix_fmt=None, bit_depth=None, profile=None, audio_codec=None, has_audio=False, images=1)
        >>> probe(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(8), strict=True)  # a PNG header, nothing more
        Traceback (most recent call last):
        ...
        genlab.media._info.MediaProbeError: the file is truncated or corrupt (...)
    """  # noqa: E501
    if isinstance(source, bytes):
        return _probe(io.BytesIO(source), strict)
    if isinstance(source, str | os.PathLike):
        with Path(source).open("rb") as file:
            return _probe(file, strict)
    return _probe(source, strict)


def _kind(mime: str | None) -> Kind | None:
    if mime is None:
        return None
    top = mime.split("/")[0]
    return top if top in ("video", "image", "audio") else None  # type: ignore[return-value]


def _probe(stream: IO[bytes], strict: bool) -> MediaInfo:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    if strict and not size:
        raise MediaProbeError("empty file")
    stream.seek(0)
    head = stream.read(SNIFF_BYTES)
    found = sniff(head)
    base = MediaInfo(
        kind=_kind(found.mime if found else None),
        mime=found.mime if found else None,
        extension=found.extension if found else None,
        bytes=size,
    )
    info = _image(stream, head, base, strict) if base.kind in ("image", None) else None
    if info is not None:
        return info
    try:
        return _av(stream, head, base, strict)
    except MediaProbeError:
        if strict:
            raise
        return base  # what the sniffer and the size tell


def _corrupt(reason: object) -> MediaProbeError:
    return MediaProbeError(f"the file is truncated or corrupt ({reason})")


def pillow_reads(data: bytes) -> None:
    """Before Pillow opens ``data``: a HEIC file is read through pillow-heif when it is
    installed (the ``notebook`` extra), whole (every tile of a grid), at its size and turned
    as it is shown. Without it, FFmpeg reads the first coded image only, padded to its coding
    blocks."""
    found = sniff(data[:SNIFF_BYTES])
    if found is not None and found.mime == HEIC.mime:
        _heif_opener()


@functools.cache
def _heif_opener() -> bool:
    try:
        from pillow_heif import register_heif_opener
    except ImportError:
        return False
    register_heif_opener()
    return True


def _png_depth(head: bytes) -> int | None:
    return head[24] if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) > 24 else None


_MODE_DEPTH = {"1": 1, "I;16": 16, "I;16B": 16, "I;16L": 16, "I;16N": 16, "I": 32, "F": 32}


def _open_image(stream: IO[bytes], head: bytes) -> Any:
    """Pillow's reader of the first format that claims the file, opened without Pillow's
    decompression-bomb refusal: only the header is read, so the size costs nothing yet."""
    import struct

    from PIL import Image, UnidentifiedImageError

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
            return factory(stream, "")
        except (SyntaxError, IndexError, TypeError, struct.error) as exc:
            raise UnidentifiedImageError(str(exc)) from exc
    raise UnidentifiedImageError("no image format claims the file")


def _image(stream: IO[bytes], head: bytes, base: MediaInfo, strict: bool) -> MediaInfo | None:
    """Pillow's facts of an image; None when Pillow does not read it (then PyAV may). A strict
    probe raises instead when the file is one only Pillow reads, or is cut short."""
    try:
        from PIL import UnidentifiedImageError
    except ImportError:
        if strict:
            raise MediaProbeError("reading images needs Pillow: pip install pillow") from None
        return None
    if base.mime == HEIC.mime:
        _heif_opener()
    try:
        image = _open_image(stream, head)
    except UnidentifiedImageError as exc:
        if strict and (base.mime, base.extension) in _PILLOW_ONLY:
            raise _corrupt(exc) from exc
        logger.debug("genlab: Pillow cannot read this image (%s)", exc)
        return None
    except Exception as exc:  # Pillow raises many types for malformed headers
        if strict:
            raise _corrupt(exc) from exc
        logger.debug("genlab: Pillow cannot read this image (%s)", exc)
        return None
    try:
        with image:
            return _image_facts(image, stream, head, base, strict)
    except Exception as exc:  # a file cut short, a broken frame
        if not strict:
            logger.debug("genlab: Pillow cannot read this image (%s)", exc)
            return None
        if isinstance(exc, MediaProbeError):
            raise
        raise _corrupt(exc) from exc


def _image_facts(
    image: Any, stream: IO[bytes], head: bytes, base: MediaInfo, strict: bool
) -> MediaInfo:
    from PIL import Image

    width, height = image.size
    fmt = (image.format or "").lower() or None
    if width <= 0 or height <= 0:
        raise _corrupt(f"size {width}x{height}")
    if strict:  # decoding the pixels is the surest way to notice a file cut short
        if width * height <= DECODE_PIXELS:
            image.load()
        else:
            _check_structure(stream, fmt, base.bytes)
    try:
        turned = image.getexif().get(0x0112, 1) in (5, 6, 7, 8)
    except Exception:  # a broken EXIF block: the stored orientation
        turned = False
    images = int(getattr(image, "n_frames", 1) or 1)
    duration = None
    if images > 1 and width * height * images <= _FRAME_WALK_PIXELS:
        total = 0
        for index in range(images):
            image.seek(index)
            image.load()  # WebP tells a frame's duration once it is read
            total += int(image.info.get("duration", 0) or 0)
        duration = total / 1000 if total else None
    if turned:
        width, height = height, width
    mode = image.mode
    depth = _png_depth(head) if base.mime == PNG.mime else None
    mime = base.mime or (Image.MIME.get(fmt.upper()) if fmt else None)
    return dataclasses.replace(
        base, kind="image", mime=mime, width=width, height=height, images=images,
        duration=duration, frames=images, pix_fmt=mode,
        bit_depth=depth or _MODE_DEPTH.get(mode, 8), video_codec=None,
    )


def _check_structure(stream: IO[bytes], fmt: str | None, size: int) -> None:
    """Notice a large image cut short without decoding it."""
    if fmt == "png":
        _check_png(stream, size)
    elif fmt in ("jpeg", "mpo"):
        stream.seek(max(0, size - 64))
        if b"\xff\xd9" not in stream.read(64):
            raise _corrupt("no JPEG end marker")


# Deflate cannot shrink data by more than ~1032:1; pixel data smaller than this share of the
# rows it must hold cannot be complete.
_DEFLATE_MAX_RATIO = 1100
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _check_png(stream: IO[bytes], size: int) -> None:
    """Walk a PNG's chunks to IEND, checking each CRC, and check that the compressed pixel data
    could hold every row; reads the file in bounded pieces and decodes nothing."""
    import struct
    import zlib

    stream.seek(8)
    width = height = row_bits = 0
    idat = 0
    for _ in range(1_000_000):
        header = stream.read(8)
        if len(header) < 8:
            raise _corrupt("no PNG end chunk")
        length, tag = struct.unpack(">I4s", header)
        if stream.tell() + length + 4 > size:
            raise _corrupt("a PNG chunk is cut short")
        crc = zlib.crc32(tag)
        left = length
        first = b""
        while left:
            piece = stream.read(min(left, 1 << 20))
            if not piece:
                raise _corrupt("a PNG chunk is cut short")
            first = first or piece[:13]
            crc = zlib.crc32(piece, crc)
            left -= len(piece)
        if struct.unpack(">I", stream.read(4))[0] != crc:
            raise _corrupt("a PNG chunk checksum fails")
        if tag == b"IHDR" and len(first) == 13:
            width, height, depth, colour = struct.unpack(">IIBB", first[:10])
            row_bits = width * _PNG_CHANNELS.get(colour, 1) * depth
        elif tag == b"IDAT":
            idat += length
        elif tag == b"IEND":
            rows = height * (1 + (row_bits + 7) // 8)
            if idat * _DEFLATE_MAX_RATIO < rows:
                raise _corrupt(f"too little pixel data for {width}x{height}")
            return
    raise _corrupt("too many PNG chunks")


def _av(stream: IO[bytes], head: bytes, base: MediaInfo, strict: bool) -> MediaInfo:
    """PyAV's facts of a video, an audio, or an image Pillow does not read; raises
    :class:`MediaProbeError` when FFmpeg cannot read the bytes as media."""
    try:
        import av
    except ImportError:
        raise MediaProbeError("reading videos needs PyAV: pip install av") from None
    stream.seek(0)
    try:
        container = av.open(stream, mode="r")
    except Exception as exc:
        logger.debug("genlab: PyAV cannot read these bytes (%s)", exc)
        if head[4:8] == b"ftyp":  # an MP4 or QuickTime file FFmpeg cannot open: cut short
            raise _corrupt(getattr(exc, "strerror", None) or exc) from exc
        raise MediaProbeError("not an image, video or audio file") from exc
    with container:
        try:
            return _from_container(container, head, base, strict)
        except MediaProbeError:
            raise
        except Exception as exc:
            logger.debug("genlab: PyAV cannot read these bytes (%s)", exc)
            raise _corrupt(exc) from exc


def _codec(context: Any) -> str | None:
    """The format's name (``av1``, ``mp3``), not its decoder's (``libdav1d``, ``mp3float``)."""
    codec = context.codec
    name = getattr(codec, "canonical_name", None) or codec.name or context.name
    return str(name) if name else None


def _is_cover_art(stream: Any) -> bool:
    # MP3s and M4As carry album art as a one-picture "video" stream.
    import av

    return bool(stream.disposition & av.stream.Disposition.attached_pic)


def _from_container(container: Any, head: bytes, base: MediaInfo, strict: bool) -> MediaInfo:
    import av

    name = container.format.name
    still = base.kind == "image"  # an image Pillow does not read (HEIC without pillow-heif)
    if strict and (name.endswith("_pipe") or name == "image2"):
        raise _corrupt("unreadable image")  # FFmpeg reads still images too; Pillow refused it
    videos = [s for s in container.streams.video if not _is_cover_art(s)]
    audio = container.streams.audio[0] if container.streams.audio else None
    if not videos and audio is None:
        raise MediaProbeError("not an image, video or audio file")
    if strict:
        _check_extent(container, head, base.bytes)
    facts: dict[str, Any] = {"has_audio": audio is not None}
    if audio is not None:
        facts["audio_codec"] = _codec(audio.codec_context)
    if not videos:
        assert audio is not None
        seconds = _duration(container, audio, None, strict)
        bit_rate = audio.codec_context.bit_rate or container.bit_rate
        if strict and bit_rate and seconds and base.bytes * 8 < 0.5 * bit_rate * seconds:
            # Headers (an MP3's Xing frame, say) promise far more audio than the bytes hold.
            raise _corrupt("less data than it claims")
        return dataclasses.replace(base, kind="audio", duration=seconds, **facts)
    video = videos[0]
    if strict:
        _check_first_frame(container, video)
    cc = video.codec_context
    rate = video.average_rate or video.guessed_rate
    fps = float(rate) if rate else None
    seconds = None if still else _duration(container, video, fps, strict)
    frames = int(video.frames or 0) or (round(seconds * fps) if seconds and fps else None)
    pix_fmt = cc.pix_fmt or None
    depth = None
    if pix_fmt:
        try:
            depth = max(c.bits for c in av.VideoFormat(pix_fmt).components)
        except Exception:  # a pixel format PyAV cannot describe
            depth = None
    profile = cc.profile if isinstance(cc.profile, str) and cc.profile else None
    return dataclasses.replace(
        base, kind="image" if still else "video", width=cc.width or None,
        height=cc.height or None, duration=seconds, fps=None if still else fps,
        frames=None if still else frames, video_codec=_codec(cc), pix_fmt=pix_fmt,
        bit_depth=depth, profile=profile, **facts,
    )


def _check_extent(container: Any, head: bytes, size: int) -> None:
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
        raise _corrupt("shorter than its headers say")


def _check_first_frame(container: Any, stream: Any) -> None:
    """Decode the first video frame, reading a bounded number of packets."""
    for count, packet in enumerate(container.demux(stream)):
        if count >= _MAX_FIRST_FRAME_PACKETS:
            break
        if packet.decode():  # the last, empty packet flushes frames the decoder held back
            return
    raise _corrupt("no video frame decodes")


def _duration(container: Any, stream: Any, fps: float | None, strict: bool) -> float | None:
    """Seconds, from the stream, the container, the frame count, or a bounded packet scan;
    None when none of them tells (a strict probe raises)."""
    import av

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
        if strict:
            raise _corrupt("no duration")
        return None
    return end
