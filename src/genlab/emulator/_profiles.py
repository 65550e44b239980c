"""Profiles: the emulator played as a *different* service that still follows the interface.

The emulator is genlab's reading of the interface. A real service chooses otherwise wherever
the interface says "not shown", sits behind proxies, CDNs and signed URLs, and has limits. A
profile wraps the emulator's ASGI app (its internals untouched) and changes what a client sees:

``error-shapes``  a failed task's ``error`` in other shapes: ``{type, detail}``, a numeric
                  ``code`` with a null ``message``, a plain string, ``{reason}``.
``cdn``           media on a second origin (its own port): signed links that expire
                  (``link_ttl``), answered with a redirect, then bytes typed
                  ``application/octet-stream`` at a URL without an extension.
``proxy``         a proxy in front: some requests get an HTML 502 page without reaching the
                  service; some submits are processed, then answered with an HTML 504 page.
``eventual``      a task answers 404 for ``not_found_for`` seconds after its submit.
``prefix``        the API lives under ``/api`` (base URL ``http://host:port/api``).
``odd-ids``       task ids with ``/``, ``?``, ``#``, ``%`` and spaces in them.
``newer``         a service a step ahead of genlab's catalog: it takes the field
                  ``camera_motion`` and the model ``video-next`` (served like video-a).
``different``     all of the above, ``error-shapes`` to ``newer``, at once (the proxy's failures
                  at low rates).
``capped``        at most 3 tasks queued or processing per key; the next submit is answered
                  429 ``CONCURRENCY_LIMIT`` (``Retry-After: 1``), nothing created.
``quota``         a quota that will not clear: submits answered 429 ``QUOTA_EXCEEDED`` with
                  ``Retry-After: 3600`` (or 402 ``INSUFFICIENT_BALANCE``), nothing created.
``trickle``       a submit is processed and billed, its answer sent one byte every 0.5 s.
``misrouted``     a task query now and then answers another task's record, or names another
                  model than the one submitted.
``sloppy``        answers not quite right: numeric task ids, ``Processing`` and unknown
                  statuses, succeeded records without media at first, numbers as strings,
                  media at relative URLs that need the key (see :class:`Controls` for more).
``gateway``       a gateway or WAF in front answers every submit 401, 403 or 404 (its JSON
                  ``{"detail"}`` or an HTML page) without forwarding it.

Run one with ``genlab serve --profile different`` or :func:`start_profile`. Tests steer a
running profile through its :class:`Controls` (force the next failures, change a cap, switch a
sloppy answer on) and read what it did; the emulator's ledger still says what was created and
billed.

Example (it serves on local ports)::

    with start_profile("capped", api_key="k", time_scale=0.02) as service:
        service.controls.cap = 2
        client = genlab.Client(service.base_url, "k")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NEW_FIELDS = ("camera_motion",)
"""Fields the ``newer`` profile takes that genlab's catalog does not declare."""
NEW_MODELS = {"video-next": "video-a"}
"""Models the ``newer`` profile serves that the catalog does not know (served like the value)."""
ERROR_SHAPES: dict[str, Callable[[str], Any]] = {
    "type-detail": lambda reason: {"type": "generation_error", "detail": reason},
    "numeric-code": lambda reason: {"code": 5003, "message": None, "reason": reason},
    "string": lambda reason: reason,
    "reason-only": lambda reason: {"reason": reason},
}
"""How the ``error-shapes`` profile writes a failed task's error, given its reason text."""


def preset(**controls: Any) -> tuple[tuple[str, Any], ...]:
    """:class:`Controls` values a profile starts with, e.g. ``preset(cap=3)``.

    Example:
        >>> preset(cap=3, cap_retry_after=1.0)
        (('cap', 3), ('cap_retry_after', 1.0))
    """
    return tuple(sorted(controls.items()))


@dataclass(frozen=True)
class Profile:
    """What a profile changes. Every field defaults to the emulator's own behaviour.

    ``controls`` are the values its :class:`Controls` start with (see :func:`preset`); the
    behaviours of the limits profiles and of ``misrouted`` and ``sloppy`` live there, so a test
    can switch them at any moment.

    Example:
        >>> from genlab.emulator import get_profile
        >>> cdn = get_profile("cdn")
        >>> cdn.name, cdn.media_host
        ('cdn', True)
    """

    name: str
    summary: str
    error_shapes: bool = False
    media_host: bool = False
    link_ttl: float = 300.0
    html_errors: float = 0.0
    lost_answers: float = 0.0
    not_found_for: float = 0.0
    path_prefix: str = ""
    odd_ids: bool = False
    newer: bool = False
    controls: tuple[tuple[str, Any], ...] = ()


SLOPPY = preset(
    numeric_ids=True,
    status_case="title",
    unknown_status_queries=1,
    media_missing_queries=1,
    numbers_as="strings",
    relative_urls="path",
)
"""What the ``sloppy`` profile starts with: answers a tolerant client can still read."""

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("emulator", "genlab's emulator as it is"),
        Profile("error-shapes", "failed tasks' errors in other shapes", error_shapes=True),
        Profile("cdn", "media on a second origin: redirects, expiring signed links",
                media_host=True),
        Profile("proxy", "HTML 502 pages before, and 504 pages after, the service",
                html_errors=0.1, lost_answers=0.05),
        Profile("eventual", "tasks answer 404 for a second after their submit",
                not_found_for=1.0),
        Profile("prefix", "the API under /api", path_prefix="/api"),
        Profile("odd-ids", "task ids with / ? # % and spaces", odd_ids=True),
        Profile("newer", "a field and a model genlab's catalog does not know yet", newer=True),
        Profile("different", "every profile from error-shapes to newer, at once",
                error_shapes=True, media_host=True, html_errors=0.02, lost_answers=0.01,
                not_found_for=1.0, path_prefix="/api", odd_ids=True, newer=True),
        Profile("capped", "at most 3 tasks queued or processing per key, then 429 "
                "CONCURRENCY_LIMIT", controls=preset(cap=3)),
        Profile("quota", "an exhausted quota: every submit 429 QUOTA_EXCEEDED, Retry-After "
                "an hour", controls=preset(quota_left=0)),
        Profile("trickle", "submits billed, their answers sent one byte every 0.5 s",
                controls=preset(trickle_interval=0.5)),
        Profile("misrouted", "task queries sometimes answer another task or another model",
                controls=preset(misrouted_rate=0.2, wrong_model_rate=0.1)),
        Profile("sloppy", "numeric ids, odd statuses, late media, numbers as strings, "
                "relative media URLs", controls=SLOPPY),
        Profile("gateway", "a WAF answers every submit with a 403 page, never forwarding it",
                controls=preset(gateway_status=403, gateway_shape="waf")),
    )
}
"""Every named profile."""


def get_profile(name: str) -> Profile:
    """The profile called ``name``; a ValueError listing the names otherwise.

    Example:
        >>> get_profile("cdn").media_host
        True
        >>> dict(get_profile("capped").controls)
        {'cap': 3}
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"no profile {name!r}; choose one of: {', '.join(PROFILES)}"
        ) from None
