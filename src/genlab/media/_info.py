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
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from genlab.media._sniff import HEIC, PNG, SNIFF_BYTES, sniff

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


def _kind(mime: str | None) -> Kind | None:
    if mime is None:
        return None
    top = mime.split("/")[0]
    return top if top in ("video", "image", "audio") else None  # type: ignore[return-value]


def probe(source: bytes | str | os.PathLike[str]) -> MediaInfo:
    """The facts of a media file (its bytes or a local path). Never raises on unreadable
    bytes: it returns what is known (at least the size).

    Example:
        >>> probe(b"<html>not media</html>")
        MediaInfo(kind=None, mime=None, extension=None, bytes=22, width=None, height=None, duration=None, fps=None, frames=None, video_codec=None, pix_fmt=None, bit_depth=None, profile=None, audio_codec=None, has_audio=False, images=1)
    """  # noqa: E501
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    found = sniff(data[:SNIFF_BYTES])
    base = MediaInfo(
        kind=_kind(found.mime if found else None),
        mime=found.mime if found else None,
        extension=found.extension if found else None,
        bytes=len(data),
    )
    if base.kind == "image":
        return _image(data, base) or _av(data, base, still=True) or base
    return _av(data, base, still=False) or (_image(data, base) if found is None else None) or base


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


def _png_depth(data: bytes) -> int | None:
    return data[24] if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 24 else None


_MODE_DEPTH = {"1": 1, "I;16": 16, "I;16B": 16, "I;16L": 16, "I;16N": 16, "I": 32, "F": 32}


def _image(data: bytes, base: MediaInfo) -> MediaInfo | None:
    try:
        from PIL import Image
    except ImportError:
        return None
    pillow_reads(data)
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            try:
                turned = image.getexif().get(0x0112, 1) in (5, 6, 7, 8)
            except Exception:  # a broken EXIF block: the stored orientation
                turned = False
            if turned:
                width, height = height, width
            images = int(getattr(image, "n_frames", 1) or 1)
            duration = None
            if images > 1:
                total = 0
                for index in range(images):
                    image.seek(index)
                    image.load()  # WebP tells a frame's duration once it is read
                    total += int(image.info.get("duration", 0) or 0)
                duration = total / 1000 if total else None
            mode = image.mode
            depth = _png_depth(data) if base.mime == PNG.mime else None
            fmt = (image.format or "").lower() or None
    except Exception as exc:  # not an image Pillow reads (HEIC without a plugin, truncated)
        logger.debug("genlab: Pillow cannot read this image (%s)", exc)
        return None
    mime = base.mime or (Image.MIME.get(fmt.upper()) if fmt else None)
    return dataclasses.replace(
        base, kind="image", mime=mime, width=width, height=height, images=images,
        duration=duration, frames=images, pix_fmt=mode,
        bit_depth=depth or _MODE_DEPTH.get(mode, 8), video_codec=None,
    )


def _av(data: bytes, base: MediaInfo, *, still: bool) -> MediaInfo | None:
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            return _from_container(container, base, still)
    except Exception as exc:  # bytes FFmpeg cannot read: what the sniffer knows
        logger.debug("genlab: PyAV cannot read these bytes (%s)", exc)
        return None


def _codec(context: Any) -> str | None:
    """The format's name (``av1``, ``mp3``), not its decoder's (``libdav1d``, ``mp3float``)."""
    codec = context.codec
    name = getattr(codec, "canonical_name", None) or codec.name or context.name
    return str(name) if name else None


def _from_container(container: Any, base: MediaInfo, still: bool) -> MediaInfo | None:
    import av

    video = container.streams.video[0] if container.streams.video else None
    audio = container.streams.audio[0] if container.streams.audio else None
    if video is None and audio is None:
        return None
    seconds = float(container.duration) / 1_000_000 if container.duration else None
    facts: dict[str, Any] = {"has_audio": audio is not None}
    if audio is not None:
        facts["audio_codec"] = _codec(audio.codec_context)
        if audio.duration and audio.time_base and video is None:
            seconds = float(audio.duration * audio.time_base)
    if video is None:
        facts["kind"] = "audio"
        return dataclasses.replace(base, duration=seconds, **facts)
    cc = video.codec_context
    rate = video.average_rate or video.guessed_rate
    fps = float(rate) if rate else None
    if video.duration and video.time_base:
        seconds = float(video.duration * video.time_base)
    frames = int(video.frames or 0) or (round(seconds * fps) if seconds and fps else None)
    pix_fmt = cc.pix_fmt or None
    depth = None
    if pix_fmt:
        try:
            depth = max(c.bits for c in av.VideoFormat(pix_fmt).components)
        except Exception:  # a pixel format PyAV cannot describe
            depth = None
    profile = cc.profile if isinstance(cc.profile, str) and cc.profile else None
    kind: Kind = "image" if still or base.kind == "image" else "video"
    return dataclasses.replace(
        base, kind=kind, width=cc.width or None, height=cc.height or None,
        duration=None if kind == "image" else seconds, fps=None if kind == "image" else fps,
        frames=None if kind == "image" else frames, video_codec=_codec(cc), pix_fmt=pix_fmt,
        bit_depth=depth, profile=profile, **facts,
    )

