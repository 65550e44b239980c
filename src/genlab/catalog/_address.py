"""The content address of a request: one hash for every way of writing the same generation.

Two bodies that ask the service for the same thing have the same address, so an earlier result
can be reused instead of paid for again. The address covers:

- the model and every field, defaults included (an omitted ``duration`` of 5 and an explicit
  ``"duration": 5`` are the same request), keys in any order;
- each reference item's effective role (omitted, null and ``"asset"`` are one role), and an
  empty reference list is the same as none;
- each reference's identity: its URL, or for ``data:`` media a hash of the decoded bytes, or for
  a URL the caller knows the bytes of (an upload) the hash the caller gives.

Example:
    >>> from genlab.catalog import content_address, validate
    >>> a = content_address(validate({"model": "video-a", "prompt": "a fox"}))
    >>> b = content_address(validate({"prompt": "a fox", "duration": 5, "model": "video-a"}))
    >>> a == b, len(a)
    (True, 64)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from genlab.catalog._base import RequestBase

ADDRESS_VERSION = 1
"""Bumped when the canonical form changes, so old addresses never match new ones by accident."""

_ROLE_KEY = "reference_type"


def media_digest(data: bytes) -> str:
    """The identity of media bytes: ``sha256:<hex>``.

    Example:
        >>> media_digest(b"abc")[:15]
        'sha256:ba7816bf'
    """
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _data_uri_digest(url: str) -> str | None:
    head, sep, payload = url.partition(",")
    if not sep or not head.lower().startswith("data:"):
        return None
    try:
        data = (
            base64.b64decode(payload, validate=False)
            if head.lower().endswith(";base64")
            else payload.encode()
        )
    except (binascii.Error, ValueError):
        data = payload.encode()
    return media_digest(data)


def _identity(url: str, known: Mapping[str, str]) -> str:
    if url in known:
        return known[url]
    return _data_uri_digest(url) or url


def _canonical(value: Any, known: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        out = {k: _canonical(v, known) for k, v in value.items()}
        if isinstance(value.get("url"), str):  # a reference item
            out["url"] = _identity(value["url"], known)
            out[_ROLE_KEY] = value.get(_ROLE_KEY) or "asset"
        return out
    if isinstance(value, list):
        return [_canonical(v, known) for v in value]
    return value


def canonical_body(
    request: RequestBase, *, media_digests: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The request as the address sees it: every field with defaults, references by identity.

    Example:
        >>> from genlab.catalog import validate
        >>> canonical_body(validate({"model": "image-d", "prompt": "x"}))["resolution"]
        '1K'
    """
    body = request.model_dump(mode="json", exclude_none=False)
    body["model"] = request.model_name
    for key, value in body.items():
        if key.startswith("reference_") and value == []:
            body[key] = None  # an empty list and an omitted one ask for the same thing
        elif key.startswith("reference_") and isinstance(value, list):
            # A bare URL string is the same reference as {"url": ...} with the default role.
            body[key] = [{"url": v} if isinstance(v, str) else v for v in value]
    canonical = _canonical(body, media_digests or {})
    assert isinstance(canonical, dict)
    return canonical


def content_address(
    request: RequestBase, *, media_digests: Mapping[str, str] | None = None
) -> str:
    """The hex SHA-256 content address of a validated request.

    Args:
        request: a request from :func:`genlab.validate`.
        media_digests: URL -> :func:`media_digest` of its bytes, for references whose bytes the
            caller knows (uploads). ``data:`` URLs are hashed by their bytes without it.

    Example:
        >>> from genlab.catalog import validate
        >>> a = content_address(validate({"model": "video-a", "prompt": "a fox", "duration": 5}))
        >>> a == content_address(validate({"model": "video-a", "prompt": "a fox"}))  # default 5
        True
        >>> len(a)
        64
    """
    payload = {
        "v": ADDRESS_VERSION,
        "body": canonical_body(request, media_digests=media_digests),
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def prompt_address(body: Mapping[str, Any]) -> str:
    """The hex SHA-256 address of what a request asks for, whatever model it asks: its prompt
    and its reference media (by identity and role), without the model and its settings.

    Results of different models with the same prompt address answered the same brief, so
    they can be compared side by side (ratings record it). It reads the body as sent, so a
    model the catalog does not know yet has one too.

    Example:
        >>> a = prompt_address({"model": "video-a", "prompt": "a fox", "duration": 4})
        >>> b = prompt_address({"model": "image-b", "prompt": "a fox", "reference_images": []})
        >>> a == b, a == prompt_address({"model": "video-a", "prompt": "a fox."})
        (True, False)
    """
    inputs: dict[str, Any] = {}
    for key, value in body.items():
        if key.startswith("reference_") and isinstance(value, list) and value:
            items = [{"url": v} if isinstance(v, str) else v for v in value]
            inputs[key] = _canonical(items, {})
    payload = {"v": ADDRESS_VERSION, "prompt": body.get("prompt"), "inputs": inputs}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


__all__ = [
    "ADDRESS_VERSION", "canonical_body", "content_address", "media_digest", "prompt_address",
]
