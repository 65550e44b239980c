"""Source audio that tasks' videos carry (video-c ``audio_setting: origin``, video-e
``keep_original_sound``), kept on disk only while a video still needs it.

Results are rendered on first request, so the track taken from the input video must outlive
the submission; it is removed as soon as every video of its task has been rendered (the
results carry it from then on), when the task is forgotten, or, beyond
:data:`KEPT_AUDIO_BYTES` in all, oldest first. A video whose track went before it was
rendered (or that the media store evicted after its track went) cannot be rendered faithfully
again: the emulator answers 410, as a service does for an expired result.
"""

from __future__ import annotations

import shutil
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

KEPT_AUDIO_BYTES = 64 * 1024 * 1024
"""The most kept tracks may take on disk (a 15 s track is ~250 KB: hundreds of tasks)."""


@dataclass
class _Track:
    size: int
    waiting: set[int] = field(default_factory=set)  # indices of videos not rendered yet


class KeptAudio:
    """Kept tracks in ``folder``, at most ``max_bytes`` in all. Thread-safe.

    Example:
        >>> import tempfile
        >>> kept = KeptAudio(Path(tempfile.mkdtemp()) / "inputs", max_bytes=10)
        >>> first = kept.keep(b"aaaaaa", videos=2)
        >>> kept.rendered(first, 0); first.exists()
        True
        >>> kept.rendered(first, 1); first.exists()  # every video has it now
        False
        >>> older, newer = kept.keep(b"bbbbbb", videos=1), kept.keep(b"cccccc", videos=1)
        >>> older.exists(), kept.read(newer)  # past the bound: the oldest went
        (False, b'cccccc')
        >>> kept.close()
    """

    def __init__(self, folder: Path, max_bytes: int = KEPT_AUDIO_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._tracks: OrderedDict[Path, _Track] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def used_bytes(self) -> int:
        return self._bytes

    def keep(self, data: bytes, *, videos: int) -> Path:
        """Keep ``data`` for a task with ``videos`` videos; the path to render them from."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"audio_{uuid.uuid4().hex}.m4a"
        path.write_bytes(data)
        with self._lock:
            self._tracks[path] = _Track(len(data), set(range(videos)))
            self._bytes += len(data)
            while self._bytes > self.max_bytes and len(self._tracks) > 1:
                self._remove(next(iter(self._tracks)))
        return path

    def read(self, path: Path) -> bytes | None:
        """The track's bytes; None once it was removed."""
        with self._lock:
            if path not in self._tracks:
                return None
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def rendered(self, path: Path, index: int) -> None:
        """Video ``index`` of the track's task is rendered; the last one removes the track."""
        with self._lock:
            track = self._tracks.get(path)
            if track is None:
                return
            track.waiting.discard(index)
            if not track.waiting:
                self._remove(path)

    def forget(self, path: Path) -> None:
        """The track's task is forgotten: remove the track."""
        with self._lock:
            if path in self._tracks:
                self._remove(path)

    def close(self) -> None:
        """Remove every kept track and the folder."""
        with self._lock:
            self._tracks.clear()
            self._bytes = 0
        shutil.rmtree(self.folder, ignore_errors=True)

    def __len__(self) -> int:
        return len(self._tracks)

    def _remove(self, path: Path) -> None:
        track = self._tracks.pop(path)
        self._bytes -= track.size
        path.unlink(missing_ok=True)
