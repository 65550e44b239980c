"""Local files: reading a path or bytes, their media type, ``data:`` URIs, and safe file names.

genlab builds data URIs and sanitises file names here and nowhere else, so every part (the
uploads, the downloads, the widgets, the reports) agrees on both.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
from pathlib import Path

FileLike = bytes | str | os.PathLike[str]
"""A local file: its path, or its bytes."""

MAX_FILENAME = 128
"""The longest name :func:`safe_filename` returns; room is left for suffixes like ``_cover``."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
# A suffix this short is kept when a long name is cut, so the file still opens with its app.
_KEPT_SUFFIX = 16


def read_file(source: FileLike, filename: str | None = None) -> tuple[bytes, str]:
    """The bytes and a file name for ``source`` (a path or raw bytes).

    Example:
        >>> read_file(b"abc")
        (b'abc', 'upload.bin')
    """
    if isinstance(source, bytes):
        return source, filename or "upload.bin"
    path = Path(source)
    return path.read_bytes(), filename or path.name


def content_type(filename: str) -> str:
    """The media type a file name suggests (``application/octet-stream`` when unknown).

    Example:
        >>> content_type("frame.PNG"), content_type("notes")
        ('image/png', 'application/octet-stream')
    """
    return mimetypes.guess_type(filename.lower())[0] or "application/octet-stream"


def data_uri(source: FileLike, filename: str | None = None, *, mime: str | None = None) -> str:
    """A ``data:`` URI holding a file's bytes, Base64-encoded.

    The media type is ``mime`` when given, else guessed from the file name. The service takes
    such values only for images, on the models that allow them; reports and widgets embed
    media with them.

    Args:
        source: a path, or the bytes themselves.
        filename: the name whose extension tells the media type (defaults to the path's).
        mime: the media type, e.g. ``"video/mp4"``; wins over the file name.

    Example:
        >>> data_uri(b"\\x89PNG...", "frame.png")[:22]
        'data:image/png;base64,'
        >>> data_uri(b"abc", mime="text/plain")
        'data:text/plain;base64,YWJj'
    """
    data, name = read_file(source, filename)
    kind = mime or content_type(name)
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def safe_filename(name: str, default: str = "file") -> str:
    """``name`` made safe as one file name inside a folder of genlab's choosing.

    Anything but ASCII letters, digits, ``.``, ``_`` and ``-`` becomes ``_`` (so no ``/``,
    ``\\``, NUL or drive letter survives), leading dots are dropped (no ``.``, ``..`` or hidden
    files), and long names are cut to :data:`MAX_FILENAME` characters, keeping a short
    extension. ``default`` (made safe the same way) stands in when nothing is left.

    Example:
        >>> safe_filename("../../etc/passwd")
        '_.._etc_passwd'
        >>> safe_filename("task 42/ü.mp4"), safe_filename(".."), safe_filename("", "task")
        ('task_42__.mp4', 'file', 'task')
    """
    cleaned = _UNSAFE.sub("_", name).lstrip(".")
    if len(cleaned) > MAX_FILENAME:
        stem, dot, suffix = cleaned.rpartition(".")
        if dot and stem and len(suffix) < _KEPT_SUFFIX:
            cleaned = stem[: MAX_FILENAME - len(suffix) - 1] + "." + suffix
        else:
            cleaned = cleaned[:MAX_FILENAME]
    if cleaned:
        return cleaned
    return _UNSAFE.sub("_", default).lstrip(".")[:MAX_FILENAME] or "file"
