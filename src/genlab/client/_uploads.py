"""Local files as reference media: uploaded to the emulator, or inlined where allowed.

The real service has no upload endpoint; references must be public URLs, except images on the
models that take ``data:image/`` Base64 values. The embedded emulator has ``POST /v1/uploads``,
which answers a URL it serves, so notebooks can use local files offline. The policy that picks
between the two (:func:`inline_reference` when uploads are not possible) is written here once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genlab._errors import ErrorDetail, InvalidParameterError
from genlab.catalog import MB
from genlab.client._files import FileLike, content_type, data_uri, read_file
from genlab.client._transport import Http

MAX_UPLOAD_BYTES = 64 * MB
"""The largest file :func:`upload` sends: the interface's whole-request cap (64 MB), which the
emulator applies to uploads too. Checked before a byte is sent."""


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
