"""The journal's writer thread: a history's methods run on one worker thread, in order, so a
slow or locked history never stalls the client's event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

logger = logging.getLogger("genlab")

T = TypeVar("T")


@contextlib.contextmanager
def recording(step: str) -> Iterator[None]:
    """Run one journal call whose failure must not stop the client: log it and go on.

    Every journal method but ``submit_started`` is called this way, so a full disk or a
    locked database never loses a task that the service already has.

    Example:
        >>> with recording("status_changed"):
        ...     raise OSError("disk full")  # logged, not raised
    """
    try:
        yield
    except Exception:
        logger.exception("genlab: the history failed to record %s; continuing", step)


class JournalWriter:
    """Runs a journal's methods on one worker thread, in the order they were asked.

    A history may block: SQLite waits up to its busy timeout when another process (a second
    notebook, a database browser) holds the lock. On the event loop that would freeze every
    poll and widget of the client; on this thread only the journal waits, and the writes still
    land in order. ``record`` does not wait for the write; ``call`` awaits it (the entry id of
    ``submit_started``); ``settle`` waits a bounded time for the writes asked so far.

    Example:
        writer = JournalWriter()
        entry_id = await writer.call(journal.submit_started, entry)
        writer.record("status_changed", journal.status_changed, record)
    """

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._last: concurrent.futures.Future[Any] | None = None
        self._lock = threading.Lock()

    def _submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="genlab-journal"
                )
            future = self._pool.submit(fn, *args)
            self._last = future
            return future

    async def call(
        self, fn: Callable[..., T], *args: Any, on_cancel: Callable[[T], object] | None = None
    ) -> T:
        """``fn(*args)`` on the journal thread; its result, or what it raised.

        Cancelling the caller does not undo the call: ``on_cancel`` then runs with its result
        (e.g. to mark a journal entry whose request was never sent).
        """
        future = self._submit(fn, *args)
        try:
            return await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            if on_cancel is not None:
                follow_up = on_cancel

                def after() -> None:
                    if future.exception() is None:
                        with recording("cancellation"):
                            follow_up(future.result())

                self._submit(after)  # one worker: runs once ``fn`` is done
            raise

    def record(self, step: str, fn: Callable[..., object], *args: Any) -> None:
        """``fn(*args)`` on the journal thread, not waited for; a failure is logged."""

        def logged() -> None:
            with recording(step):
                fn(*args)

        self._submit(logged)

    async def settle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the writes asked so far; True when they ended."""
        last = self._last
        if last is None or last.done():
            return True
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(last)), timeout)
        except TimeoutError:
            logger.warning(
                "genlab: the history is busy (locked by another process?); its writes "
                "continue in the background"
            )
            return False
        except Exception:  # logged where it was raised
            pass
        return True

    def close(self) -> None:
        """Let the thread end once the writes asked so far are done; never blocks."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


__all__ = ["JournalWriter", "recording"]
