"""Media for galleries, reports and task cards: read from saved files or through a fetch
callable, embedded as data URIs.

Why embed: a notebook's output (or a saved report) must show the media wherever it is opened,
after a reload and on Binder, and must never hand the browser a ``localhost`` URL it cannot
reach. So bytes are read by the kernel and written into the page: videos as MP4 previews
re-encoded at display size (:func:`genlab.media.preview.video_preview`; the original stays on
disk and is linked), images as downscaled thumbnails that enlarge on click.

Bytes come from saved files (on disk, or in object storage such as ``s3://``: read through
:func:`genlab.media.read_media`, so reports never import fsspec), or from the ``fetch``
callable the caller passes (usually ``client.fetch_media``: the client's one HTTP stack, its
retries and its key policy). Reports make no HTTP requests of their own: without a fetch, a
result that was not saved is shown with a note saying so.
"""

from __future__ import annotations

import io
import json
import logging
import math
import re
import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from genlab._errors import GenlabError, MediaError
from genlab.client import data_uri
from genlab.media import media_location, media_name, media_size, read_media, sniff
from genlab.media.preview import PREVIEW_WIDTH, poster, video_preview

logger = logging.getLogger("genlab")

Fetch = Callable[[str], bytes]
"""Reads the bytes behind a media URL and raises on failure, e.g. ``client.fetch_media``."""

MAX_EMBED_BYTES = 5 * 1024 * 1024
"""Videos larger than this are shown by their cover image instead."""
THUMB_WIDTH = 480
"""Images wider than this (in pixels) are downscaled for the page (shown at 320 px, enlarged
on click)."""
TILE_WIDTH = 320
"""How wide a video or image is shown in a card or a gallery tile before it is enlarged."""
MAX_FETCH_BYTES = 64 * 1024 * 1024
"""No single media item is read into memory past this size (``Comparison`` asks its client's
``fetch_media`` for no more)."""

_VIDEO_SUFFIXES = frozenset({".mp4", ".mov", ".webm"})
_MEDIA_SUFFIXES = _VIDEO_SUFFIXES | {".png", ".jpg", ".jpeg", ".webp", ".gif"}
# Files saved next to a result by client.download(): not the result itself.
_SIDE_STEMS = ("_cover", "_last_frame")
_NOT_SAVED = "not saved; pass fetch=client.fetch_media to show it from its URL"
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+")


@dataclass(frozen=True, slots=True)
class Embed:
    """One media item ready for a page: the element and its data URI, and/or a note for people.

    ``tag`` is None when nothing can be shown; ``note`` then says why.
    """

    tag: Literal["video", "img"] | None
    uri: str = ""
    note: str = ""
    poster: str = ""  # a video's first frame (JPEG data URI): shown where it cannot play


def _mime(data: bytes) -> str | None:
    found = sniff(data)
    return found.mime if found else None


def thumbnail(data: bytes, width: int = THUMB_WIDTH) -> str | None:
    """An image downscaled to at most ``width`` pixels wide, as a data URI.

    JPEG for opaque images, PNG where there is transparency. None when Pillow is not installed
    or the bytes are not an image it can read.

    Example:
        >>> thumbnail(b"not an image") is None
        True
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
                return data_uri(out.getvalue(), mime="image/png")
            image.convert("RGB").save(out, "JPEG", quality=85)
            return data_uri(out.getvalue(), mime="image/jpeg")
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


MAX_EMBED_PIXELS = 4096 * 4096
"""The largest bitmap an embedded image may decode to; a larger one (a PNG declaring
40000x40000 in a few kilobytes) is never handed to the browser: a note says so instead."""


def declared_pixels(data: bytes) -> tuple[int, int] | None:
    """The width and height an image's header declares, read without decoding it (None when
    it is no image Pillow reads).

    Example:
        >>> declared_pixels(b"not an image") is None
        True
    """
    try:
        from PIL import Image
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as image:
                return image.size
        except Image.DecompressionBombError as exc:  # beyond Pillow's own cap: read the size
            found = re.findall(r"\d+", str(exc))
            return (int(found[0]), 1) if found else (1 << 20, 1 << 20)
        except (OSError, ValueError):
            return None


def _bitmap_note(data: bytes) -> str | None:
    """Why an image is not embedded: it would decode to a huge bitmap (None: it may be)."""
    size = declared_pixels(data)
    if size is None or size[0] * size[1] <= MAX_EMBED_PIXELS:
        return None
    shown = f"{size[0]:,}×{size[1]:,}" if size[1] > 1 else f"{size[0]:,}"
    return (f"image declares {shown} pixels, too large for a browser to decode here; open "
            "the original")


def _poster_uri(video: bytes) -> str:
    frame = poster(video, width=PREVIEW_WIDTH)
    return data_uri(frame, mime="image/jpeg") if frame else ""


def saved_paths(value: Any) -> list[str]:
    """The saved file paths of a row: a JSON list (History) or a list of paths (Comparison).

    Example:
        >>> saved_paths('["out/t1.mp4", "out/t1_cover.jpg"]')
        ['out/t1.mp4', 'out/t1_cover.jpg']
    """
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        value = parsed
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [str(p) for p in value if isinstance(p, str | Path)]
    return []


def _local(paths: Sequence[str], cover: bool) -> Path | str | None:
    """The saved result (or its cover) among ``paths``: a local path or a storage URL."""
    for text in paths:
        name = Path(media_name(text))
        if name.suffix.lower() not in _MEDIA_SUFFIXES:
            continue
        is_cover = name.stem.endswith("_cover")
        if cover and is_cover:
            return media_location(text)
        if not cover and not name.stem.endswith(_SIDE_STEMS):
            return media_location(text)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def reason(exc: BaseException) -> str:
    """Why media could not be read, for people, without echoing its (possibly local) URL.

    Example:
        >>> reason(MediaError("HTTP 404", url="http://127.0.0.1:8000/media/x.mp4", status=404))
        'HTTP 404'
        >>> reason(ValueError("no answer from http://127.0.0.1:8000/media/x.mp4"))
        'no answer from the media URL'
    """
    if isinstance(exc, MediaError):
        return exc.reason
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = _URL.sub("the media URL", str(exc)).strip()
    return text or type(exc).__name__


def _large_video(size: int, cover: Callable[[], bytes | None], thumb_width: int) -> Embed:
    """A video over the embedding limit: its cover as a thumbnail, or a note."""
    note = f"video is {size / 1e6:.1f} MB, too large to embed"
    try:
        data = cover()
    except Exception as exc:  # a cover that cannot be read becomes part of the note
        return Embed(None, note=f"{note}; its cover is unavailable ({reason(exc)})")
    thumb = thumbnail(data, thumb_width) if data else None
    if thumb is None:
        return Embed(None, note=f"{note}, and it has no cover")
    return Embed("img", thumb, note=f"{note}; showing its cover")


class MediaReader:
    """Reads a row's media: its saved file when it still exists, else its URL, each URL once.

    Args:
        fetch: reads a URL (e.g. ``client.fetch_media``); without one, only saved files are
            read and rows whose media was not saved get a note.
        cache: URL -> bytes, shared between calls (a Comparison keeps one so that its
            gallery and its report fetch each result once).
    """

    def __init__(
        self, fetch: Fetch | None = None, cache: MutableMapping[str, bytes] | None = None
    ) -> None:
        self._fetch = fetch
        self._cache: MutableMapping[str, bytes] = cache if cache is not None else {}

    def read(self, path: Path | str | None, url: str | None) -> bytes | None:
        """The bytes of a saved file (a path or a storage URL), else of a URL; None when there
        is neither to read."""
        if path is not None:
            try:
                return read_media(path)
            except (OSError, MediaError):
                logger.debug("genlab: %s is gone; reading its URL instead", path)
        if url is None:
            return None
        cached = self._cache.get(url)
        if cached is None:
            if self._fetch is None:
                return None
            cached = self._fetch(url)
            self._cache[url] = cached
        return cached

    def embed(
        self,
        row: Mapping[str, Any],
        *,
        max_bytes: int = MAX_EMBED_BYTES,
        thumb_width: int = THUMB_WIDTH,
    ) -> Embed:
        """What a gallery cell shows for one row's first result."""
        paths = saved_paths(row.get("paths"))
        url = _text(row.get("result_url"))
        try:
            data = self.read(_local(paths, cover=False), url)
        except Exception as exc:  # any failure becomes a note in its cell, never a crash
            return Embed(None, note=f"media unavailable ({reason(exc)})")
        if data is None:
            return Embed(None, note=_NOT_SAVED if url else "no media saved or linked")
        mime = _mime(data)
        if mime is None:
            return Embed(None, note="media in an unrecognised format")
        if mime.startswith("video/"):
            shown = video_preview(data)
            if len(shown) <= max_bytes:
                return Embed("video", data_uri(shown, mime=_mime(shown) or mime),
                             poster=_poster_uri(shown))
            cover_path, cover_url = _local(paths, cover=True), _text(row.get("cover_url"))
            return _large_video(len(data), lambda: self.read(cover_path, cover_url), thumb_width)
        huge = _bitmap_note(data)
        if huge is not None:
            return Embed(None, note=huge)
        thumb = thumbnail(data, thumb_width)
        if thumb is not None:
            return Embed("img", thumb)
        if len(data) <= max_bytes:
            return Embed("img", data_uri(data, mime=mime))
        return Embed(None, note=f"image is {len(data) / 1e6:.1f} MB, too large to embed")


def embed_file(
    path: Path | str,
    cover: Path | str | None = None,
    *,
    max_bytes: int = MAX_EMBED_BYTES,
    thumb_width: int = THUMB_WIDTH,
) -> Embed:
    """One saved file (a path, or a storage URL such as ``s3://bucket/runs/t1.mp4``), for a
    view that shows results at full size (a task card).

    Videos are embedded as their display-size preview (:func:`video_preview`) when that is
    at most ``max_bytes``, else shown by ``cover``; images up to ``max_bytes`` are embedded as
    they are, larger ones as a ``thumb_width`` thumbnail.
    """
    def read_cover() -> bytes | None:
        return read_media(cover) if cover else None

    try:
        size = media_size(path)
        video = Path(media_name(path)).suffix.lower() in _VIDEO_SUFFIXES
        if video and size > MAX_FETCH_BYTES:
            return _large_video(size, read_cover, thumb_width)
        data = read_media(path)
    except (OSError, GenlabError) as exc:  # missing, unreadable, or its store unreachable
        return Embed(None, note=f"could not be read ({reason(exc)})")
    mime = _mime(data)
    if mime is None:
        return Embed(None, note="media in an unrecognised format")
    if mime.startswith("video/"):
        shown = video_preview(data)
        if len(shown) <= max_bytes:
            return Embed("video", data_uri(shown, mime=_mime(shown) or mime),
                         poster=_poster_uri(shown))
        return _large_video(size, read_cover, thumb_width)
    huge = _bitmap_note(data)
    if huge is not None:
        return Embed(None, note=huge)
    if len(data) <= max_bytes:
        return Embed("video" if mime.startswith("video/") else "img", data_uri(data, mime=mime))
    note = f"image is {len(data) / 1e6:.1f} MB, too large to embed"
    thumb = thumbnail(data, thumb_width)
    if thumb is None:
        return Embed(None, note=note)
    return Embed("img", thumb, note=f"{note}; showing a smaller copy")


def is_missing(value: Any) -> bool:
    """True for None, NaN, pd.NA and NaT; False for lists and other values.

    Example:
        >>> is_missing(float("nan")), is_missing([])
        (True, False)
    """
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
