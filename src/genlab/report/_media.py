"""Media for galleries, reports and task cards: read from saved files or through a fetch
callable, embedded as data URIs.

Why embed: a notebook's output (or a saved report) must show the media wherever it is opened,
after a reload and on Binder, and must never hand the browser a ``localhost`` URL it cannot
reach. So bytes are read by the kernel and written into the page, as
:func:`genlab.media.preview.embed` (genlab's one embedding decision) chooses: videos as MP4
previews every front end plays (the original stays on disk and is linked), images as they are
or as smaller copies that enlarge on click.

Bytes come from saved files (on disk, or in object storage such as ``s3://``: read through
:func:`genlab.media.read_media`, so reports never import fsspec), or from the ``fetch``
callable the caller passes (usually ``client.fetch_media``: the client's one HTTP stack, its
retries and its key policy). Reports make no HTTP requests of their own: without a fetch, a
result that was not saved is shown with a note saying so.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from genlab._errors import MediaError
from genlab.client import data_uri
from genlab.media import (
    MEDIA_SUFFIXES,
    media_location,
    media_name,
    read_media,
)
from genlab.media.card import (
    THUMB_WIDTH,
    Shown,
    original_link,
    reason,
    shown_bytes,
    shown_file,
)
from genlab.media.preview import MAX_EMBED_BYTES, image_preview

logger = logging.getLogger("genlab")

Fetch = Callable[[str], bytes]
"""Reads the bytes behind a media URL and raises on failure, e.g. ``client.fetch_media``."""

MAX_FETCH_BYTES = 64 * 1024 * 1024
"""No single media item is read into memory past this size (``Comparison`` asks its client's
``fetch_media`` for no more)."""

# Files saved next to a result by client.download(): not the result itself.
_SIDE_STEMS = ("_cover", "_last_frame")
_NOT_SAVED = "not saved; pass fetch=client.fetch_media to show it from its URL"


def thumbnail(data: bytes, width: int = THUMB_WIDTH) -> str | None:
    """An image (or a video's first frame) downscaled to at most ``width`` pixels wide and
    turned upright, as a data URI (:func:`genlab.media.preview.image_preview`).

    JPEG for opaque images, PNG where there is transparency. None when Pillow is not installed
    or the bytes are not an image it can read.

    Example:
        >>> thumbnail(b"not an image") is None
        True
    """
    shown = image_preview(data, width=width)
    return data_uri(shown[0], mime=shown[1]) if shown else None


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
        if name.suffix.lower() not in MEDIA_SUFFIXES:
            continue
        is_cover = name.stem.endswith("_cover")
        if cover and is_cover:
            return media_location(text)
        if not cover and not name.stem.endswith(_SIDE_STEMS):
            return media_location(text)
    return None


def original_html(row: Mapping[str, Any], folder: str | os.PathLike[str] | None = None) -> str:
    """The ``original:`` link to the kept file of a row's first result
    (:func:`genlab.media.card.original_link`); empty when nothing was kept or it is gone.

    The link is relative to ``folder``, the folder its page is opened from (a saved report's);
    by default the working directory, which is a notebook's folder.

    Example:
        >>> original_html({"paths": '["no/such/t1.mp4"]'})
        ''
    """
    where = _local(saved_paths(row.get("paths")), cover=False)
    if where is None or isinstance(where, str):  # a storage URL is named, not linked
        return "" if where is None else original_link(where)
    if not where.is_file():
        return ""
    return original_link(where, page_folder=folder)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class MediaReader:
    """Reads a row's media: its saved file when it still exists, else its URL, each URL once.

    Args:
        fetch: reads a URL (e.g. ``client.fetch_media``); without one, only saved files are
            read and rows whose media was not saved get a note.
        cache: URL -> bytes, shared between calls (a Comparison keeps one so that its
            gallery and its report fetch each result once).

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "kite.png"
        >>> _ = path.write_bytes(buffer.getvalue())
        >>> reader = MediaReader()
        >>> reader.read(str(path), url=None) == path.read_bytes()  # a kept file, else its URL
        True
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
        transform: Callable[[bytes], bytes] | None = None,
    ) -> Shown:
        """What a gallery cell shows for one row's first result (passed through ``transform``
        first when given: a gold pair's degraded copy)."""
        paths = saved_paths(row.get("paths"))
        url = _text(row.get("result_url"))
        try:
            data = self.read(_local(paths, cover=False), url)
            if data is not None and transform is not None:
                data = transform(data)
        except Exception as exc:  # any failure becomes a note in its cell, never a crash
            return Shown(None, note=f"media unavailable ({reason(exc)})")
        if data is None:
            return Shown(None, note=_NOT_SAVED if url else "no media saved or linked")
        cover_path, cover_url = _local(paths, cover=True), _text(row.get("cover_url"))
        # A degraded copy's poster is its own first frame, never the original's cover.
        return shown_bytes(data, cover=(lambda: None) if transform is not None
                           else lambda: self.read(cover_path, cover_url),
                           max_bytes=max_bytes, image_width=thumb_width, fit_images=True)


def embed_file(
    path: Path | str,
    cover: Path | str | None = None,
    *,
    max_bytes: int = MAX_EMBED_BYTES,
    thumb_width: int = THUMB_WIDTH,
) -> Shown:
    """One saved file (a path, or a storage URL such as ``s3://bucket/runs/t1.mp4``), for a
    view that shows results at full size: :func:`genlab.media.card.shown_file`.

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "kite.png"
        >>> _ = path.write_bytes(buffer.getvalue())
        >>> shown = embed_file(path)
        >>> shown.tag, shown.uri.startswith("data:image/png;base64,")
        ('img', True)
    """
    return shown_file(path, cover, max_bytes=max_bytes, image_width=thumb_width)


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
