"""How profiles write what the emulator answers: the task ids clients see (``odd-ids``,
``sloppy``'s numbers), another model (``misrouted``), and records not quite right
(``sloppy``). The emulator's own records go in; what a client receives comes out.

Example:
    >>> ids = PublicIds()
    >>> ids.public("task_0123456789abcdef", numeric=True)
    100001
    >>> ids.real("100001")
    'task_0123456789abcdef'
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

from genlab._wire import TaskStatus
from genlab.catalog import CATALOG
from genlab.emulator._profile_controls import Controls

_STATUSES = frozenset(s.value for s in TaskStatus)
_MEDIA = ("videos", "images")
_URLS = ("url", "cover_url", "last_frame_url")


class PublicIds:
    """The ids clients see for the emulator's task ids, and back again. Thread-safe."""

    def __init__(self) -> None:
        self._public: dict[str, str] = {}
        self._real: dict[str, str] = {}
        self._numbers = itertools.count(100_001)
        self._lock = threading.Lock()

    def public(self, real: str, *, odd: bool = False, numeric: bool = False) -> str | int:
        """The id clients see: odd (``jobs/…?v=2#take 1%``), a number, or ``real`` itself.

        A task keeps the public id it was first given.
        """
        with self._lock:
            public = self._public.get(real)
            if public is None:
                if numeric:
                    public = str(next(self._numbers))
                elif odd:
                    public = f"jobs/{real[-6:]}?v=2#take 1%"
                else:
                    return real
                self._public[real], self._real[public] = public, real
        return int(public) if public.isdigit() else public

    def real(self, public: str) -> str:
        """The emulator's id behind an id a client sent (itself when it is not a public one)."""
        with self._lock:
            return self._real.get(public, public)


def other_model(model: str) -> str:
    """The next model of the same kind in the catalog (in turn), or ``model`` when it has none.

    Example:
        >>> other_model("image-b"), other_model("video-f")
        ('image-c', 'video-a')
    """
    cls = CATALOG.get(model)
    if cls is None:
        return model
    same = [name for name, c in CATALOG.items() if c.KIND == cls.KIND]
    return same[(same.index(model) + 1) % len(same)]


class Sloppy:
    """Rewrites records as the ``sloppy`` profile's service writes them (see :class:`Controls`,
    items c to g), counting each task's queries for the behaviours that last a few queries."""

    def __init__(self) -> None:
        self._queries: Counter[str] = Counter()
        self._succeeded: Counter[str] = Counter()
        self._lock = threading.Lock()

    def record(self, data: dict[str, Any], real: str, controls: Controls) -> dict[str, Any]:
        """``data``, the record of task ``real`` (the emulator's id), as sloppily written."""
        status = data.get("status")
        with self._lock:
            self._queries[real] += 1
            early = self._queries[real] <= controls.unknown_status_queries
            if status == TaskStatus.SUCCEEDED and not early:
                self._succeeded[real] += 1
            seen_done = self._succeeded[real]
        media = [key for key in _MEDIA if key in data]
        if early:  # not started, as far as this answer tells
            data.update(status=controls.unknown_status, completed_at=None, error=None)
            data.update({key: None for key in media})
            return data
        if status == TaskStatus.SUCCEEDED and (
            controls.media_missing_forever or seen_done <= controls.media_missing_queries
        ):
            data.update({key: [] if controls.media_missing_as == "empty" else None
                         for key in media})
        items = [item for key in media for item in data[key] or ()]
        for item in items:
            _numbers(item, controls.numbers_as)
            for key in _URLS:
                if isinstance(item.get(key), str):
                    item[key] = _relative(item[key], controls.relative_urls)
        if status == TaskStatus.SUCCEEDED and controls.unreadable_result and items:
            first = items[0]
            if controls.unreadable_result == "duration" and "duration" in first:
                first["duration"] = f"{_plain(first['duration'])}s"
            else:
                first["width"] = "auto"
        if isinstance(status, str) and status in _STATUSES and controls.status_case:
            data["status"] = status.upper() if controls.status_case == "upper" else (
                status.capitalize()
            )
        return data


def _plain(value: Any) -> str:
    return f"{float(value):g}" if isinstance(value, int | float) else str(value)


def _numbers(item: dict[str, Any], how: str | None) -> None:
    for key in ("width", "height", "duration"):
        value = item.get(key)
        if how is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if how == "floats":
            item[key] = float(value)
        else:  # "1280" for whole numbers of pixels, "5.0" for seconds
            item[key] = str(float(value)) if key == "duration" else str(value)


def _relative(url: str, how: str | None) -> str:
    """A media URL as a path on the API's origin (``/files/...``) or protocol-relative."""
    if how is None:
        return url
    parts = urlsplit(url)
    if how == "protocol":
        return url[len(parts.scheme) + 1:] if parts.scheme else url
    head, marker, key = parts.path.partition("/media/")
    if not marker:
        return url
    return f"{head}/files/{key}" + (f"?{parts.query}" if parts.query else "")
