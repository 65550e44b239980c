"""What a media file is, from its first bytes: the one sniffer genlab has.

Downloads name files by it when the content type is generic, reports and cards embed by it.
QuickTime files need not start with an ``ftyp`` box: older ones (and some cameras) begin with
``moov``, ``mdat``, ``wide``, ``free`` or ``skip``; those are QuickTime movies (``.mov``).
A WebM signature is the EBML header that Matroska shares; genlab's media are WebM.
"""

from __future__ import annotations

from typing import NamedTuple

SNIFF_BYTES = 16
"""How many leading bytes :func:`sniff` needs to tell every format it knows."""

# A QuickTime movie without ``ftyp``: its first box is one of these.
_QUICKTIME_BOXES = (b"moov", b"mdat", b"wide", b"free", b"skip")


class Sniffed(NamedTuple):
    """A media file's type (``image/png``) and the extension genlab saves it with (``.png``)."""

    mime: str
    extension: str


PNG = Sniffed("image/png", ".png")
JPEG = Sniffed("image/jpeg", ".jpg")
GIF = Sniffed("image/gif", ".gif")
WEBP = Sniffed("image/webp", ".webp")
MP4 = Sniffed("video/mp4", ".mp4")
MOV = Sniffed("video/quicktime", ".mov")
WEBM = Sniffed("video/webm", ".webm")


def sniff(head: bytes) -> Sniffed | None:
    """The type and extension the first bytes of a file show (PNG, JPEG, GIF, WebP, MP4,
    QuickTime, WebM), or None when they show none of these.

    Example:
        >>> sniff(b"\\x89PNG\\r\\n\\x1a\\n...")
        Sniffed(mime='image/png', extension='.png')
        >>> sniff(b"\\x00\\x00\\x00\\x14ftypqt  ").extension, sniff(b"<html>")
        ('.mov', None)
    """
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return WEBP
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return WEBM
    box = head[4:8]
    if box == b"ftyp":
        return MOV if head[8:12] == b"qt  " else MP4
    if box in _QUICKTIME_BOXES:
        return MOV
    return None
