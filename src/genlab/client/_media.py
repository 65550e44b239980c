"""Media over the client's one HTTP stack: fetching bytes at a public URL, and saving a
finished task's results with a JSON sidecar.

Media URLs may live on another host (a CDN, a signed bucket URL) or be relative to the API
(``/files/x.mp4``, resolved against the base URL). A media request carries the API key only
to the API's own origin (some services serve content behind it), never to any other host,
and follows redirects (httpx drops the key when one leaves the origin). Media requests are
retried like a GET (network trouble, 429, 5xx). Every failure is a
:class:`~genlab.MediaError` naming the URL without its query string, where signed URLs keep
their credentials.

Saving a task's results: media streamed to files, plus a JSON sidecar per task.

The destination is a local folder or a remote URL (``s3://bucket/prefix/``, see
:mod:`genlab.media`): for a URL the files are fetched into a temporary folder first
and then uploaded beside each other, so each object appears only once it is complete.

Files are named after the task: ``<task_id>.mp4`` (``<task_id>_<n>.png`` when a task has
several results), ``<task_id>_cover.jpg``, ``<task_id>_last_frame.png`` and ``<task_id>.json``.
The extension comes from the response's content type; when that is generic, from the file's
first bytes, else from the URL, else from the kind.
Media are fetched like :func:`~genlab.client._media.stream_media` fetches them: without the API
key, redirects followed, failures raised as :class:`~genlab.MediaError`.

Example:
    data = await fetch_media(http, record.results[0].url, max_bytes=8 * MB)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import httpx

from genlab._errors import (
    APIError,
    MediaError,
    RateLimitError,
    ServerError,
    TaskFailedError,
    TaskNotFinishedError,
)
from genlab.client._config import TaskRecord, VideoResult
from genlab.client._transport import MAX_REDIRECTS, Http
from genlab.client._uploads import safe_filename
from genlab.media import (
    CONTENT_TYPES,
    MEDIA_ENV,
    SNIFF_BYTES,
    Location,
    MediaInfo,
    by_extension,
    kept_beside,
    media_location,
    media_name,
    probe,
    read_media,
    shown_url,
    sniff,
    store_files,
)

T = TypeVar("T")

MB = 1024 * 1024
MAX_MEDIA_BYTES = 64 * MB
"""The default limit of :func:`fetch_media`: no media item is read into memory past it."""
CHUNK = 1 << 16

# The client's default Accept (application/json) is for the API; a media host may negotiate.
_MEDIA_HEADERS = {"Accept": "*/*"}


async def stream_media(
    http: Http, url: str, consume: Callable[[httpx.Response], Awaitable[T]]
) -> T:
    """GET ``url`` and hand the streaming 2xx response to ``consume``; return what it returns.

    A retry calls ``consume`` again on a fresh response, so it must start over (e.g. reopen
    its file for writing). A relative URL is resolved against the service's base URL.

    Raises:
        MediaError: not an http(s) URL, an error status (after retries where they are safe),
            network trouble that outlasted the retries, or what ``consume`` raised as such.
    """
    try:
        target = httpx.URL(http.config.base_url).join(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise MediaError(f"not a valid URL ({exc})", url=url) from None
    if target.scheme not in ("http", "https"):
        raise MediaError("only http(s) media URLs are fetched", url=url)
    # The key goes with a media request only to the API's own origin (some services serve
    # content behind it); never to another host, and httpx drops it when a redirect leaves
    # the origin.
    headers = {**_MEDIA_HEADERS, **http.auth_for(target)}
    try:
        async for attempt in http.get_retrying():
            with attempt:
                async with http.client.stream(
                    "GET", target, headers=headers, follow_redirects=True
                ) as response:
                    if not response.is_success:
                        raise_for_media(response, url)
                    return await consume(response)
    except (ServerError, RateLimitError) as exc:  # retries used up
        reason = f"HTTP {exc.status}; try again later"
        raise MediaError(reason, url=url, status=exc.status) from None
    except httpx.TooManyRedirects:
        raise MediaError(f"more than {MAX_REDIRECTS} redirects", url=url) from None
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        raise MediaError(f"{type(exc).__name__}: {exc}", url=url) from exc
    raise AssertionError("stamina gave up without raising")  # pragma: no cover


def raise_for_media(response: httpx.Response, url: str) -> None:
    """The error for a media host's non-2xx answer: 429 and 5xx are retried like a GET's;
    anything else is a :class:`~genlab.MediaError` at once.

    A media host never sees the API key, so a 401/403 there is about the link, not the key:
    signed URLs expire, and the message says so.
    """
    status = response.status_code
    if status == 429:
        raise RateLimitError("the media host is rate limiting", retry_after=_retry_after(response))
    if status >= 500:
        raise ServerError("the media host failed", status=status)
    hint = None
    if status in MediaError.EXPIRED_STATUSES:
        hint = (
            "the link may have expired (signed media URLs do): fetch the task's record again "
            "for fresh URLs (client.download(record) does so by itself)"
        )
    raise MediaError(f"HTTP {status}", url=url, status=status, hint=hint)


def _retry_after(response: httpx.Response) -> float | None:
    error = APIError.from_response(429, None, headers=response.headers)
    return error.retry_after if isinstance(error, RateLimitError) else None


async def read_capped(response: httpx.Response, max_bytes: int) -> bytes:
    """A response's whole body, refusing (MediaError) anything larger than ``max_bytes``.

    A ``Content-Length`` beyond the limit is refused before any byte is read.
    """
    url = str(response.request.url)
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise MediaError(_too_large(int(declared), max_bytes), url=url)
    buffer = bytearray()
    async for chunk in response.aiter_bytes(CHUNK):
        buffer += chunk
        if len(buffer) > max_bytes:
            raise MediaError(_too_large(None, max_bytes), url=url)
    return bytes(buffer)


def _too_large(size: int | None, max_bytes: int) -> str:
    what = f"it is {size / MB:.1f} MB" if size is not None else "it is larger"
    return f"{what}; at most {max_bytes / MB:g} MB is read (max_bytes={max_bytes})"


async def fetch_media(http: Http, url: str, *, max_bytes: int = MAX_MEDIA_BYTES) -> bytes:
    """The bytes behind a media URL, at most ``max_bytes`` of them.

    Raises:
        MediaError: see :func:`stream_media`; also when the media is larger than ``max_bytes``.
    """
    async def read(response: httpx.Response) -> bytes:
        return await read_capped(response, max_bytes)

    return await stream_media(http, url, read)


logger = logging.getLogger("genlab")

_SNIFF = SNIFF_BYTES  # bytes enough to tell every format genlab.media.sniff knows


def extension_for(content_type: str | None, url: str, default: str, head: bytes = b"") -> str:
    """The file extension for a media response.

    A specific content type decides; when it is missing or generic
    (``application/octet-stream``, ``binary/octet-stream`` ...) the first bytes (``head``)
    decide, then the URL's suffix, then ``default``.

    Example:
        >>> extension_for("image/jpeg; charset=binary", "https://x/a", ".png")
        '.jpg'
        >>> extension_for("application/octet-stream", "https://x/a.webp?sig=1", ".png")
        '.webp'
        >>> extension_for("application/octet-stream", "https://x/a", ".mp4", b"\\x89PNG\\r\\n\\x1a\\n")
        '.png'
        >>> extension_for("application/octet-stream", "https://x/a", ".png", b"II*\\x00")
        '.tiff'
    """  # noqa: E501
    if content_type:
        ext = CONTENT_TYPES.get(content_type.split(";")[0].strip().lower())
        if ext:
            return ext
    sniffed = sniff(head)
    if sniffed:
        return sniffed.extension
    named = by_extension(PurePosixPath(httpx.URL(url).path).suffix)
    return named.extension if named else default


async def download_task(
    http: Http,
    record: TaskRecord,
    directory: str | os.PathLike[str] | None,
    body: dict[str, Any] | None,
    refetch: Callable[[], Awaitable[TaskRecord]] | None,
    storage_options: Mapping[str, Any] | None = None,
) -> tuple[TaskRecord, list[Location]]:
    """Download a finished task's results; return the record used and the locations written.

    ``directory`` is a folder or a URL (None: ``GENLAB_MEDIA``, else the current folder).

    When a media host refuses a link (401/403/404/410: signed URLs expire) and ``refetch`` is
    given, the record is fetched once more for fresh URLs and the download starts over.

    Raises:
        TaskFailedError: the task failed, so there is nothing to download.
        TaskNotFinishedError: the task has not finished yet.
        MediaError: a file could not be fetched (nothing partial is left behind).
    """
    if record.failed:
        raise TaskFailedError(
            f"task {record.task_id} failed ({record.error}); there is nothing to download",
            record=record,
        )
    if not record.succeeded:
        raise TaskNotFinishedError(
            f"task {record.task_id} is {record.status}; wait for it first: "
            f"record = client.wait({record.task_id!r})",
            task_id=record.task_id,
            status=record.status,
        )
    where = media_location(directory)
    try:
        return record, await _save(http, record, where, body, storage_options)
    except MediaError as exc:
        if refetch is None or not exc.may_have_expired:
            raise
        logger.info("genlab: %s; fetching the record again for fresh URLs", exc)
    fresh = await refetch()
    return fresh, await _save(http, fresh, where, body, storage_options)


async def _save(
    http: Http,
    record: TaskRecord,
    where: Location,
    body: dict[str, Any] | None,
    storage_options: Mapping[str, Any] | None,
) -> list[Location]:
    if isinstance(where, Path):
        return list(await download_record(http, record, where, body=body))
    with tempfile.TemporaryDirectory(prefix="genlab-") as staging:
        files = await download_record(http, record, staging, body=body)
        # fsspec's calls block; the client's event loop keeps polling meanwhile.
        stored = await asyncio.to_thread(
            store_files, files, where, storage_options=storage_options
        )
    logger.debug("genlab: stored %d files at %s", len(stored), shown_url(where))
    return list(stored)


async def download_record(
    http: Http,
    record: TaskRecord,
    directory: str | os.PathLike[str],
    *,
    body: dict[str, Any] | None = None,
) -> list[Path]:
    """Stream every result (and cover / last frame) of a succeeded task into a local folder.

    Returns the media paths in result order, then the sidecar's path.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    stem = safe_filename(record.task_id, "task")
    results = record.results
    default_ext = ".mp4" if record.videos else ".png"
    paths: list[Path] = []
    for i, result in enumerate(results):
        name = stem if len(results) == 1 else f"{stem}_{i}"
        paths.append(await _fetch(http, result.url, folder / name, default_ext))
        if isinstance(result, VideoResult):
            if result.cover_url:
                paths.append(await _fetch(http, result.cover_url, folder / f"{name}_cover", ".jpg"))
            if result.last_frame_url:
                paths.append(
                    await _fetch(http, result.last_frame_url, folder / f"{name}_last_frame", ".png")
                )
    sidecar = folder / f"{stem}.json"
    sidecar.write_text(
        json.dumps(sidecar_data(record, body, paths), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    paths.append(sidecar)
    return paths


def sidecar_data(
    record: TaskRecord, body: dict[str, Any] | None, paths: list[Path]
) -> dict[str, Any]:
    """What ``<task_id>.json`` holds: the task, its request and its timings."""
    dumped = record.model_dump(mode="json")
    return {
        "task_id": record.task_id,
        "model": record.model,
        "kind": record.kind,
        "status": record.status,
        "request": body,
        "request_id": record.request_id,
        "created_at": dumped.get("created_at"),
        "completed_at": dumped.get("completed_at"),
        "seconds": record.seconds,
        "files": [p.name for p in paths],
        "results": [r.model_dump(mode="json") for r in record.results],
    }


async def _fetch(http: Http, url: str, target_stem: Path, default_ext: str) -> Path:
    part = target_stem.with_name(target_stem.name + ".part")

    async def write(response: httpx.Response) -> str:
        # Plain blocking writes of 64 KiB chunks: the page cache absorbs them far faster than
        # the network delivers, and a thread hop per chunk costs more. "wb": a retry starts over.
        head = b""
        with part.open("wb") as out:
            async for chunk in response.aiter_bytes(CHUNK):
                if len(head) < _SNIFF:
                    head += chunk[: _SNIFF - len(head)]
                out.write(chunk)
        # The final URL (after redirects) names the file best when the type is not given.
        return extension_for(
            response.headers.get("content-type"), str(response.url), default_ext, head
        )

    try:
        ext = await stream_media(http, url, write)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    final = target_stem.with_name(target_stem.name + ext)
    part.replace(final)  # the final name appears only once the file is complete
    logger.debug("genlab: saved %s", final)
    return final


def where_to_keep(
    keep: bool | str | os.PathLike[str] | None, journal: object, durable: bool
) -> Location | None:
    """Where a client keeps what succeeds, or None when it keeps nothing.

    ``keep``: a folder or fsspec URL; ``True`` for the default store; ``False`` for none;
    ``None`` (the default) keeps when the client writes a durable history (``durable``).
    The default store is ``GENLAB_MEDIA``, else beside a SQLite history's file (see
    :func:`genlab.media.kept_beside`: ``genlab-media/`` for ``.genlab/history.sqlite``), else
    ``genlab-media/`` (a PostgreSQL history: set ``GENLAB_MEDIA`` to a team's bucket).

    Example:
        >>> where_to_keep(False, None, durable=True) is None
        True
        >>> where_to_keep("s3://team/kept", None, durable=False)
        's3://team/kept'
    """
    if keep is False or (keep is None and not durable):
        return None
    if keep is not None and keep is not True:
        return media_location(keep)
    if os.environ.get(MEDIA_ENV, "").strip():
        return media_location(None)
    place = getattr(journal, "path", None)  # a SQLite history's file: its store beside it
    if isinstance(place, Path) and place.suffix and not place.is_dir():
        return kept_beside(place)
    return kept_beside(None)


def measure(paths: Sequence[Location]) -> tuple[MediaInfo, ...]:
    """The measured facts of each kept result file (not covers, last frames or the sidecar),
    in order: what the card shows and the history keeps. Reads each file once, in the
    caller's worker thread; a file that cannot be read is measured as far as it can be."""
    facts = []
    for place in paths:
        name = media_name(place)
        stem = PurePosixPath(name).stem
        if name.endswith(".json") or stem.endswith(("_cover", "_last_frame")):
            continue
        try:
            facts.append(probe(place if isinstance(place, Path) else read_media(place)))
        except (OSError, MediaError) as exc:
            logger.warning("genlab: could not measure %s: %s", name, exc)
    return tuple(facts)


# Previews at keep time: the card a notebook draws next embeds them.

_previews: queue.SimpleQueue[tuple[Location, ...]] = queue.SimpleQueue()
_previewer: threading.Thread | None = None
_previewer_lock = threading.Lock()


def shows_cards() -> bool:
    """True in a Jupyter kernel, where a kept result's card is drawn soon after (a script's
    results are not shown, so it makes no previews)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def start_previews(paths: Sequence[Location]) -> None:
    """Have the previews of a kept result's media made in the background, one result at a
    time, on a daemon thread (an exit never waits for one), when cards are shown here
    (:func:`shows_cards`). ``generate`` does not wait for them: a card drawn before its
    preview is made waits for the one being made, or makes it itself, never twice."""
    global _previewer
    local = tuple(p for p in paths if "://" not in str(p))  # never a second remote read
    if not local or not shows_cards():
        return
    _previews.put(local)
    with _previewer_lock:
        if _previewer is None or not _previewer.is_alive():
            _previewer = threading.Thread(target=_make_previews, name="genlab-previews",
                                          daemon=True)
            _previewer.start()


def _make_previews() -> None:
    try:
        # Views' code, loaded here only (PyAV, Pillow): importing the client loads neither.
        from genlab.media.card import prepare_previews
    except ImportError:  # no PyAV or Pillow: cards embed the originals
        return
    while True:
        paths = _previews.get()
        try:
            prepare_previews(paths)
        except Exception as exc:  # the card makes it (or says why) when it is drawn
            logger.debug("genlab: no preview made at keep time (%s: %s)",
                         type(exc).__name__, exc)
