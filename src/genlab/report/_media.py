"""Media for galleries and reports: read from saved files or fetched URLs, embedded as data URIs.

Why embed: a notebook's output (or a saved report) must show the media wherever it is opened,
after a reload and on Binder, and must never hand the browser a ``localhost`` URL it cannot
reach. So bytes are read by the kernel and written into the page: videos as MP4 data URIs
(they are small), images as downscaled thumbnails.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import threading
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

logger = logging.getLogger("genlab")

Fetch = Callable[[str], bytes]
"""Reads the bytes behind a media URL (raises on failure)."""

MAX_EMBED_BYTES = 5 * 1024 * 1024
"""Videos larger than this are shown by their cover image instead."""
THUMB_WIDTH = 256
"""Images wider than this (in pixels) are downscaled for the page."""
MAX_FETCH_BYTES = 64 * 1024 * 1024
"""No single media item is read into memory past this size."""

_MEDIA_SUFFIXES = frozenset({".mp4", ".mov", ".webm", ".png", ".jpg", ".jpeg", ".webp", ".gif"})
# Files saved next to a result by client.download(): not the result itself.
_SIDE_STEMS = ("_cover", "_last_frame")


@dataclass(frozen=True, slots=True)
class Embed:
    """One media item ready for a page: the element and its data URI, and/or a note for people.

    ``tag`` is None when nothing can be shown; ``note`` then says why.
    """

    tag: Literal["video", "img"] | None
    uri: str = ""
    note: str = ""


def fetch_url(
    url: str,
    *,
    client: httpx.Client | None = None,
    timeout: float = 30.0,
    max_bytes: int = MAX_FETCH_BYTES,
) -> bytes:
    """The bytes behind a public media URL (results are fetched without the API key).

    Args:
        url: an ``http://`` or ``https://`` address.
        client: an httpx client to reuse; a short-lived one is made otherwise.
        timeout: seconds for the whole read to make progress (connecting gets at most 10 s).
        max_bytes: refuse media larger than this instead of filling memory.

    Raises:
        ValueError: not an HTTP(S) URL, or larger than ``max_bytes``.
        httpx.HTTPError: the media could not be fetched.

    Example:
        data = fetch_url(record.results[0].url)
    """
    if httpx.URL(url).scheme not in ("http", "https"):
        raise ValueError("only http(s) media URLs are fetched")
    own = client is None
    http = client or httpx.Client(
        timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)), follow_redirects=True
    )
    try:
        with http.stream("GET", url) as response:
            response.raise_for_status()
            buffer = bytearray()
            for chunk in response.iter_bytes():
                buffer += chunk
                if len(buffer) > max_bytes:
                    raise ValueError(f"larger than {max_bytes / 1e6:.0f} MB")
            return bytes(buffer)
    finally:
        if own:
            http.close()


def sniff(data: bytes) -> str | None:
    """The media type of some bytes, from their magic numbers (None if unknown).

    Example:
        >>> sniff(b"\\x89PNG\\r\\n\\x1a\\n...")
        'image/png'
    """
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"GIF8"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        return "video/quicktime" if data[8:12] == b"qt  " else "video/mp4"
    if data.startswith(b"\x1aE\xdf\xa3"):
        return "video/webm"
    return None


def data_uri(mime: str, data: bytes) -> str:
    """``data:<mime>;base64,...`` for some bytes."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def thumbnail(data: bytes, width: int = THUMB_WIDTH) -> str | None:
    """An image downscaled to at most ``width`` pixels wide, as a data URI.

    JPEG for opaque images, PNG where there is transparency. None when Pillow is not installed
    or the bytes are not an image it can read.
    """
    try:
        from PIL import Image
    except ImportError:  # Pillow is optional for reports; the caller embeds the original
        return None
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.thumbnail((width, width * 16))  # bounded by width only, aspect kept
            alpha = image.mode in ("RGBA", "LA") or (
                image.mode == "P" and "transparency" in image.info
            )
            out = io.BytesIO()
            if alpha:
                image.save(out, "PNG", optimize=True)
                return data_uri("image/png", out.getvalue())
            image.convert("RGB").save(out, "JPEG", quality=85)
            return data_uri("image/jpeg", out.getvalue())
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def saved_paths(value: Any) -> list[str]:
    """The saved file paths of a row: a JSON list (History) or a list of paths (Comparison)."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        value = parsed
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [str(p) for p in value if isinstance(p, str | Path)]
    return []


def _local(paths: Sequence[str], cover: bool) -> Path | None:
    for text in paths:
        path = Path(text)
        if path.suffix.lower() not in _MEDIA_SUFFIXES:
            continue
        is_cover = path.stem.endswith("_cover")
        if cover and is_cover:
            return path
        if not cover and not path.stem.endswith(_SIDE_STEMS):
            return path
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def reason(exc: BaseException) -> str:
    """Why media could not be read, for people, without echoing its (possibly local) URL."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.TransportError):
        return "could not connect"
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc) or type(exc).__name__


class MediaReader:
    """Reads a row's media: its saved file when it still exists, else its URL, each URL once.

    Args:
        fetch: reads a URL; defaults to :func:`fetch_url` over one shared httpx client.
        cache: URL -> bytes, shared between calls (a Comparison keeps one so that its
            gallery and its report fetch each result once).
    """

    def __init__(
        self, fetch: Fetch | None = None, cache: MutableMapping[str, bytes] | None = None
    ) -> None:
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()  # embeds run on several threads; make one client
        self._fetch = fetch
        self._cache: MutableMapping[str, bytes] = cache if cache is not None else {}

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> MediaReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def read(self, path: Path | None, url: str | None) -> bytes | None:
        """The bytes of a saved file, else of a URL; None when there is neither."""
        if path is not None:
            try:
                return path.read_bytes()
            except OSError:
                logger.debug("genlab: %s is gone; fetching the URL instead", path)
        if url is None:
            return None
        cached = self._cache.get(url)
        if cached is None:
            cached = self._fetch(url) if self._fetch is not None else self._fetch_default(url)
            self._cache[url] = cached
        return cached

    def _fetch_default(self, url: str) -> bytes:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=httpx.Timeout(30.0, connect=10.0), follow_redirects=True
                )
            client = self._client
        return fetch_url(url, client=client)

    def embed(
        self,
        row: Mapping[str, Any],
        *,
        max_bytes: int = MAX_EMBED_BYTES,
        thumb_width: int = THUMB_WIDTH,
    ) -> Embed:
        """What a gallery cell shows for one row's first result."""
        paths = saved_paths(row.get("paths"))
        try:
            data = self.read(_local(paths, cover=False), _text(row.get("result_url")))
        except Exception as exc:  # any failure becomes a note in its cell, never a crash
            return Embed(None, note=f"media unavailable ({reason(exc)})")
        if data is None:
            return Embed(None, note="no media saved or linked")
        mime = sniff(data)
        if mime is None:
            return Embed(None, note="media in an unrecognised format")
        if mime.startswith("video/"):
            if len(data) <= max_bytes:
                return Embed("video", data_uri(mime, data))
            size = f"video is {len(data) / 1e6:.1f} MB, too large to embed"
            try:
                cover = self.read(_local(paths, cover=True), _text(row.get("cover_url")))
            except Exception as exc:
                return Embed(None, note=f"{size}; its cover is unavailable ({reason(exc)})")
            thumb = thumbnail(cover, thumb_width) if cover else None
            if thumb is None:
                return Embed(None, note=f"{size}, and it has no cover")
            return Embed("img", thumb, note=f"{size}; showing its cover")
        thumb = thumbnail(data, thumb_width)
        if thumb is not None:
            return Embed("img", thumb)
        if len(data) <= max_bytes:
            return Embed("img", data_uri(mime, data))
        return Embed(None, note=f"image is {len(data) / 1e6:.1f} MB, too large to embed")


def is_missing(value: Any) -> bool:
    """True for None, NaN, pd.NA and NaT; False for lists and other values."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list | tuple | dict | set | str | bytes | int):
        return False
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
