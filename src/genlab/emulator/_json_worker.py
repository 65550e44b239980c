"""Parse JSON request bodies; run as a script, the emulator's JSON worker process.

Parsing a large body holds the interpreter lock for its whole length (a 64 MB string takes
~80 ms): in another process it stalls no other client. This module imports nothing but the
standard library, so :class:`genlab.emulator._jsonparse.JsonParser` starts it as
``python -I -S _json_worker.py`` in ~20 ms and ~10 MB, whatever the server has imported.

The protocol, over the worker's stdin and stdout, keeps at most two copies of a body alive
across both processes: the server sends an 8-byte big-endian length and that many bytes of
JSON; the worker answers ``R`` (received) and waits for ``G`` (go), so the server has dropped
its copy before the worker makes another. It then answers one status byte (``O``: parsed,
``E``: refused), an 8-byte length and that many bytes: the value in :mod:`marshal` format, or
the UTF-8 reason the body was refused; and, once it has dropped its copy, ``F`` (freed). The
worker ends at the end of its input, and runs at a lower priority than the server, so a large
body never takes the processor from answering other clients.

Example:
    >>> parse(text_of(bytearray(b'{"model": "video-a", "n": [1, 2.5, null]}')))
    {'model': 'video-a', 'n': [1, 2.5, None]}
"""

from __future__ import annotations

import contextlib
import io
import json
import marshal
import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, cast

LENGTH = 8  # bytes of a length prefix
PARSED, REFUSED = b"O", b"E"
RECEIVED, GO, FREED = b"R", b"G", b"F"
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


class NotJson(ValueError):
    """The body is not valid JSON; the message says why, for the person who sent it."""


def text_of(data: bytes | bytearray | memoryview) -> str:
    """The text of a JSON body in any of JSON's encodings, decoded straight from any buffer.

    Example:
        >>> text_of('{"a": "é"}'.encode("utf-16"))
        '{"a": "é"}'
        >>> text_of(memoryview(b'{"a": "' + bytes([255]) + b'"}'))
        Traceback (most recent call last):
        ...
        genlab.emulator._json_worker.NotJson: the body is not valid JSON: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte
    """  # noqa: E501
    try:
        return str(data, json.detect_encoding(bytes(data[:4])), "surrogatepass")
    except (UnicodeDecodeError, LookupError) as exc:
        raise NotJson(f"the body is not valid JSON: {exc}") from None


def parse(text: str) -> Any:
    """The JSON value of ``text``.

    Example:
        >>> parse('[' * 5000 + ']' * 5000)
        Traceback (most recent call last):
        ...
        genlab.emulator._json_worker.NotJson: the body is not valid JSON: it is nested too deeply
    """
    try:
        return json.loads(text)
    except RecursionError:
        # Deeply nested brackets exhaust the parser's stack: the caller's mistake, not a crash.
        raise NotJson("the body is not valid JSON: it is nested too deeply") from None
    except ValueError as exc:
        raise NotJson(f"the body is not valid JSON: {exc}") from None


def answer(data: bytearray) -> tuple[bytes, bytes]:
    """The status and payload answering one body (see the module's protocol); ``data`` is
    emptied once decoded, so only the text stays while it is parsed.

    Example:
        >>> status, payload = answer(bytearray(b'{"a": 1}'))
        >>> status, marshal.loads(payload)
        (b'O', {'a': 1})
        >>> answer(bytearray(b"{"))[0]
        b'E'
    """
    try:
        text = text_of(data)
        data.clear()
        value = parse(text)
        del text  # the text goes before the value is copied again
        return PARSED, marshal.dumps(value)
    except NotJson as exc:
        return REFUSED, str(exc).encode()
    except (ValueError, RecursionError):  # marshal's own depth limit
        return REFUSED, b"the body is not valid JSON: it is nested too deeply"
    except MemoryError:
        return REFUSED, b"the body is too large to parse here; send smaller requests"


def serve(source: io.BufferedIOBase, sink: BinaryIO) -> None:
    """Answer bodies read from ``source`` on ``sink`` until ``source`` ends."""
    trim = _trimmer()
    while True:
        head = source.read(LENGTH)
        if len(head) < LENGTH:
            return
        data = _read(source, int.from_bytes(head, "big"))
        if data is None:
            return
        sink.write(RECEIVED)
        sink.flush()
        if source.read(1) != GO:
            return
        status, payload = answer(data)  # empties data once decoded
        del data
        trim()  # the value's memory, freed once marshalled, before the answer is sent
        sink.write(status + len(payload).to_bytes(LENGTH, "big"))
        sink.write(payload)
        sink.flush()
        del payload
        trim()
        sink.write(FREED)
        sink.flush()


def _read(source: io.BufferedIOBase, size: int) -> bytearray | None:
    """Exactly ``size`` bytes, or None when the input ends first."""
    data = bytearray(size)
    filled = 0
    with memoryview(data) as view:
        while filled < size:
            got = source.readinto(view[filled:])
            if not got:
                return None
            filled += got
    return data


def _trimmer() -> Callable[[], object]:
    """Make glibc give memory back: buffers of 1 MB or more get mappings of their own (by
    default the threshold grows with use, so a body's buffers land in the heap and grow by
    copying), and the heap a parse grew (90,000 strings: ~70 MB) is trimmed after each body,
    so an idle worker stays at ~10 MB. Elsewhere nothing is done."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        trim, mallopt = libc.malloc_trim, libc.mallopt
    except (ImportError, OSError, AttributeError, TypeError):
        return lambda: None
    mallopt(_M_MMAP_THRESHOLD, 1 << 20)
    return lambda: trim(0)


def _main() -> None:
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(10)
    serve(cast(io.BufferedIOBase, sys.stdin.buffer), sys.stdout.buffer)


if __name__ == "__main__":
    _main()
