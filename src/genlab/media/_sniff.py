"""What a media file is, from its first bytes: the one sniffer genlab has.

Downloads name files by it when the content type is generic, previews and cards embed by it,
and the suffix sets here (:data:`MEDIA_SUFFIXES`, :data:`VIDEO_SUFFIXES`,
:data:`IMAGE_SUFFIXES`) are the only lists of media extensions genlab keeps.

ISO base media files (MP4, QuickTime, AVIF, HEIF) share the ``ftyp`` box; its major brand (and,
when that is a generic one such as ``mif1``, the compatible brands after it) tells them apart.
QuickTime files need not start with an ``ftyp`` box: older ones (and some cameras) begin with
``moov``, ``mdat``, ``wide``, ``free`` or ``skip``; those are QuickTime movies (``.mov``).
WebM and Matroska share the EBML header; its DocType (``webm`` or ``matroska``) tells them apart.
"""

from __future__ import annotations

from typing import NamedTuple

SNIFF_BYTES = 64
"""How many leading bytes :func:`sniff` needs to tell every format it knows."""

# A QuickTime movie without ``ftyp``: its first box is one of these.
_QUICKTIME_BOXES = (b"moov", b"mdat", b"wide", b"free", b"skip")


class Sniffed(NamedTuple):
    """A media file's type (``image/png``) and the extension genlab saves it with (``.png``).

    Example:
        >>> sniff(bytes.fromhex("89504e470d0a1a0a") + bytes(24))
        Sniffed(mime='image/png', extension='.png')
        >>> by_extension(".MP4")
        Sniffed(mime='video/mp4', extension='.mp4')
    """

    mime: str
    extension: str


PNG = Sniffed("image/png", ".png")
JPEG = Sniffed("image/jpeg", ".jpg")
GIF = Sniffed("image/gif", ".gif")
WEBP = Sniffed("image/webp", ".webp")
BMP = Sniffed("image/bmp", ".bmp")
TIFF = Sniffed("image/tiff", ".tiff")
AVIF = Sniffed("image/avif", ".avif")
HEIC = Sniffed("image/heic", ".heic")
MP4 = Sniffed("video/mp4", ".mp4")
MOV = Sniffed("video/quicktime", ".mov")
WEBM = Sniffed("video/webm", ".webm")
MKV = Sniffed("video/x-matroska", ".mkv")
MP3 = Sniffed("audio/mpeg", ".mp3")
WAV = Sniffed("audio/wav", ".wav")
OGG = Sniffed("audio/ogg", ".ogg")

FORMATS = (PNG, JPEG, GIF, WEBP, BMP, TIFF, AVIF, HEIC, MP4, MOV, WEBM, MKV, MP3, WAV, OGG)
"""Every format :func:`sniff` tells, one entry each."""

_ALIASES = {".jpeg": ".jpg", ".tif": ".tiff", ".heif": ".heic", ".m4v": ".mp4"}
VIDEO_SUFFIXES = frozenset(
    {f.extension for f in FORMATS if f.mime.startswith("video/")} | {".m4v"}
)
"""Extensions of kept videos (``.mp4``, ``.mov``, ``.webm``, ``.mkv`` ...)."""
IMAGE_SUFFIXES = frozenset(
    {f.extension for f in FORMATS if f.mime.startswith("image/")} | {".jpeg", ".tif", ".heif"}
)
"""Extensions of kept images (``.png``, ``.jpg``, ``.jpeg``, ``.tiff``, ``.avif`` ...)."""
AUDIO_SUFFIXES = frozenset(f.extension for f in FORMATS if f.mime.startswith("audio/"))
"""Extensions of kept audio (``.mp3``, ``.wav``, ``.ogg``)."""
MEDIA_SUFFIXES = VIDEO_SUFFIXES | IMAGE_SUFFIXES | AUDIO_SUFFIXES
"""Every extension a kept media file may have."""

CONTENT_TYPES: dict[str, str] = {f.mime: f.extension for f in FORMATS} | {
    "image/jpg": ".jpg", "image/pjpeg": ".jpg", "image/x-ms-bmp": ".bmp", "image/heif": ".heic",
    "video/matroska": ".mkv", "audio/mp3": ".mp3", "audio/x-wav": ".wav", "audio/wave": ".wav",
    "audio/vnd.wave": ".wav", "video/ogg": ".ogg", "video/x-m4v": ".mp4",
}
"""Media type (lower case, without parameters) -> the extension genlab keeps it under."""

_BY_EXTENSION = {f.extension: f for f in FORMATS}


def by_extension(suffix: str) -> Sniffed | None:
    """The format a file extension names (``.JPEG`` -> JPEG), or None.

    Example:
        >>> by_extension(".TIF")
        Sniffed(mime='image/tiff', extension='.tiff')
    """
    suffix = suffix.lower()
    return _BY_EXTENSION.get(_ALIASES.get(suffix, suffix))


# ISO-BMFF brands. Image brands first: an AVIF or HEIC file lists ``mif1`` and often ``iso*``.
_AVIF_BRANDS = (b"avif", b"avis")
_HEIC_BRANDS = (b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1")


def _isobmff(head: bytes) -> Sniffed:
    major = head[8:12]
    if major == b"qt  ":
        return MOV
    size = int.from_bytes(head[:4], "big")
    brands = [major] + [head[i:i + 4] for i in range(16, min(size, len(head)) - 3, 4)]
    if any(b in _AVIF_BRANDS for b in brands):
        return AVIF
    if major in _HEIC_BRANDS:
        return HEIC
    return MP4  # isom, mp41, mp42, avc1, iso2..iso9, dash, M4V, 3gp ...: an MP4 player plays it


def _ebml(head: bytes) -> Sniffed:
    # DocType element: ID 0x4282, a one-byte size (0x80 | n), then the ASCII name.
    at = head.find(b"\x42\x82", 0, SNIFF_BYTES)
    if at >= 0 and at + 3 < len(head):
        length = head[at + 2] & 0x7F
        if head[at + 3:at + 3 + length] == b"matroska":
            return MKV
    return WEBM


def sniff(head: bytes) -> Sniffed | None:
    """The type and extension the first bytes of a file show, or None when they show none of
    the formats genlab knows (:data:`FORMATS`). :data:`SNIFF_BYTES` bytes are enough.

    Example:
        >>> sniff(b"\\x89PNG\\r\\n\\x1a\\n...")
        Sniffed(mime='image/png', extension='.png')
        >>> sniff(b"\\x00\\x00\\x00\\x14ftypqt  ").extension, sniff(b"<html>")
        ('.mov', None)
        >>> sniff(b"\\x00\\x00\\x00\\x1cftypavif\\x00\\x00\\x00\\x00avifmif1miaf").extension
        '.avif'
        >>> sniff(b"II*\\x00\\x08\\x00\\x00\\x00").mime
        'image/tiff'
    """
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    if head[:4] == b"RIFF":
        kind = head[8:12]
        return WEBP if kind == b"WEBP" else WAV if kind == b"WAVE" else None
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return TIFF
    if head.startswith(b"BM") and len(head) >= 18 and head[6:10] == b"\x00\x00\x00\x00" and \
            int.from_bytes(head[14:18], "little") in (12, 40, 52, 56, 64, 108, 124):
        return BMP
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return _ebml(head)
    box = head[4:8]
    if box == b"ftyp":
        return _isobmff(head)
    if box in _QUICKTIME_BOXES:
        return MOV
    if head.startswith(b"OggS"):
        return OGG
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE6 == 0xE2):
        return MP3  # an ID3 tag, or an MPEG audio layer III frame sync
    return None
