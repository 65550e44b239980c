"""The runner: one daemon thread running one event loop, which the sync client drives.

Why a runner thread: a Jupyter cell already runs inside an event loop, so ``asyncio.run`` is
refused there, and nest-asyncio (archived, breaks Python 3.12's loop factories, hangs under
widgets) is not an option. Instead each :class:`~genlab.Client` owns one daemon thread with its
own event loop for its whole life; every call is handed to it with
``asyncio.run_coroutine_threadsafe`` and the calling thread blocks on the answer. That works
the same in a notebook cell, a plain script, an ipykernel subshell and a widget callback
running on another thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

logger = logging.getLogger("genlab")

T = TypeVar("T")

# How often a blocked caller wakes to let Ctrl-C through (lock waits are not interruptible
# on every platform).
_WAKE = 0.2


class Runner:
    """One daemon thread running one event loop, until :meth:`stop`.

    Example:
        >>> runner = Runner()
        >>> async def answer() -> int:
        ...     return 42
        >>> runner.run(answer())
        42
        >>> runner.stop()
    """

    def __init__(self, name: str = "genlab-runner") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def running(self) -> bool:
        return self.thread.is_alive() and not self.loop.is_closed()

    def start(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runner loop; return a future at once."""
        if not self.running:
            coro.close()
            raise RuntimeError("this genlab Client is closed; create a new one")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], *, interrupted_note: str | None = None) -> T:
        """Run ``coro`` on the runner loop and block until it finishes.

        On ``KeyboardInterrupt`` the coroutine is cancelled (and given a moment to record its
        state) before the interrupt is re-raised, with ``interrupted_note`` added to it.
        """
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError(
                "a synchronous genlab Client method was called from the client's own runner "
                "thread (e.g. inside on_update); use the AsyncClient there, or the *_future "
                "methods"
            )
        finished = threading.Event()

        async def tracked() -> T:
            try:
                return await coro
            finally:
                finished.set()

        try:
            future = self.start(tracked())
        except RuntimeError:
            coro.close()  # never started: close it so it is not reported as never awaited
            raise
        try:
            while True:
                try:
                    return future.result(timeout=_WAKE)
                except concurrent.futures.TimeoutError:
                    continue
        except KeyboardInterrupt as interrupt:
            future.cancel()
            finished.wait(timeout=5.0)  # let the coroutine write its journal notes
            if interrupted_note:
                interrupt.add_note(interrupted_note)
                logger.warning("genlab: interrupted; %s", interrupted_note)
            raise

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what still runs, stop the loop and join the thread. Idempotent."""
        if not self.running:
            return
        if threading.current_thread() is self.thread:
            self.loop.stop()
            return

        try:
            asyncio.run_coroutine_threadsafe(_cancel_others(), self.loop).result(timeout)
        except (concurrent.futures.TimeoutError, RuntimeError):
            logger.warning("genlab: background tasks did not stop in %s s", timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)


async def _cancel_others() -> None:
    """Cancel every task on this loop but the current one, and wait for them to end."""
    current = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not current]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


Close = Callable[[], Coroutine[Any, Any, None]]
"""Closes what runs on the runner (the async client's ``aclose``)."""


def shutdown(runner: Runner, close: Close) -> None:
    """Cancel the runner's work, run ``close`` on it, then stop it; waits for all three.
    For ``Client.close()``.

    Work is cancelled first: a submit still recording its journal entry then stops before
    sending, instead of meeting a closed connection pool.
    """
    if runner.running:

        async def cancel_then_close() -> None:
            await _cancel_others()
            await close()

        try:
            runner.run(cancel_then_close())
        except Exception:  # the pool is going away either way
            logger.debug("genlab: error while closing the client", exc_info=True)
        runner.stop()


def shutdown_soon(runner: Runner, close: Close) -> None:
    """Ask the runner to cancel its work, run ``close`` and stop itself; never waits.

    For ``weakref.finalize``: when a Client that was never closed is collected, or at exit.
    The collector runs this in whatever thread it interrupts, perhaps one holding the import
    lock, while closing the pool on the runner may import lazily: waiting here could deadlock
    both threads, so the runner closes itself instead.
    """
    if not runner.running:
        return

    async def close_and_stop() -> None:
        await _cancel_others()
        try:
            await close()
        except Exception:  # the pool is going away either way
            logger.debug("genlab: error while closing the client", exc_info=True)
        asyncio.get_running_loop().stop()

    try:
        asyncio.run_coroutine_threadsafe(close_and_stop(), runner.loop)
    except RuntimeError:  # the loop closed meanwhile
        pass
