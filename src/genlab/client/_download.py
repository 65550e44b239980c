"""Saving a task's results to disk: media streamed to files, plus a JSON sidecar per task.

Files are named after the task: ``<task_id>.mp4`` (``<task_id>_<n>.png`` when a task has
several results), ``<task_id>_cover.jpg``, ``<task_id>_last_frame.png`` and ``<task_id>.json``.
The extension comes from the response's content type, else from the URL, else from the kind.
Media URLs are fetched without the API key: they are public and may live on another host.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import httpx

from genlab.client._transport import TRANSIENT, Http, connection_error
from genlab.client._types import TaskRecord, VideoResult

logger = logging.getLogger("genlab")

CHUNK = 1 << 16

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


def safe_stem(task_id: str) -> str:
    """A task id usable as a file name (path separators and oddities replaced)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", task_id).lstrip(".") or "task"


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
    stem = safe_stem(record.task_id)
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
    try:
        async for attempt in http.get_retrying():
            with attempt:
                async with http.client.stream("GET", url) as response:
                    if not response.is_success:
                        await response.aread()
                        http.raise_for_status(response)
                    ext = extension_for(response.headers.get("content-type"), url, default_ext)
                    # Plain blocking writes of 64 KiB chunks: the page cache absorbs them far
                    # faster than the network delivers, and a thread hop per chunk costs more.
                    with part.open("wb") as out:
                        async for chunk in response.aiter_bytes(CHUNK):
                            out.write(chunk)
    except TRANSIENT as exc:
        part.unlink(missing_ok=True)
        raise connection_error(exc, http.config.base_url, "GET", url) from exc
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    final = target_stem.with_name(target_stem.name + ext)
    part.replace(final)  # the final name appears only once the file is complete
    logger.debug("genlab: saved %s", final)
    return final
