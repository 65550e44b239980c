"""Background work for the widgets: one small bounded thread pool and one clock per process.

Widget actions that would block the kernel (saving results, reading the history, running a
comparison) run on the pool, and the elapsed-time displays of task cards on the clock; neither
runs on the client's runner loop, which must stay free to poll. Work updates widgets only by
assigning traits (``widget.value = ...``): it never prints, displays or writes ``with out:``,
because output from a worker lands in whichever cell happens to be running.

Example:
    >>> from genlab.widgets import Background
    >>> work = Background(max_workers=1)
    >>> seen = []
    >>> work.run(sum, [1, 2, 3], on_done=seen.append).result()
    6
    >>> seen
    [6]
    >>> work.shutdown()
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

logger = logging.getLogger("genlab")

T = TypeVar("T")

THREAD_PREFIX = "genlab-widgets"


class Background:
    """A bounded pool for widget work, and one clock for periodic redraws.

    Args:
        max_workers: threads at most for :meth:`run`.
        tick_seconds: how often :meth:`tick` callbacks run.

    The pool is made on first use and again after :meth:`shutdown`, so a shared instance
    survives a shutdown (tests end each case with one, so no thread outlives it).

    Example:
        >>> work = Background(max_workers=1)
        >>> work.run(sum, [1, 2, 3]).result()
        6
        >>> work.shutdown()
    """

    _shared: ClassVar[Background | None] = None
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, max_workers: int = 4, *, tick_seconds: float = 0.5) -> None:
        self.max_workers = max_workers
        self.tick_seconds = tick_seconds
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._ticks: list[tuple[Callable[[], object], threading.Event]] = []
        self._clock: tuple[threading.Thread, threading.Event] | None = None

    @classmethod
    def shared(cls) -> Background:
        """The process-wide instance every genlab widget uses."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        on_done: Callable[[T], object] | None = None,
        on_error: Callable[[BaseException], object] | None = None,
    ) -> concurrent.futures.Future[T]:
        """Run ``fn(*args)`` on a worker; returns its future at once.

        ``on_done(result)`` or ``on_error(exception)`` runs on the worker before the future
        resolves, so whoever waits on the future sees the widgets already updated. The future
        still carries the exception after ``on_error``.

        Raises:
            RuntimeError: the interpreter is shutting down.
        """

        def job() -> T:
            try:
                result = fn(*args)
            except BaseException as exc:
                if on_error is not None:
                    on_error(exc)
                raise
            if on_done is not None:
                on_done(result)
            return result

        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    self.max_workers, thread_name_prefix=THREAD_PREFIX
                )
            return self._pool.submit(job)

    def tick(self, fn: Callable[[], object], *, until: threading.Event) -> None:
        """Call ``fn()`` every ``tick_seconds`` until ``until`` is set.

        Every tick shares one clock thread, which ends when none is left. It is a daemon
        thread, unlike the pool's: a clock waiting for a task that outlives the interpreter
        must not hold up its exit.
        """
        with self._lock:
            self._ticks.append((fn, until))
            if self._clock is not None:
                return
            wake = threading.Event()
            thread = threading.Thread(
                target=self._clock_loop, args=(wake,), name=f"{THREAD_PREFIX}-clock", daemon=True
            )
            self._clock = (thread, wake)
        thread.start()

    def _clock_loop(self, wake: threading.Event) -> None:
        while True:
            with self._lock:
                self._ticks = [(fn, until) for fn, until in self._ticks if not until.is_set()]
                if not self._ticks or wake.is_set():
                    if self._clock is not None and self._clock[1] is wake:
                        self._clock = None
                    return
                current = list(self._ticks)
            for fn, _until in current:
                try:
                    fn()
                except Exception:  # a redraw that failed must not stop the others
                    logger.exception("genlab: a widget redraw failed")
            wake.wait(self.tick_seconds)

    def shutdown(self, wait: bool = True) -> None:
        """Stop the clock, drop queued work and end the threads (after the running work).

        With ``wait``, work that the running work started meanwhile (a card that finished
        and refreshes its panel) is ended too: no thread outlives the call. The next
        :meth:`run` or :meth:`tick` starts again.
        """
        while True:
            with self._lock:
                pool, self._pool = self._pool, None
                clock, self._clock = self._clock, None
                self._ticks.clear()
            if pool is None and clock is None:
                return
            if clock is not None:
                thread, wake = clock
                wake.set()
                if wait and thread is not threading.current_thread():
                    thread.join()
            if pool is not None:
                pool.shutdown(wait=wait, cancel_futures=True)
            if not wait:
                return
