"""Where a payload of provenance lives inside each file format, as byte surgery.

Nothing is decoded or re-encoded: a carrier walks the container's own structure (PNG chunks,
JPEG marker segments, RIFF chunks, ISO-BMFF boxes), drops genlab's previous payload and adds the
new one, leaving every other byte as it was. Each ``put_*`` returns None when the bytes are not
a well-formed file of its format (the caller then keeps them unchanged); each ``get_*`` returns
genlab's payload (UTF-8 JSON) or None.

==========  ==============================================================================
PNG         an ``iTXt`` chunk, keyword ``genlab``, before ``IEND`` (zlib-compressed past
            :data:`PNG_COMPRESS_FROM` bytes; the CRC is the chunk's own).
JPEG        a ``COM`` segment after ``SOI`` and the ``APPn`` segments (JFIF and Exif stay
            first). Past one segment's 65,533 bytes: zlib, split over consecutive ``COM``
            segments tagged ``genlab\\0z`` + index + count.
WebP        an ``XMP`` chunk holding an ``rdf:Description`` in genlab's namespace; an
            existing XMP packet keeps its other descriptions. A simple (``VP8``/``VP8L``)
            file becomes an extended one: a ``VP8X`` chunk with the canvas size and the
            alpha flag read from the bitstream, and the XMP flag set.
MP4 / MOV   a top-level ``uuid`` box (:data:`BOX_UUID`) appended at the end of the file, so
            no sample offset moves; before a trailing ``mfra`` (fragment index) box, which
            readers find from the end. A previous genlab box is cut when only ``free``,
            ``skip`` or ``mfra`` boxes follow it; before media data it becomes a zeroed
            ``free`` box of the same size.
==========  ==============================================================================
"""

from __future__ import annotations

import mmap
import re
import uuid
import zlib
from collections.abc import Iterator
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import unescape as xml_unescape

Data = bytes | bytearray | mmap.mmap
"""File bytes, or a read-only map of a file (slices of both are bytes)."""

MAGIC = b'{"genlab":'
"""How genlab's payload starts: its JSON object's first key is the schema version."""

MAX_INFLATED = 4 * 1024 * 1024
"""A compressed payload is never inflated past this (a hostile file cannot exhaust memory)."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_KEYWORD = b"genlab"
PNG_COMPRESS_FROM = 8 * 1024
"""PNG payloads longer than this are zlib-compressed (shorter ones stay readable as text)."""

JPEG_SEGMENT_MAX = 65533
"""The most bytes one JPEG segment carries (its length field counts itself, up to 65,535)."""
_JPEG_SPLIT = b"genlab\x00z"

BOX_UUID = uuid.uuid5(uuid.NAMESPACE_URL, "urn:genlab:provenance")
"""The user type of genlab's top-level ``uuid`` box in MP4 and MOV files."""

XMP_NAMESPACE = "urn:genlab:provenance:1/"
"""The XML namespace of genlab's description inside a WebP file's XMP packet."""

_MOVABLE = frozenset({b"mfra", b"free", b"skip"})
"""Top-level boxes no offset points into: genlab's box may move them."""
_VP8X_XMP = 0x04
_VP8X_ALPHA = 0x10
_XMP_DESCRIPTION = re.compile(
    rb"<rdf:Description\b[^>]*xmlns:genlab=\"" + re.escape(XMP_NAMESPACE.encode())
    + rb"\"[^>]*>.*?</rdf:Description>\s*",
    re.DOTALL,
)
_XMP_VALUE = re.compile(rb"<genlab:provenance>(.*?)</genlab:provenance>", re.DOTALL)
_XMP_RDF_END = b"</rdf:RDF>"


def inflate(data: bytes) -> bytes | None:
    """zlib ``data`` inflated, or None when it is not zlib or inflates past the cap."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_INFLATED)
    except zlib.error:
        return None
    return None if inflater.unconsumed_tail else out


def _u32be(data: Data, at: int) -> int:
    return int.from_bytes(data[at : at + 4], "big")


def _u32le(data: Data, at: int) -> int:
    return int.from_bytes(data[at : at + 4], "little")


# --- PNG ---------------------------------------------------------------------------------


def _png_chunks(data: Data) -> list[tuple[int, int, bytes]] | None:
    """(start, end, type) of every chunk up to ``IEND``, or None for a broken file."""
    if data[:8] != PNG_SIGNATURE:
        return None
    chunks, pos = [], 8
    while pos + 12 <= len(data):
        end = pos + 12 + _u32be(data, pos)
        kind = bytes(data[pos + 4 : pos + 8])
        if end > len(data):
            return None
        chunks.append((pos, end, kind))
        pos = end
        if kind == b"IEND":
            return chunks
    return None


def _png_text(data: Data, start: int, end: int, kind: bytes) -> bytes | None:
    """The text of a ``genlab`` text chunk (None for another keyword or chunk)."""
    if kind not in (b"iTXt", b"tEXt", b"zTXt"):
        return None
    body = bytes(data[start + 8 : end - 4])
    keyword, sep, rest = body.partition(b"\x00")
    if keyword != PNG_KEYWORD or not sep:
        return None
    if kind == b"tEXt":
        return rest.decode("latin-1").encode()
    if kind == b"zTXt":
        return inflate(rest[1:])
    if len(rest) < 2:
        return None
    compressed, text = rest[0], rest[2:]
    _language, _, text = text.partition(b"\x00")
    _translated, _, text = text.partition(b"\x00")
    return inflate(text) if compressed else text


def put_png(data: Data, payload: bytes) -> bytes | None:
    chunks = _png_chunks(data)
    if chunks is None:
        return None
    compressed = len(payload) > PNG_COMPRESS_FROM
    text = zlib.compress(payload, 9) if compressed else payload
    body = PNG_KEYWORD + b"\x00" + bytes([int(compressed), 0]) + b"\x00\x00" + text
    chunk = (
        len(body).to_bytes(4, "big") + b"iTXt" + body
        + zlib.crc32(b"iTXt" + body).to_bytes(4, "big")
    )
    out = [bytes(data[:8])]
    for start, end, kind in chunks:
        if _png_text(data, start, end, kind) is not None:
            continue  # genlab's earlier chunk: replaced, not duplicated
        if kind == b"IEND":
            out.append(chunk)
        out.append(bytes(data[start:end]))
    out.append(bytes(data[chunks[-1][1] :]))  # whatever trails IEND, as it was
    return b"".join(out)


def get_png(data: Data) -> bytes | None:
    found = None
    for start, end, kind in _png_chunks(data) or ():
        found = _png_text(data, start, end, kind) or found
    return found


# --- JPEG --------------------------------------------------------------------------------


def _jpeg_segments(data: Data) -> tuple[list[tuple[int, int, int]], int] | None:
    """(start, end, marker) of each segment before the first scan, and where the scan
    starts; None for a broken file."""
    if data[:2] != b"\xff\xd8":
        return None
    segments: list[tuple[int, int, int]] = []
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # a fill byte
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # no length
            pos += 2
            continue
        if marker in (0xD8, 0xD9):  # a second SOI, or EOI before any scan
            return None
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        if end < pos + 4 or end > len(data):
            return None
        if marker == 0xDA:
            return segments, pos
        segments.append((pos, end, marker))
        pos = end
    return None


def _jpeg_ours(data: Data, start: int, end: int, marker: int) -> bytes | None:
    """The payload of one of genlab's ``COM`` segments (None for any other segment)."""
    if marker != 0xFE:
        return None
    body = bytes(data[start + 4 : end])
    return body if body.startswith((MAGIC, _JPEG_SPLIT)) else None


def put_jpeg(data: Data, payload: bytes) -> bytes | None:
    parsed = _jpeg_segments(data)
    if parsed is None:
        return None
    segments, scan = parsed
    if len(payload) <= JPEG_SEGMENT_MAX:
        bodies = [payload]
    else:
        packed = zlib.compress(payload, 9)
        size = JPEG_SEGMENT_MAX - len(_JPEG_SPLIT) - 2
        parts = [packed[i : i + size] for i in range(0, len(packed), size)]
        if len(parts) > 255:
            return None
        bodies = [_JPEG_SPLIT + bytes([i, len(parts)]) + p for i, p in enumerate(parts)]
    comments = b"".join(b"\xff\xfe" + (len(b) + 2).to_bytes(2, "big") + b for b in bodies)
    kept = [s for s in segments if _jpeg_ours(data, *s) is None]
    lead = 0  # JFIF (APP0) and Exif (APP1) must come first: the comment follows the APPn run
    while lead < len(kept) and 0xE0 <= kept[lead][2] <= 0xEF:
        lead += 1
    out = [b"\xff\xd8"]
    out += [bytes(data[s:e]) for s, e, _ in kept[:lead]]
    out.append(comments)
    out += [bytes(data[s:e]) for s, e, _ in kept[lead:]]
    out.append(bytes(data[scan:]))
    return b"".join(out)


def get_jpeg(data: Data) -> bytes | None:
    parsed = _jpeg_segments(data)
    if parsed is None:
        return None
    whole, parts, total = None, dict[int, bytes](), 0
    for segment in parsed[0]:
        body = _jpeg_ours(data, *segment)
        if body is None:
            continue
        if body.startswith(MAGIC):
            whole = body
        elif len(body) >= len(_JPEG_SPLIT) + 2:
            index, total = body[len(_JPEG_SPLIT)], body[len(_JPEG_SPLIT) + 1]
            parts[index] = body[len(_JPEG_SPLIT) + 2 :]
    if whole is not None:
        return whole
    if not parts or sorted(parts) != list(range(total)):
        return None
    return inflate(b"".join(parts[i] for i in range(total)))


# --- WebP --------------------------------------------------------------------------------


def _riff_chunks(data: Data) -> list[tuple[int, int, bytes]] | None:
    """(start, end, fourcc) of each chunk of a WebP file (end after the pad byte)."""
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        return None
    riff_end = min(8 + _u32le(data, 4), len(data))
    chunks, pos = [], 12
    while pos + 8 <= riff_end:
        size = _u32le(data, pos + 4)
        if pos + 8 + size > riff_end:
            return None
        end = min(pos + 8 + size + (size & 1), riff_end)
        chunks.append((pos, end, bytes(data[pos : pos + 4])))
        pos = end
    return chunks if chunks and pos == riff_end else None


def _riff_chunk(fourcc: bytes, body: bytes) -> bytes:
    return fourcc + len(body).to_bytes(4, "little") + body + b"\x00" * (len(body) & 1)


def _vp8x_for(data: Data, start: int, kind: bytes) -> bytes | None:
    """The ``VP8X`` chunk that makes a simple WebP extended: canvas size and alpha flag
    from its bitstream (``VP8 `` key frame header, or the ``VP8L`` header)."""
    body = bytes(data[start + 8 : start + 8 + 10])
    if kind == b"VP8 " and len(body) == 10 and body[3:6] == b"\x9d\x01\x2a":
        width = int.from_bytes(body[6:8], "little") & 0x3FFF
        height = int.from_bytes(body[8:10], "little") & 0x3FFF
        alpha = False
    elif kind == b"VP8L" and len(body) >= 5 and body[0] == 0x2F:
        bits = int.from_bytes(body[1:5], "little")
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        alpha = bool(bits >> 28 & 1)
    else:
        return None
    if not (width and height):
        return None
    flags = _VP8X_ALPHA if alpha else 0
    body = bytes([flags, 0, 0, 0]) + (width - 1).to_bytes(3, "little")
    return _riff_chunk(b"VP8X", body + (height - 1).to_bytes(3, "little"))


def _xmp_description(payload: bytes) -> bytes:
    text = xml_escape(payload.decode("utf-8"))
    return (
        f'<rdf:Description rdf:about="" xmlns:genlab="{XMP_NAMESPACE}">'
        f"<genlab:provenance>{text}</genlab:provenance></rdf:Description>\n"
    ).encode()


def _xmp_packet(description: bytes) -> bytes:
    return (
        b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
        b'<x:xmpmeta xmlns:x="adobe:ns:meta/">\n'
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        + description + b"</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end=\"w\"?>"
    )


def put_webp(data: Data, payload: bytes) -> bytes | None:
    chunks = _riff_chunks(data)
    if chunks is None:
        return None
    trailing = bytes(data[chunks[-1][1] :])  # after the RIFF's end: kept, outside it
    description = _xmp_description(payload)
    first_start, first_end, first = chunks[0]
    if first == b"VP8X":
        header = bytearray(data[first_start:first_end])
        rest = chunks[1:]
    else:
        made = _vp8x_for(data, first_start, first)
        if made is None:
            return None
        header, rest = bytearray(made), chunks
    header[8] |= _VP8X_XMP
    out, placed = [bytes(header)], False
    for start, end, kind in rest:
        if kind != b"XMP ":
            out.append(bytes(data[start:end]))
            continue
        packet = bytes(data[start + 8 : start + 8 + _u32le(data, start + 4)])
        packet = _XMP_DESCRIPTION.sub(b"", packet)  # genlab's earlier description
        if _XMP_RDF_END not in packet:
            return None  # an XMP packet genlab cannot add to without losing what it says
        head, _, tail = packet.rpartition(_XMP_RDF_END)
        out.append(_riff_chunk(b"XMP ", head + description + _XMP_RDF_END + tail))
        placed = True
    if not placed:
        out.append(_riff_chunk(b"XMP ", _xmp_packet(description)))
    body = b"WEBP" + b"".join(out)
    return b"RIFF" + len(body).to_bytes(4, "little") + body + trailing


def get_webp(data: Data) -> bytes | None:
    for start, _end, kind in _riff_chunks(data) or ():
        if kind != b"XMP ":
            continue
        packet = bytes(data[start + 8 : start + 8 + _u32le(data, start + 4)])
        described = _XMP_DESCRIPTION.search(packet)
        value = _XMP_VALUE.search(described[0]) if described else None
        if value:
            return xml_unescape(value[1].decode("utf-8", "replace")).encode()
    return None


# --- MP4 and MOV (ISO base media) --------------------------------------------------------


def _boxes(data: Data) -> list[tuple[int, int, bytes]] | None:
    """(start, end, type) of each top-level box; None unless they tile the file exactly."""
    boxes, pos, size_of_file = [], 0, len(data)
    while pos < size_of_file:
        if pos + 8 > size_of_file:
            return None
        size, kind, header = _u32be(data, pos), bytes(data[pos + 4 : pos + 8]), 8
        if size == 1:
            size, header = int.from_bytes(data[pos + 8 : pos + 16], "big"), 16
        elif size == 0:  # "to the end of the file"
            size = size_of_file - pos
        if size < header or pos + size > size_of_file:
            return None
        boxes.append((pos, pos + size, kind))
        pos += size
    return boxes or None


def _ours(data: Data, start: int, kind: bytes) -> bool:
    """A ``uuid`` box of genlab's (always written with a 32-bit size)."""
    return (
        kind == b"uuid" and _u32be(data, start) != 1
        and data[start + 8 : start + 24] == BOX_UUID.bytes
    )


def _genlab_boxes(data: Data, boxes: list[tuple[int, int, bytes]]) -> Iterator[tuple[int, int]]:
    for start, end, kind in boxes:
        if _ours(data, start, kind):
            yield start, end


def put_isobmff(data: Data, payload: bytes) -> bytes | None:
    boxes = _boxes(data)
    if boxes is None:
        return None
    # genlab's earlier box is cut when only boxes nothing points into follow it; otherwise
    # (an mdat after it: sample offsets point there) it becomes a zeroed free box in place.
    cut, movable = set(), True
    for start, _end, kind in reversed(boxes):
        if _ours(data, start, kind):
            if movable:
                cut.add(start)
        elif kind not in _MOVABLE:
            movable = False
    kept = [box for box in boxes if box[0] not in cut]
    if not kept:
        return None
    out, last = bytearray(), 0
    for start, end, kind in kept:
        last = len(out)
        if _ours(data, start, kind):
            out += data[start : start + 4] + b"free" + bytes(end - start - 8)
        else:
            out += data[start:end]
    start, end, kind = kept[-1]
    if _u32be(data, start) == 0:  # "to the end": give it its size, or it swallows the box
        if end - start >= 1 << 32:
            return None
        out[last : last + 4] = (end - start).to_bytes(4, "big")
    box = (24 + len(payload)).to_bytes(4, "big") + b"uuid" + BOX_UUID.bytes + payload
    at = last if kind == b"mfra" else len(out)  # mfra is found from the file's end
    out[at:at] = box
    return bytes(out)


def get_isobmff(data: Data) -> bytes | None:
    boxes = _boxes(data)
    found = None
    for start, end in _genlab_boxes(data, boxes or []):
        found = bytes(data[start + 24 : end])
    return found
