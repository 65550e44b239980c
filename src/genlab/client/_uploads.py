"""Local files as reference media: uploaded to the emulator, or inlined where allowed.

The real service has no upload endpoint; references must be public URLs, except images on the
models that take ``data:image/`` Base64 values. The embedded emulator has ``POST /v1/uploads``,
which answers a URL it serves, so notebooks can use local files offline.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genlab._errors import APIError
from genlab.client._transport import Http

FileLike = bytes | str | os.PathLike[str]


def read_file(source: FileLike, filename: str | None) -> tuple[bytes, str]:
    """The bytes and a file name for ``source`` (a path or raw bytes)."""
    if isinstance(source, bytes):
        return source, filename or "upload.bin"
    path = Path(source)
    return path.read_bytes(), filename or path.name


def content_type(filename: str) -> str:
    return mimetypes.guess_type(filename)[0] or "application/octet-stream"


def data_uri(source: FileLike, filename: str | None = None) -> str:
    """A ``data:`` URI for a local image, for the models that accept Base64 images.

    Example:
        >>> data_uri(b"\\x89PNG...", "frame.png")[:22]
        'data:image/png;base64,'
    """
    data, name = read_file(source, filename)
    return f"data:{content_type(name)};base64,{base64.b64encode(data).decode()}"


async def upload(http: Http, source: FileLike, filename: str | None = None) -> str:
    """Upload a local file to the emulator and return the URL it serves it at."""
    data, name = read_file(source, filename)
    answer: Any = await http.post_file("/v1/uploads", name, data, content_type(name))
    if not isinstance(answer, Mapping) or not isinstance(answer.get("url"), str):
        raise APIError(
            "the upload answer held no url; uploads work against the genlab emulator only",
            status=200,
            code="BAD_RESPONSE",
            body=answer,
        )
    return str(answer["url"])
