"""The ledger's body digest: the same submission sent twice has the same digest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["body_digest"]


def body_digest(body: Any) -> str:
    """A stable digest of a request body, to spot the same submission sent twice.

    It is the SHA-256 of the body's canonical JSON (sorted keys, no spaces), fed piece by
    piece: a 48 MB string is escaped a slice at a time, never copied whole, and no single
    step holds the interpreter long enough to stall other requests.

    Example:
        >>> body_digest({"b": 1, "a": "x"}) == body_digest({"a": "x", "b": 1})
        True
    """
    digest = hashlib.sha256()
    for piece in _canonical(body):
        digest.update(piece)
    return digest.hexdigest()


_SLICE = 1 << 20


def _canonical(value: Any) -> Iterator[bytes]:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``,
    encoded, in pieces."""
    if isinstance(value, str):
        if len(value) <= _SLICE:
            yield json.dumps(value, ensure_ascii=False).encode()
            return
        yield b'"'
        for start in range(0, len(value), _SLICE):
            yield json.dumps(value[start : start + _SLICE], ensure_ascii=False)[1:-1].encode()
        yield b'"'
    elif isinstance(value, dict):
        yield b"{"
        for i, key in enumerate(sorted(value)):
            yield (b"," if i else b"") + json.dumps(str(key), ensure_ascii=False).encode() + b":"
            yield from _canonical(value[key])
        yield b"}"
    elif isinstance(value, list):
        yield b"["
        for i, item in enumerate(value):
            if i:
                yield b","
            yield from _canonical(item)
        yield b"]"
    else:
        yield json.dumps(value).encode()
