"""The synchronous client: the async client driven from one background runner thread.

Why a runner thread: a Jupyter cell already runs inside an event loop, so ``asyncio.run`` is
refused there, and nest-asyncio (archived, breaks Python 3.12's loop factories, hangs under
widgets) is not an option. Instead each :class:`Client` owns one daemon thread with its own
event loop for its whole life; every call is handed to it with
``asyncio.run_coroutine_threadsafe`` and the calling thread blocks on the answer. That works
the same in a notebook cell, a plain script, an ipykernel subshell and a widget callback
running on another thread.

Ctrl-C (or the notebook's interrupt button) while a call waits cancels that call on the runner
loop and re-raises ``KeyboardInterrupt``; when a task was already accepted, the exception
carries a note naming it and how to resume (``client.wait("<task_id>")``), and the task id is
already in ``client.history``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import weakref
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from genlab.client._async import AsyncClient, RequestLike, TaskRef
from genlab.client._config import ClientConfig
from genlab.client._journal import TaskJournal
from genlab.client._types import Kind, Outcome, Task, TaskRecord
from genlab.client._uploads import FileLike
from genlab.client._waiting import OnUpdate

if TYPE_CHECKING:
    from genlab.widgets import Studio

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


def _shutdown(runner: Runner, client: AsyncClient) -> None:
    # Called by close(): waits until the pool is closed and the runner thread has stopped.
    if runner.running:
        try:
            runner.run(client.aclose())
        except Exception:  # the pool is going away either way
            logger.debug("genlab: error while closing the client", exc_info=True)
        runner.stop()


def _shutdown_soon(runner: Runner, client: AsyncClient) -> None:
    # Called by weakref.finalize when a Client that was never closed is collected, or at
    # interpreter exit. Holds no reference to the Client itself. It must never wait for the
    # runner thread: the collector runs it in whatever thread it interrupts, perhaps one that
    # holds the import lock, while closing the pool on the runner imports lazily; waiting
    # deadlocked both (found by the reliability suite). The runner closes itself instead.
    if not runner.running:
        return

    async def close_and_stop() -> None:
        await _cancel_others()
        try:
            await client.aclose()
        except Exception:  # the pool is going away either way
            logger.debug("genlab: error while closing the client", exc_info=True)
        asyncio.get_running_loop().stop()

    try:
        asyncio.run_coroutine_threadsafe(close_and_stop(), runner.loop)
    except RuntimeError:  # the loop closed meanwhile
        pass


class Client:
    """The synchronous genlab client, for notebook cells, scripts and widget callbacks.

    It takes the same arguments as :class:`AsyncClient` and has the same methods, blocking.
    ``on_update`` callbacks run on the client's runner thread (assign widget traits there;
    do not call this client's blocking methods from them).

    Example:
        with genlab.Client() as client:
            record = client.generate(model="image-b", prompt="a red kite")
            client.download(record, "out/")
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = 30.0,
        max_retries: int = 3,
        transport: httpx.AsyncBaseTransport | None = None,
        history: TaskJournal | None = None,
        wait_timeout: float = 1800.0,
        poll_scale: float = 1.0,
        retry_wait_initial: float = 0.5,
        retry_wait_max: float = 8.0,
        retry_after_max: float = 60.0,
        max_connections: int = 10,
    ) -> None:
        # Built first: a configuration error must not leave a thread behind.
        self._async = AsyncClient(
            base_url,
            api_key,
            timeout=timeout,
            max_retries=max_retries,
            transport=transport,
            history=history,
            wait_timeout=wait_timeout,
            poll_scale=poll_scale,
            retry_wait_initial=retry_wait_initial,
            retry_wait_max=retry_wait_max,
            retry_after_max=retry_after_max,
            max_connections=max_connections,
        )
        self._runner = Runner()
        self._finalizer = weakref.finalize(self, _shutdown_soon, self._runner, self._async)

    @property
    def history(self) -> TaskJournal:
        """The journal every submission is recorded in."""
        return self._async.history

    @property
    def base_url(self) -> str:
        return self._async.base_url

    @property
    def is_emulator(self) -> bool:
        """True when talking to genlab's emulator (``genlab.connect()`` sets it)."""
        return self._async.is_emulator

    @is_emulator.setter
    def is_emulator(self, value: bool) -> None:
        self._async.is_emulator = value

    def upload(self, source: FileLike, filename: str | None = None) -> str:
        """Upload a local file to the emulator; see :meth:`AsyncClient.upload`."""
        return self._runner.run(self._async.upload(source, filename))

    @property
    def config(self) -> ClientConfig:
        return self._async.config

    @property
    def aio(self) -> AsyncClient:
        """The underlying async client; only use it on this client's runner loop."""
        return self._async

    def __repr__(self) -> str:
        return f"Client(base_url={self._async.base_url!r}, api_key='***')"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop background work, close the connection pool and the runner thread."""
        if self._finalizer.detach() is not None:  # only the first close does the work
            _shutdown(self._runner, self._async)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    # --- the blocking API ------------------------------------------------------------

    def submit(self, request_or_body: RequestLike | None = None, /, **fields: Any) -> Task:
        """Validate and submit once; see :meth:`AsyncClient.submit`."""
        return self._runner.run(
            self._async.submit(request_or_body, **fields),
            interrupted_note="the submission may have reached the service; check "
            "client.history before submitting again",
        )

    def get(self, task_or_id: TaskRef, *, kind: Kind | None = None) -> TaskRecord:
        """The task's current record; see :meth:`AsyncClient.get`."""
        return self._runner.run(self._async.get(task_or_id, kind=kind))

    def wait(
        self,
        task: TaskRef,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
    ) -> TaskRecord:
        """Poll until the task ends; see :meth:`AsyncClient.wait`.

        Ctrl-C stops waiting (not the task) and re-raises ``KeyboardInterrupt`` with a note
        naming the task id; resume with ``client.wait(task_id)``.
        """
        task_id = task if isinstance(task, str) else task.task_id
        return self._runner.run(
            self._async.wait(
                task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure
            ),
            interrupted_note=f"task {task_id} is still running on the service; resume with "
            f"client.wait({task_id!r})",
        )

    def generate(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        **fields: Any,
    ) -> TaskRecord:
        """Submit and wait; see :meth:`AsyncClient.generate`.

        Example:
            record = client.generate(model="video-a", prompt="a fox", duration=5)
        """
        # Two steps so an interrupt during the wait can name the accepted task.
        task = self.submit(request_or_body, **fields)
        return self.wait(
            task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure
        )

    def map(
        self,
        requests: Iterable[RequestLike],
        *,
        concurrency: int = 4,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
    ) -> list[Outcome]:
        """Run many requests with bounded concurrency; see :meth:`AsyncClient.map`."""
        return self._runner.run(
            self._async.map(
                list(requests), concurrency=concurrency, timeout=timeout, on_update=on_update
            ),
            interrupted_note="accepted tasks keep running; their ids are in client.history",
        )

    def download(self, record: TaskRef, directory: str | os.PathLike[str] = ".") -> list[Path]:
        """Save results and a JSON sidecar; see :meth:`AsyncClient.download`."""
        return self._runner.run(self._async.download(record, directory))

    # --- non-blocking, for widgets ---------------------------------------------------

    def generate_future(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        **fields: Any,
    ) -> concurrent.futures.Future[TaskRecord]:
        """Start submit + wait in the background and return at once.

        The returned :class:`concurrent.futures.Future` resolves to the record (or raises what
        :meth:`generate` would). ``future.cancel()`` stops waiting; the task keeps running.

        Example:
            future = client.generate_future(model="image-b", prompt="a kite")
            future.add_done_callback(lambda f: gallery.show(f.result()))
        """
        return self._runner.start(
            self._async.generate(
                request_or_body,
                timeout=timeout,
                on_update=on_update,
                raise_on_failure=raise_on_failure,
                **fields,
            )
        )

    def wait_future(
        self,
        task: TaskRef,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
    ) -> concurrent.futures.Future[TaskRecord]:
        """Like :meth:`wait`, in the background; returns a :class:`concurrent.futures.Future`."""
        return self._runner.start(
            self._async.wait(
                task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure
            )
        )

    # --- notebook ----------------------------------------------------------------------

    def studio(self, **options: Any) -> Studio:
        """A :class:`genlab.widgets.Studio` on this client (needs ipywidgets).

        Example:
            client = genlab.connect()
            client.studio()          # the last expression of a cell: displayed
        """
        from genlab.widgets import Studio  # lazy: the client never imports widgets itself

        return Studio(self, **options)
