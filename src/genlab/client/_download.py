"""Saving a task's results to disk: media streamed to files, plus a JSON sidecar per task.

Files are named after the task: ``<task_id>.mp4`` (``<task_id>_<n>.png`` when a task has
several results), ``<task_id>_cover.jpg``, ``<task_id>_last_frame.png`` and ``<task_id>.json``.
The extension comes from the response's content type, else from the URL, else from the kind.
Media are fetched like :func:`~genlab.client._media.stream_media` fetches them: without the API
key, redirects followed, failures raised as :class:`~genlab.MediaError`.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path, PurePosixPath
from typing import Any

import httpx

from genlab.client._files import safe_filename
from genlab.client._media import CHUNK, stream_media
from genlab.client._transport import Http
from genlab.client._types import TaskRecord, VideoResult

logger = logging.getLogger("genlab")

CONTENT_TYPES = {
    "video/mp4": ".mp4",
    "video/quicktime": ".mov",
    "video/webm": ".webm",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/jpg": ".jpg",
    "image/webp": ".webp",
    "image/gif": ".gif",
}
KNOWN_SUFFIXES = frozenset({".mp4", ".mov", ".webm", ".png", ".jpg", ".jpeg", ".webp", ".gif"})


def extension_for(content_type: str | None, url: str, default: str) -> str:
    """The file extension for a media response.

    Example:
        >>> extension_for("image/jpeg; charset=binary", "https://x/a", ".png")
        '.jpg'
        >>> extension_for("application/octet-stream", "https://x/a.webp?sig=1", ".png")
        '.webp'
    """
    if content_type:
        ext = CONTENT_TYPES.get(content_type.split(";")[0].strip().lower())
        if ext:
            return ext
    suffix = PurePosixPath(httpx.URL(url).path).suffix.lower()
    if suffix in KNOWN_SUFFIXES:
        return ".jpg" if suffix == ".jpeg" else suffix
    return default


async def download_record(
    http: Http,
    record: TaskRecord,
    directory: str | os.PathLike[str],
    *,
    body: dict[str, Any] | None = None,
) -> list[Path]:
    """Stream every result (and cover / last frame) of a succeeded task into ``directory``.

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
        # The final URL (after redirects) names the file best when the type is not given.
        ext = extension_for(response.headers.get("content-type"), str(response.url), default_ext)
        # Plain blocking writes of 64 KiB chunks: the page cache absorbs them far faster than
        # the network delivers, and a thread hop per chunk costs more. "wb": a retry starts over.
        with part.open("wb") as out:
            async for chunk in response.aiter_bytes(CHUNK):
                out.write(chunk)
        return ext

    try:
        ext = await stream_media(http, url, write)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    final = target_stem.with_name(target_stem.name + ext)
    part.replace(final)  # the final name appears only once the file is complete
    logger.debug("genlab: saved %s", final)
    return final
