"""A bounded on-disk media store: results and uploads, evicted least-recently-used first."""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import uuid
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from genlab.media import by_extension


def content_type_for(name: str) -> str:
    """The media type for a file name, ``application/octet-stream`` when unknown."""
    known = by_extension(Path(name).suffix)
    return known.mime if known else "application/octet-stream"


def upload_name(filename: str) -> str:
    """The name an uploaded file is kept under: its base name, in safe characters.

    Only letters, digits, ``.``, ``_`` and ``-`` are kept (runs of others become ``_``), leading
    dots are dropped so the name is never hidden, ``.`` or ``..``, and it is at most 80
    characters long.

    Example:
        >>> upload_name("../../secret/my photo (1).png")
        'my_photo_1_.png'
        >>> upload_name("..")
        'upload'
    """
    base = Path(filename).name if filename else ""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".")[:80]
    return safe or "upload"


@dataclass(frozen=True, slots=True)
class Stored:
    path: Path
    size: int
    content_type: str


class MediaStore:
    """Files keyed by a relative path (``<task_id>/video-0.mp4``), at most ``max_bytes`` in all.

    Args:
        root: the folder to keep files in; a temporary folder when None, removed by
            :meth:`close` or, for an emulator never stopped (a kernel's embedded one), when the
            process exits. What a client kept of its results lives elsewhere (beside its
            history), so nothing of the person's goes with it.
        max_bytes: the cap; storing beyond it evicts the least recently used files.
    """

    def __init__(self, root: Path | None = None, max_bytes: int = 1 << 30) -> None:
        self._owned = root is None
        self.root = Path(tempfile.mkdtemp(prefix="genlab-emulator-")) if root is None else root
        self.root.mkdir(parents=True, exist_ok=True)
        # Runs once: at close(), when the store is collected, or at exit.
        self._remove = weakref.finalize(self, shutil.rmtree, self.root, True) if self._owned \
            else None
        self.max_bytes = max_bytes
        self._files: OrderedDict[str, Stored] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def used_bytes(self) -> int:
        return self._bytes

    def put(self, key: str, data: bytes) -> Stored:
        """Store ``data`` under ``key`` (replacing it), then evict down to the cap."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(data)
        tmp.replace(path)
        return self._account(key, Stored(path, len(data), content_type_for(key)))

    def _account(self, key: str, stored: Stored) -> Stored:
        with self._lock:
            old = self._files.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._files[key] = stored
            self._bytes += stored.size
            self._evict(keep=key)
        return stored

    def scratch(self, suffix: str = "") -> Path:
        """A fresh path for a file being received (an upload, a fetched reference).

        Scratch files live under the store's folder, outside its accounting; the caller removes
        them, or hands them over with :meth:`adopt`. :meth:`close` removes what is left.
        """
        folder = self.root / ".scratch"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{uuid.uuid4().hex}{suffix}"

    def adopt(self, key: str, source: Path) -> Stored:
        """Move a finished scratch file into the store under ``key``, then evict to the cap."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        size = source.stat().st_size
        source.replace(path)
        return self._account(key, Stored(path, size, content_type_for(key)))

    def get(self, key: str) -> Stored | None:
        """The stored file, marked as recently used; None when absent or evicted."""
        with self._lock:
            stored = self._files.get(key)
            if stored is not None:
                self._files.move_to_end(key)
            return stored

    def read(self, key: str) -> bytes | None:
        stored = self.get(key)
        if stored is None:
            return None
        try:
            return stored.path.read_bytes()
        except FileNotFoundError:
            return None

    def close(self) -> None:
        """Forget every file; remove the folder when the store created it (scratch files are
        removed either way)."""
        with self._lock:
            self._files.clear()
            self._bytes = 0
        shutil.rmtree(self.root / ".scratch", ignore_errors=True)
        if self._remove is not None:
            self._remove()

    def _path(self, key: str) -> Path:
        parts = [p for p in key.split("/") if p not in ("", ".", "..")]
        if not parts:
            raise ValueError(f"bad media key {key!r}")
        return self.root.joinpath(*parts)

    def _evict(self, keep: str) -> None:
        while self._bytes > self.max_bytes and len(self._files) > 1:
            key, stored = next(iter(self._files.items()))
            if key == keep:
                self._files.move_to_end(key)
                continue
            del self._files[key]
            self._bytes -= stored.size
            stored.path.unlink(missing_ok=True)
