"""Parse request bodies without stalling other clients: small ones on a worker thread, large
ones in a worker process of their own.

``json.loads`` holds the interpreter lock from start to end, even on a worker thread: a 64 MB
string stalls every other request of the server for ~80 ms, a cost that grows with the body.
Bodies of :data:`OFFLOAD_BYTES` or more are therefore parsed by one long-lived worker process
(:mod:`genlab.emulator._json_worker`, standard library only), started on first need and
stopped with the app; the server then only rebuilds the value from :mod:`marshal` data, a few
times faster than parsing. The body is handed over and dropped before the worker copies it,
and the worker drops its answer before the server rebuilds it, so the server and its worker
together hold about twice the body's size at the peak.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import mmap
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from genlab.emulator import _json_worker
from genlab.emulator._json_worker import (
    FREED,
    GO,
    LENGTH,
    PARSED,
    RECEIVED,
    NotJson,
    parse,
    text_of,
)

OFFLOAD_BYTES = 4 * 1024 * 1024
"""Bodies at least this large are parsed in the worker process (smaller ones take < 5 ms)."""
WORKER_SECONDS = 60.0
"""The longest a worker may take over one body before it is stopped (it takes < 1 s)."""
_WORKER = Path(_json_worker.__file__)

__all__ = ["OFFLOAD_BYTES", "Body", "JsonParser", "NotJson", "ParserLost"]


class ParserLost(Exception):
    """The worker process ended or stalled while it held a body; the request may be sent
    again (a new worker starts on the next large body)."""


class Body:
    """A request body as it arrives, in a memory mapping of its own.

    The mapping is sized by the declared length (``expected``), else ``limit``, and grows to
    ``limit`` should the body be longer than declared (a middleware may rewrite it). It costs
    only the pages written, and goes back to the system the moment it is closed: memory from
    the heap would be kept by the allocator for reuse, and counted, long after the body was
    parsed.

    Example:
        >>> with Body(4, limit=1024) as body:
        ...     body.append(b'{"a": ')
        ...     body.append(b'1}')
        ...     len(body), bytes(body.view())
        (8, b'{"a": 1}')
    """

    def __init__(self, expected: int | None, *, limit: int) -> None:
        self.limit = limit
        size = limit if expected is None else min(expected, limit)
        self._map = mmap.mmap(-1, max(size, 1))
        self._size = 0

    def append(self, chunk: bytes) -> None:
        """Add ``chunk``; raises ValueError past the limit."""
        end = self._size + len(chunk)
        if end > len(self._map):
            if end > self.limit:
                raise ValueError(f"the body is longer than {self.limit} bytes")
            larger = mmap.mmap(-1, self.limit)
            larger[: self._size] = self._map[: self._size]
            self._map.close()
            self._map = larger
        self._map[self._size : end] = chunk
        self._size = end

    def view(self) -> memoryview:
        """The bytes received so far, uncopied (release the view before :meth:`close`)."""
        return memoryview(self._map)[: self._size]

    def close(self) -> None:
        """Give the memory back (again: nothing). While a parse that was given up on still
        reads it, the memory goes back once that parse ends."""
        with contextlib.suppress(BufferError):
            self._map.close()

    def __len__(self) -> int:
        return self._size

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class JsonParser:
    """Parses JSON bodies for one emulator; :meth:`close` stops its worker process.

    Args:
        offload_bytes: bodies at least this large go to the worker process.

    Example:
        >>> import asyncio
        >>> parser = JsonParser()
        >>> body = Body(None, limit=64)
        >>> body.append(b'{"model": "image-a"}')
        >>> asyncio.run(parser.parse(body))
        {'model': 'image-a'}
        >>> parser.close()
    """

    def __init__(self, offload_bytes: int = OFFLOAD_BYTES) -> None:
        self.offload_bytes = offload_bytes
        self._turn = asyncio.Lock()  # bodies wait for the worker here, not on a thread
        self._lock = threading.Lock()  # one exchange at a time, even past a cancellation
        self._process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    async def parse(self, body: Body) -> Any:
        """The JSON value of ``body``, which is closed as soon as it is no longer needed.

        Raises:
            NotJson: the body is not valid JSON (the message says why).
            ParserLost: the worker process ended or stalled while parsing it.
        """
        if len(body) < self.offload_bytes:
            return await asyncio.to_thread(_parse_here, body)
        async with self._turn:
            try:
                async with asyncio.timeout(WORKER_SECONDS):
                    return await asyncio.to_thread(self._exchange, body)
            except TimeoutError:
                process = self._process
                if process is not None:
                    process.kill()  # ends the stalled exchange: its thread reads end-of-file
                self.close()
                raise ParserLost("the JSON worker took too long") from None

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id while it runs (None before the first large body)."""
        process = self._process
        return process.pid if process is not None else None

    def close(self) -> None:
        """Stop the worker process, if one was started; parsing starts a new one if need be."""
        if self._finalizer is not None:
            self._finalizer()  # runs _stop once
        self._process = self._finalizer = None

    def _exchange(self, body: Body) -> Any:
        with self._lock:
            process = self._running()
            if process is None:  # no interpreter to start: parse here rather than refuse
                return _parse_here(body)
            stdin, stdout = _pipes(process)
            try:
                stdin.write(len(body).to_bytes(LENGTH, "big"))
                with body.view() as view:
                    stdin.write(view)
                stdin.flush()
                _expect(stdout, RECEIVED)
                body.close()  # the worker holds the only copy before it makes another
                stdin.write(GO)
                stdin.flush()
                head = _exactly(stdout, 1 + LENGTH)
                payload = _exactly(stdout, int.from_bytes(head[1:], "big"))
                _expect(stdout, FREED)  # its copy is gone before this one is rebuilt
            except (OSError, ValueError) as exc:
                self._forget(process)
                raise ParserLost(f"the JSON worker ended ({type(exc).__name__})") from None
            except ParserLost:
                self._forget(process)
                raise
        if head[:1] != PARSED:
            raise NotJson(payload.decode("utf-8", "replace"))
        return marshal.loads(payload)

    def _running(self) -> subprocess.Popen[bytes] | None:
        process = self._process
        if process is not None and process.poll() is None:
            return process
        if process is not None:
            self._forget(process)
        if not sys.executable or not _WORKER.is_file():  # e.g. genlab run from a zip
            return None
        try:
            # -I -S: no site-packages, no environment; the worker needs the stdlib only.
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            return None
        self._process = process
        self._finalizer = weakref.finalize(self, _stop, process)
        return process

    def _forget(self, process: subprocess.Popen[bytes]) -> None:
        if self._process is process:
            self.close()
        else:
            _stop(process)


def _parse_here(body: Body) -> Any:
    with body.view() as view:
        text = text_of(view)
    body.close()
    return parse(text)


def _exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise ParserLost("the JSON worker ended")
    return data


def _expect(stream: IO[bytes], signal: bytes) -> None:
    if _exactly(stream, 1) != signal:
        raise ParserLost("the JSON worker answered out of turn")


def _pipes(process: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    if process.stdin is None or process.stdout is None:
        raise ParserLost("the JSON worker has no pipes")
    return process.stdin, process.stdout


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the worker: end of input first (it exits at once), then a kill if it lingers."""
    with contextlib.suppress(OSError, ValueError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
    with contextlib.suppress(OSError, ValueError):
        if process.stdout is not None:
            process.stdout.close()
