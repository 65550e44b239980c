"""A running profile's knobs and observations: tests set them to force a behaviour and read
them to see what the profile did.

Every behaviour is off at its default; a profile starts with its own values (its ``controls``
preset) and :meth:`Controls.quiet` turns all of them off again, so a test can switch on exactly
the one it is about.

Example:
    >>> controls = Controls(link_ttl=300)
    >>> controls.cap = 3
    >>> controls.status_case = "shouting"
    Traceback (most recent call last):
    ...
    ValueError: status_case must be one of None, 'upper', 'title'; got 'shouting'
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal

# Fields whose value is one of a few choices: a typo must not quietly play nothing.
_CHOICES: dict[str, tuple[Any, ...]] = {
    "quota_retry_after": (None, "seconds", "http-date"),
    "status_case": (None, "upper", "title"),
    "media_missing_as": ("empty", "null"),
    "unreadable_result": (None, "width", "duration"),
    "numbers_as": (None, "strings", "floats"),
    "relative_urls": (None, "path", "protocol"),
    "gateway_shape": ("json", "waf"),
}
# Observations and settings that quiet() leaves alone.
_KEPT = frozenset({"link_ttl", "media_requests", "media_with_key", "record_reads", "played",
                   "lock"})


@dataclass
class Controls:
    """A running profile's knobs (set them at any moment) and what it saw.

    Forced behaviours (``next_*``) count down, one per request they change; rates roll a
    seeded die per request; switches hold until changed.

    Attributes:
        link_ttl: seconds a ``cdn`` signed media link lives.
        next_html_errors: API requests answered with a proxy's 502 page, never forwarded.
        next_lost_answers: submits processed (created, billed), then answered a 504 page.
        next_unreadable: task queries answered 200 with an HTML page that is no record.
        error_shape: a name in ``ERROR_SHAPES`` for failed tasks' errors; None: in turn.

        cap: (``capped``) tasks a key may have queued or processing at once; a submit past it
            is answered 429 ``CONCURRENCY_LIMIT`` and creates nothing. None: no cap.
        cap_retry_after: the ``Retry-After`` seconds of that 429; None sends no header.

        quota_left: (``quota``) submits the key may still make; at 0 each submit is refused
            and creates nothing. None: no quota.
        quota_code: the refusal's envelope code. ``QUOTA_EXCEEDED`` (or any other code) is a
            429; ``INSUFFICIENT_BALANCE`` is a 402 and never carries ``Retry-After``.
        quota_retry_after: the 429's ``Retry-After``: ``"seconds"`` (``3600``),
            ``"http-date"`` (an IMF-fixdate that far ahead) or None (no header).
        quota_clears_in: seconds until the quota clears, in ``Retry-After`` and the message.

        trickle_interval: (``trickle``) seconds between the bytes of a submit's answer (the
            task is created and billed first); None sends answers at once.
        trickle_bytes: bytes sent at each step.

        next_misrouted: (``misrouted``) task queries answered with another task's record
            (the most recent other task of that kind; a made-up id when there is none).
        misrouted_tasks: the same for the next N queries of one task: its id as clients see
            it (as a string) -> N. Set it with :meth:`misroute`.
        misrouted_rate: share of task queries misrouted that way.
        next_wrong_model: task queries whose record names another model of the same kind.
        wrong_model_rate: share of task queries answered that way.

        next_refusals_2xx: (``sloppy``, a) submits refused with the error envelope under a
            200 status; nothing created or billed.
        refusals_as_2xx: the service's own 4xx envelope answers to submits sent as 200.
        numeric_ids: (b) task ids are JSON numbers in submit answers and records.
        status_case: (c) statuses in another case: ``"upper"`` (``SUCCEEDED``) or
            ``"title"`` (``Processing``).
        unknown_status_queries: (c) the first N queries of each task answer
            ``unknown_status`` (no media, no completion time) before the real status.
        unknown_status: the status name those queries carry.
        media_missing_queries: (d) the first K queries that see a task succeeded answer it
            without media (``videos``/``images`` empty or null, see ``media_missing_as``).
        media_missing_forever: (d) succeeded records never carry media.
        media_missing_as: ``"empty"`` (``[]``) or ``"null"``.
        unreadable_result: (e) every succeeded record has a field that cannot be read:
            ``"width"`` (``"auto"``) or ``"duration"`` (``"5s"``; images get the width).
        numbers_as: (f) result numbers as ``"strings"`` (``"1280"``, ``"5.0"``) or
            ``"floats"`` (``1280.0``).
        relative_urls: (g) media URLs ``"path"`` (``/files/<task>/<file>``, served by the
            API's origin to requests with the key only, 401 without) or ``"protocol"``
            (``//host:port/media/...``).

        gateway_status: (``gateway``) 401, 403 or 404: every submit is answered so by a
            gateway in front, never forwarded. None: submits pass.
        gateway_shape: ``"json"`` (``{"detail": "..."}``) or ``"waf"`` (an HTML page).

        media_requests, media_with_key: requests the ``cdn`` media host saw, and how many
            carried an Authorization header.
        record_reads: task records answered 200.
        played: how often each behaviour was played, by name: ``capped``, ``quota``,
            ``trickled``, ``trickle-abandoned``, ``misrouted``, ``wrong-model``,
            ``refused-2xx``, ``gateway``, ``files``, ``files-401``.

    Example:
        >>> from genlab.emulator import start_profile
        >>> with start_profile("proxy", api_key="k", time_scale=0.02) as service:
        ...     service.app.controls.quiet()  # every behaviour off: the emulator as it is
        ...     service.app.controls.next_html_errors
        0
    """

    link_ttl: float
    next_html_errors: int = 0
    next_lost_answers: int = 0
    next_unreadable: int = 0
    error_shape: str | None = None
    cap: int | None = None
    cap_retry_after: float | None = 1.0
    quota_left: int | None = None
    quota_code: str = "QUOTA_EXCEEDED"
    quota_retry_after: Literal["seconds", "http-date"] | None = "seconds"
    quota_clears_in: float = 3600.0
    trickle_interval: float | None = None
    trickle_bytes: int = 1
    next_misrouted: int = 0
    misrouted_tasks: dict[str, int] = field(default_factory=dict)
    misrouted_rate: float = 0.0
    next_wrong_model: int = 0
    wrong_model_rate: float = 0.0
    next_refusals_2xx: int = 0
    refusals_as_2xx: bool = False
    numeric_ids: bool = False
    status_case: Literal["upper", "title"] | None = None
    unknown_status_queries: int = 0
    unknown_status: str = "rendering"
    media_missing_queries: int = 0
    media_missing_forever: bool = False
    media_missing_as: Literal["empty", "null"] = "empty"
    unreadable_result: Literal["width", "duration"] | None = None
    numbers_as: Literal["strings", "floats"] | None = None
    relative_urls: Literal["path", "protocol"] | None = None
    gateway_status: int | None = None
    gateway_shape: Literal["json", "waf"] = "json"
    media_requests: int = 0
    media_with_key: int = 0
    record_reads: int = 0
    played: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        choices = _CHOICES.get(name)
        if choices is not None and value not in choices:
            shown = ", ".join(map(repr, choices))
            raise ValueError(f"{name} must be one of {shown}; got {value!r}")
        if name == "gateway_status" and value is not None and value not in (401, 403, 404):
            raise ValueError(f"gateway_status must be 401, 403, 404 or None; got {value!r}")
        super().__setattr__(name, value)

    @classmethod
    def start(cls, link_ttl: float, preset: tuple[tuple[str, Any], ...]) -> Controls:
        """The controls a profile starts with: the defaults, then its preset."""
        controls = cls(link_ttl=link_ttl)
        names = {f.name for f in fields(cls)} - _KEPT
        for name, value in preset:
            if name not in names:
                raise ValueError(f"no control {name!r}; use one of {sorted(names)}")
            setattr(controls, name, value)
        return controls

    def quiet(self) -> None:
        """Turn every behaviour off (the defaults); what was seen and ``link_ttl`` stay."""
        with self.lock:
            for f in fields(self):
                if f.name in _KEPT:
                    continue
                fresh = f.default_factory() if f.default_factory is not MISSING else f.default
                setattr(self, f.name, fresh)

    def take(self, name: str) -> bool:
        """True (and one fewer left) when a forced behaviour ``name`` is pending."""
        with self.lock:
            left: int = getattr(self, name)
            if left > 0:
                setattr(self, name, left - 1)
            return left > 0

    def misroute(self, task_id: str | int, times: int = 1) -> None:
        """Answer the next ``times`` queries of ``task_id`` (as clients see it) with another
        task's record."""
        with self.lock:
            self.misrouted_tasks[str(task_id)] = times

    def take_for(self, task_id: str) -> bool:
        """True (and one fewer left) when a query of ``task_id`` is to be misrouted."""
        with self.lock:
            left = self.misrouted_tasks.get(task_id, 0)
            if left > 0:
                self.misrouted_tasks[task_id] = left - 1
            return left > 0

    def saw(self, what: str) -> None:
        """Count one more ``what`` in :attr:`played`."""
        with self.lock:
            self.played[what] += 1
