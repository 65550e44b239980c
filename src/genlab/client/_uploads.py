"""Local files: their bytes, media type and ``data:`` URIs, safe file names, and local files
as reference media (uploaded to the emulator, or inlined where allowed).

genlab builds data URIs and sanitises file names here and nowhere else, so every part (the
uploads, the downloads, the widgets, the reports) agrees on both.

The real service has no upload endpoint; references must be public URLs, except images on the
models that take ``data:image/`` Base64 values. The embedded emulator has ``POST /v1/uploads``,
which answers a URL it serves, so notebooks can use local files offline. The policy that picks
between the two (:func:`inline_reference` when uploads are not possible) is written here once.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genlab._errors import ErrorDetail, InvalidParameterError
from genlab.catalog import MB, media_digest
from genlab.client._transport import Http

MAX_UPLOAD_BYTES = 64 * MB
"""The largest file :func:`upload` sends: the interface's whole-request cap (64 MB), which the
emulator applies to uploads too. Checked before a byte is sent."""

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


async def upload(http: Http, source: FileLike, filename: str | None = None) -> str:
    """Upload a local file to the emulator and return the URL it serves it at.

    A path is streamed from disk in chunks (a large file costs no more memory than a small
    one), after its size was checked against :data:`MAX_UPLOAD_BYTES`.

    Raises:
        InvalidParameterError: the file is larger than the emulator takes; nothing was sent.
    """
    if isinstance(source, bytes):
        data, name = read_file(source, filename)
        _check_size(len(data), name)
        return await http.post_file(
            "/v1/uploads", name, data, content_type(name), _upload_url, what="upload answer"
        )
    path = Path(source)
    name = filename or path.name
    with path.open("rb") as file:
        _check_size(os.fstat(file.fileno()).st_size, name)
        return await http.post_file(
            "/v1/uploads", name, file, content_type(name), _upload_url, what="upload answer"
        )


def _check_size(size: int, name: str) -> None:
    if size > MAX_UPLOAD_BYTES:
        message = (
            f"{name} is {size / MB:.1f} MB; the emulator takes uploads of at most "
            f"{MAX_UPLOAD_BYTES // MB} MB. Use a smaller file, or put it somewhere public and "
            "use its URL"
        )
        raise InvalidParameterError(message, errors=[ErrorDetail((), message)])


def _upload_url(answer: Mapping[str, Any]) -> str:
    url = answer.get("url")
    if not isinstance(url, str):
        raise TypeError("it held no url; uploads work against the genlab emulator only")
    return url


def inline_reference(
    data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
) -> str:
    """A local file as a reference where nothing can be uploaded: a ``data:`` URI, or a refusal.

    Only images go inline, and only where the reference list allows ``data:`` URIs
    (``allow_data_uri``, from the catalog's media rules).

    Raises:
        InvalidParameterError: the list needs a public http(s) URL for this file.

    Example:
        >>> inline_reference(b"\\x89PNG...", "frame.png", allow_data_uri=True)[:22]
        'data:image/png;base64,'
        >>> try:
        ...     inline_reference(b"...", "clip.mp4", allow_data_uri=False)
        ... except InvalidParameterError as exc:
        ...     print("needs a public http(s) URL" in str(exc))
        True
    """
    where = f"{field} of this model" if field else "this reference"
    mime = content_type(filename)
    if allow_data_uri and mime.startswith("image/"):
        return data_uri(data, filename)
    if allow_data_uri:
        message = (
            f"{filename} is not an image file ({mime}); only images may be sent inline, so "
            f"{where} needs a public http(s) URL for it"
        )
    else:
        message = (
            f"{where} needs a public http(s) URL; the service cannot take a local file here. "
            f"Put {filename} somewhere public and use its address."
        )
    loc: tuple[str | int, ...] = (field,) if field else ()
    raise InvalidParameterError(message, errors=[ErrorDetail(loc, message)])


def digest_of(source: FileLike) -> str:
    """The content digest of a local file (``sha256:...``), read in chunks from disk.

    Example:
        >>> digest_of(b"abc")[:15]
        'sha256:ba7816bf'
    """
    if isinstance(source, bytes):
        return media_digest(source)
    digest = hashlib.sha256()
    with Path(source).open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()
