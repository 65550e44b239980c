"""The synchronous client: the async client driven from one background runner thread.

Why a runner thread: a Jupyter cell already runs inside an event loop, so ``asyncio.run`` is
refused there, and nest-asyncio (archived, breaks Python 3.12's loop factories, hangs under
widgets) is not an option. Instead each :class:`Client` owns one :class:`Runner` (a daemon
thread with its own event loop) for its whole life; every call is handed to it and the calling
thread blocks on the answer. That works the same in a notebook cell, a plain script, an
ipykernel subshell and a widget callback running on another thread.

The blocking methods are made from the async ones (:func:`blocking`, :func:`in_background`),
so their signatures, defaults and documentation are the async client's and cannot drift.
A coroutine is only ever created on the runner's loop: a call refused by a closed client
leaves no coroutine behind that was never awaited.

Ctrl-C (or the notebook's interrupt button) while a call waits cancels that call on the runner
loop and re-raises ``KeyboardInterrupt``; when a task was already accepted, the exception
carries a note naming it and how to resume (``client.wait("<task_id>")``), and the task id is
already in ``client.history``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Concatenate, ParamSpec, TypeVar, Unpack

from genlab.catalog import RequestBase
from genlab.client._async import AsyncClient, ClientOptions, LiveLine
from genlab.client._budget import Budget
from genlab.client._config import ClientConfig, OnUpdate, RequestLike, Task, TaskRecord, TaskRef
from genlab.client._protocols import TaskJournal
from genlab.client._purse import BudgetQuote
from genlab.display import in_notebook
from genlab.media import Result

logger = logging.getLogger("genlab")

T = TypeVar("T")
P = ParamSpec("P")
Make = Callable[[], Coroutine[Any, Any, T]]
"""Makes the coroutine to run; called on the runner's loop, never before."""

_WAKE = 0.2  # how often a blocked caller wakes to let Ctrl-C through
CLOSED = "this genlab Client is closed; create a new one"


class Runner:
    """One daemon thread running one event loop, until :meth:`stop`.

    Example:
        >>> runner = Runner()
        >>> async def answer() -> int:
        ...     return 42
        >>> runner.run(answer)
        42
        >>> runner.stop()
        >>> runner.run(answer)
        Traceback (most recent call last):
        ...
        RuntimeError: this genlab Client is closed; create a new one
    """

    def __init__(self, name: str = "genlab-runner") -> None:
        self.loop = asyncio.new_event_loop()
        self._closing = False  # set once the loop stopped: calls still queued are refused
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self._closing = True
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def running(self) -> bool:
        return self.thread.is_alive() and not self.loop.is_closed()

    def start(
        self, make: Make[T], future: concurrent.futures.Future[T] | None = None
    ) -> concurrent.futures.Future[T]:
        """Run ``make()`` on the runner loop; return a future (``future``, when given) at once.

        The coroutine is created there: if the runner stops first, none exists to leak.
        """
        future = future if future is not None else concurrent.futures.Future()

        def begin() -> None:
            if future.cancelled():
                return  # cancelled before it started: nothing is made
            if self._closing:  # the loop stopped with this call still queued
                if future.set_running_or_notify_cancel():
                    future.set_exception(RuntimeError(CLOSED))
                return
            try:
                task = self.loop.create_task(make())
            except BaseException as exc:  # making it failed: report it, as a call would
                if future.set_running_or_notify_cancel():
                    future.set_exception(exc)
                return
            task.add_done_callback(functools.partial(_settle, future))

            def cancel_task(done: concurrent.futures.Future[T]) -> None:
                if done.cancelled():
                    with contextlib.suppress(RuntimeError):  # the loop closed: nothing runs
                        self.loop.call_soon_threadsafe(task.cancel)

            future.add_done_callback(cancel_task)

        if not self.running:
            raise RuntimeError(CLOSED)
        try:
            self.loop.call_soon_threadsafe(begin)
        except RuntimeError:  # closed meanwhile
            raise RuntimeError(CLOSED) from None
        return future

    def run(
        self, make: Make[T], *, interrupted_note: str | None = None,
        tick: Callable[[], object] | None = None,
    ) -> T:
        """Run ``make()`` on the runner loop and block until it finishes; ``tick`` runs on
        the calling thread each time it wakes (a live line's redraw).

        On ``KeyboardInterrupt`` the coroutine is cancelled (and given a moment to record its
        state) before the interrupt is raised again, as :class:`Interrupted` carrying
        ``interrupted_note``: a notebook shows that one line, not a traceback.
        """
        if threading.current_thread() is self.thread:
            raise RuntimeError(
                "a synchronous genlab Client method was called from the client's own runner "
                "thread (e.g. inside on_update); use the AsyncClient there, or the *_future "
                "methods"
            )
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:  # an interrupt may come as soon as the call starts: it is ours to cancel
            self.start(make, future)
            while True:
                try:
                    return future.result(timeout=_WAKE)
                except concurrent.futures.TimeoutError:
                    if tick is not None:
                        tick()
                    if not self.running and not future.done():
                        future.cancel()  # stopped before the call began: it never will
                        raise RuntimeError(CLOSED) from None
        except KeyboardInterrupt as interrupt:
            future.cancel()
            try:  # let the coroutine write its journal notes
                future.exception(timeout=5.0)
            except (concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
                pass
            if not interrupted_note:
                raise
            # The exception's own report is the one line a person sees; a log line would be
            # a second, near-identical one.
            logger.info("genlab: interrupted; %s", interrupted_note)
            raise Interrupted(interrupted_note) from interrupt

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what still runs, stop the loop and join the thread. Idempotent."""
        if not self.running:
            return
        if threading.current_thread() is self.thread:
            self.loop.stop()
            return
        try:
            self.start(_cancel_others).result(timeout)
        except RuntimeError:  # stopped meanwhile: nothing left to cancel
            pass
        except concurrent.futures.TimeoutError:
            logger.warning("genlab: background tasks did not stop in %s s", timeout)
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or the notebook's stop button) while a call waited: the note says what was
    left behind, e.g. the task id and how to resume. IPython shows only that line."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note
        self.add_note(note)

    def _render_traceback_(self) -> list[str]:  # IPython's hook for a short report
        return [f"genlab: stopped waiting; {self.note}"]


def _settle(future: concurrent.futures.Future[T], task: asyncio.Task[T]) -> None:
    """Copy a finished task's outcome to the caller's future (as asyncio's own chaining
    does: the future stays pending, and so cancellable, until the task is done)."""
    if task.cancelled():
        future.cancel()
    if not future.set_running_or_notify_cancel():
        return
    if (exc := task.exception()) is not None:
        future.set_exception(exc)
    else:
        future.set_result(task.result())


async def _cancel_others() -> None:
    """Cancel every task on this loop but the current one, and wait for them to end."""
    current = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not current]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


def shutdown(runner: Runner, close: Make[None]) -> None:
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
            runner.run(cancel_then_close)
        except Exception:  # the pool is going away either way
            logger.debug("genlab: error while closing the client", exc_info=True)
        runner.stop()


def shutdown_soon(runner: Runner, close: Make[None]) -> None:
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
        runner.start(close_and_stop)
    except RuntimeError:  # the loop closed meanwhile
        pass


# --- the facade, made from the async client ------------------------------------------

Note = Callable[..., str | None]
"""Says what an interrupted call leaves behind, from the call's arguments."""

MAY_HAVE_SENT = "the submission may have reached the service; check client.history before " \
    "submitting again"


def blocking(
    method: Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]],
    note: Note | None = None,
) -> Callable[Concatenate[Client, P], T]:
    """The blocking twin of an :class:`AsyncClient` coroutine method: same signature and
    documentation, run on the client's runner."""

    @functools.wraps(method)
    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._runner.run(
            lambda: method(self._async, *args, **kwargs),
            interrupted_note=note(*args, **kwargs) if note is not None else None,
        )

    return call


def in_background(
    method: Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[Client, P], concurrent.futures.Future[T]]:
    """An :class:`AsyncClient` coroutine method started on the runner, returning a
    :class:`concurrent.futures.Future` at once (``future.cancel()`` stops the waiting, never a
    task on the service)."""

    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> concurrent.futures.Future[T]:
        return self._runner.start(lambda: method(self._async, *args, **kwargs))

    call.__name__ = call.__qualname__ = f"{method.__name__}_future"
    call.__doc__ = (
        f"Start :meth:`AsyncClient.{method.__name__}` in the background and return a "
        ":class:`concurrent.futures.Future` at once; it resolves to what the call returns, or "
        "raises what it raises. ``future.cancel()`` stops waiting; a task keeps running."
    )
    call.__signature__ = _signature(method)  # type: ignore[attr-defined]
    return call


def _signature(method: Callable[..., Any]) -> Any:
    import inspect

    return inspect.signature(method)


def _resume_note(task: TaskRef, *args: Any, **kwargs: Any) -> str:
    task_id = task if isinstance(task, str) else task.task_id
    return f"task {task_id} is still running on the service; resume with client.wait({task_id!r})"


class Client:
    """The synchronous genlab client, for notebook cells, scripts and widget callbacks.

    It takes the same arguments as :class:`AsyncClient` and has the same methods, blocking
    (plus ``generate_future`` and ``wait_future``, which return at once). ``on_update``
    callbacks run on the client's runner thread (assign widget traits there; do not call this
    client's blocking methods from them).

    Example:
        with genlab.Client() as client:
            record = client.generate(model="image-b", prompt="a red kite")
            client.download(record, "out/")

    Example:
        >>> import genlab
        >>> with genlab.Client("http://localhost:1", "key", max_retries=5) as client:
        ...     client.base_url, client.config.max_retries
        ('http://localhost:1', 5)
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        **options: Unpack[ClientOptions],
    ) -> None:
        # Built first: a configuration error must not leave a thread behind.
        self._async = AsyncClient(base_url, api_key, **options)
        self._runner = Runner()
        self._finalizer = weakref.finalize(
            self, shutdown_soon, self._runner, self._async.aclose
        )

    # --- made from the async client ----------------------------------------------------

    submit = blocking(AsyncClient.submit, lambda *a, **k: MAY_HAVE_SENT)
    get = blocking(AsyncClient.get)
    reroll = blocking(AsyncClient.reroll, lambda *a, **k: MAY_HAVE_SENT)
    map = blocking(
        AsyncClient.map,
        lambda *a, **k: "accepted tasks keep running; their ids are in client.history",
    )
    download = blocking(AsyncClient.download)
    find_reusable = blocking(AsyncClient.find_reusable)
    upload = blocking(AsyncClient.upload)
    reference_url = blocking(AsyncClient.reference_url)
    fetch_media = blocking(AsyncClient.fetch_media)
    generate_future = in_background(AsyncClient.generate)
    wait_future = in_background(AsyncClient.wait)

    def wait(
        self,
        task: TaskRef,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        progress: bool = True,
    ) -> Result:
        """Poll until the task ends; see :meth:`AsyncClient.wait`. In a notebook one live
        line shows while it waits and ends as one line (``progress=False``: no line).

        Ctrl-C stops waiting (not the task) with one line naming the task id and how to
        resume (``client.wait(task_id)``).
        """
        task_id = task if isinstance(task, str) else task.task_id
        model = "" if isinstance(task, str) else task.model
        kind = None if isinstance(task, str) else task.kind
        note = _resume_note(task)
        line: LiveLine | None = None

        def seen(record: TaskRecord) -> object:
            if line is not None:
                line.seen(record)
            return on_update(record) if on_update is not None else None

        try:
            if progress and in_notebook():
                line = LiveLine(task_id, model,
                                expected=self._async.expected(task_id, model, kind))
            with line.until_done() if line is not None else contextlib.nullcontext():
                record: Result = self._runner.run(
                    lambda: self._async.wait(task, timeout=timeout, on_update=seen,
                                             raise_on_failure=raise_on_failure, progress=False),
                    interrupted_note=note, tick=line.update if line else None,
                )
        except KeyboardInterrupt as interrupt:  # also one that came before the wait began
            if isinstance(interrupt, Interrupted):
                raise
            raise Interrupted(note) from interrupt
        if line is not None:
            line.finish(record)
        return record

    def generate(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        reuse: bool | None = None,
        progress: bool = True,
        **fields: Any,
    ) -> Result:
        """Submit and wait; see :meth:`AsyncClient.generate` (and its ``reuse``). In a
        notebook the wait shows one live line; the result is its card where displayed.

        Example:
            record = client.generate(model="video-a", prompt="a fox", duration=5)
        """
        # Two steps so an interrupt during the wait can name the accepted task.
        task: Task = self.submit(request_or_body, reuse=reuse, **fields)
        return self.wait(
            task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure,
            progress=progress,
        )

    def budget_quote(
        self, request_or_body: RequestLike | None = None, /, **fields: Any
    ) -> BudgetQuote:
        """What a submit of this request would reserve, and whether the budget would refuse
        it; nothing is reserved or sent (never a network or database call). See
        :meth:`AsyncClient.budget_quote`.

        Example:
            quote = client.budget_quote(model="video-a", prompt="a kite", duration=5)
            if not quote.allowed:
                print(quote.refusal)
        """
        return self._async.budget_quote(request_or_body, **fields)

    def check_budget(self, requests: Iterable[RequestBase]) -> int:
        """Check a whole batch against the budget before sending any of it; see
        :meth:`AsyncClient.check_budget`."""
        return self._async.check_budget(requests)

    # --- state -------------------------------------------------------------------------

    @property
    def history(self) -> TaskJournal:
        """The journal every submission is recorded in."""
        return self._async.history

    @property
    def base_url(self) -> str:
        return self._async.base_url

    @property
    def config(self) -> ClientConfig:
        return self._async.config

    @property
    def supports_uploads(self) -> bool:
        """True when the service takes local files (``genlab.connect()`` sets it for the
        embedded emulator); see :attr:`AsyncClient.supports_uploads`."""
        return self._async.supports_uploads

    @supports_uploads.setter
    def supports_uploads(self, value: bool) -> None:
        self._async.supports_uploads = value

    @property
    def budget(self) -> Budget | None:
        """The client's :class:`~genlab.client.Budget`, if it has one."""
        return self._async.budget

    @property
    def budget_remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""
        return self._async.budget_remaining

    @property
    def budget_remaining_today(self) -> int | None:
        """Credits left in the day cap today, across processes (None without one); a figure
        kept up to date in the background, never a database query."""
        return self._async.budget_remaining_today

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
            shutdown(self._runner, self._async.aclose)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive
