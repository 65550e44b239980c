"""Each cell checked against its model and priced, once per distinct body.

Example:
    >>> check = Checker()
    >>> cell = check({"model": "video-a", "prompt": "a kite", "duration": 4})
    >>> cell.credits, cell.invalid, len(cell.address)
    (640, None, 64)
    >>> check({"model": "video-a", "prompt": "a kite", "duration": [4, 8]}).invalid
    'video-a: duration must be an integer (got [4, 8])'
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from genlab.catalog import RequestBase, checked, content_address


@dataclass(frozen=True, slots=True)
class Checked:
    """A cell's body as the catalog sees it: the validated request (None when refused), the
    catalog's message for a refused body, the published price and the content address."""

    request: RequestBase | None
    invalid: str | None
    credits: int | None
    address: str | None


class Checker:
    """Validates and prices bodies (the catalog's :func:`~genlab.catalog.checked`), each
    distinct body once: cells that differ only where a model takes nothing (a seed it has
    no field for) share one check. With ``addresses=False`` the content address is left out
    (None): a grid that does not look its cells up in a history does not pay for it."""

    def __init__(self, *, addresses: bool = True) -> None:
        self._addresses = addresses  # the content address too (what finds earlier results)
        self._seen: dict[Hashable, Checked] = {}

    def __call__(self, body: Mapping[str, Any], key: Hashable | None = None) -> Checked:
        """The check of ``body``; ``key`` (optional) names it when the caller knows a cheaper
        identity than the body's JSON (equal keys must mean equal bodies)."""
        if key is None:
            key = json.dumps(body, sort_keys=True, default=str)
        found = self._seen.get(key)
        if found is None:
            request, invalid, credits = checked(body)
            address = (content_address(request) if request is not None and self._addresses
                       else None)
            found = self._seen[key] = Checked(request, invalid, credits, address)
        return found
