"""Run the emulator: in-process (:func:`create_app`) or on a real port in a daemon thread."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import uvicorn
from fastapi import FastAPI

from genlab._wire import TIME_SCALE_HEADER
from genlab.emulator._app import Shell, build_app
from genlab.emulator._faults import FaultConfig
from genlab.emulator._references import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REQUEST_BYTES,
    FetchLimits,
)
from genlab.emulator._state import (
    DEFAULT_API_KEY,
    DEFAULT_BLOCKED_WORDS,
    MAX_BODY_BYTES,
    EmulatorConfig,
    EmulatorState,
)
from genlab.emulator._tasks import Clock


def create_app(
    *,
    api_key: str = DEFAULT_API_KEY,
    time_scale: float = 1.0,
    clock: Clock | None = None,
    faults: FaultConfig | None = None,
    max_processing: int = 8,
    max_body_bytes: int = MAX_BODY_BYTES,
    blocked_words: tuple[str, ...] = DEFAULT_BLOCKED_WORDS,
    media_dir: Path | None = None,
    media_max_bytes: int = 1 << 30,
    fetch_timeout: float = 10.0,
    fetch_max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    fetch_concurrency: int = DEFAULT_CONCURRENCY,
    public_url: str | None = None,
) -> EmulatorApp:
    """The emulator as an ASGI app, for in-process use.

    Args:
        api_key: the bearer key clients must send.
        time_scale: multiplies every generation time; 0.02 finishes a 5 s video in ~0.6 s.
        clock: epoch seconds; inject one to move task time by hand in tests.
        faults: fault injection settings (see :class:`FaultConfig`).
        max_processing: tasks processed at once; the rest stay ``queued``.
        max_body_bytes: the request body cap (the interface's 64 MB).
        blocked_words: image prompts containing one of these words get ``INVALID_PROMPT``.
        media_dir: where results and uploads are kept (a temporary folder when None).
        media_max_bytes: the media store's cap; least recently used files go first.
        fetch_timeout: seconds allowed for fetching one reference.
        fetch_max_request_bytes: the most one request's references may add up to (each
            request's cap is the lesser of this and its items' caps summed).
        fetch_concurrency: references of one request fetched at once.
        public_url: the base of media URLs; defaults to the URL each request came in on.

    Returns:
        An ASGI app; ``app.state`` is reached as ``app.emulator`` (an ``EmulatorState`` with
        ``faults``, ``ledger()`` and ``book``).

    Example:
        >>> import httpx
        >>> app = create_app(api_key="k", time_scale=0.02)
        >>> client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
        ...                            base_url="http://emulator")
        >>> app.emulator.config.api_key
        'k'
        >>> app.emulator.close()  # frees its temporary media folder

    Note that ``httpx.ASGITransport`` runs no lifespan and buffers streamed answers.

    Raises:
        ValueError: for an empty or whitespace-only ``api_key`` (it would let a bare
            ``Authorization: Bearer`` header in), or a fetch limit below 1.
    """
    check_api_key(api_key)
    config = EmulatorConfig(
        api_key=api_key,
        time_scale=time_scale,
        max_processing=max_processing,
        max_body_bytes=max_body_bytes,
        blocked_words=blocked_words,
        media_dir=media_dir,
        media_max_bytes=media_max_bytes,
        fetch=FetchLimits(
            timeout=fetch_timeout,
            max_request_bytes=fetch_max_request_bytes,
            concurrency=fetch_concurrency,
        ),
        public_url=public_url,
    )
    state = EmulatorState(config, clock=clock, faults=faults)
    return EmulatorApp(build_app(state), state)


def check_api_key(api_key: str) -> None:
    """Refuse a key no client could be told apart with: empty or only whitespace.

    Example:
        >>> check_api_key("  ")
        Traceback (most recent call last):
        ...
        ValueError: the emulator's API key is empty; give a non-empty key (api_key=..., --api-key or GENLAB_API_KEY)
    """  # noqa: E501
    if not isinstance(api_key, str) or not api_key.strip():
        raise ValueError(
            "the emulator's API key is empty; give a non-empty key "
            "(api_key=..., --api-key or GENLAB_API_KEY)"
        )


class EmulatorApp(Shell):
    """The ASGI app returned by :func:`create_app`; ``.emulator`` is its state.

    Example:
        >>> app = create_app(api_key="k", time_scale=0.02)
        >>> type(app).__name__, app.emulator.config.time_scale
        ('EmulatorApp', 0.02)
        >>> app.emulator.close()
    """

    def __init__(self, app: FastAPI, state: EmulatorState) -> None:
        # How fast it runs against the real service, on every answer: a client scales what it
        # expects of durations by it (docs/spec-decisions.md).
        super().__init__(app, {TIME_SCALE_HEADER: f"{state.config.time_scale:g}"})
        self.fastapi = app
        self.emulator = state

    def openapi(self) -> dict[str, Any]:
        return self.fastapi.openapi()


KEEP_ALIVE = 30
"""Seconds the server keeps an idle connection open: longer than clients keep theirs (httpx:
5 s), so a client never reuses a connection the server is closing (a reset under load)."""


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound socket created with IPPROTO_TCP explicitly.

    asyncio turns Nagle off (TCP_NODELAY) only for sockets whose protocol is IPPROTO_TCP; a
    plain ``socket.socket()`` leaves it on and every kept-alive request waits ~43 ms.

    Example:
        >>> sock = listening_socket("127.0.0.1", 0)
        >>> sock.getsockname()[0]
        '127.0.0.1'
        >>> sock.close()
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


class ServingHandle:
    """What every emulator served on a thread offers: its ledger, and a clean stop.

    Use as a context manager, or call :meth:`stop`.
    """

    def __init__(
        self, server: uvicorn.Server, thread: threading.Thread, state: EmulatorState
    ) -> None:
        self._server = server
        self._thread = thread
        self._state = state

    def ledger(self) -> list[dict[str, Any]]:
        """Every accepted (and billed) submission: task id, model, credits, body digest."""
        return self._state.ledger()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and free the port and the media store."""
        self._server.should_exit = True
        self._thread.join(timeout)
        self._state.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class EmulatorHandle(ServingHandle):
    """A running emulator. Use as a context manager, or call :meth:`stop`.

    Attributes:
        base_url: e.g. ``http://127.0.0.1:50123``.
        api_key: the key clients must send.
        app: the ASGI app (``app.emulator`` is its state).

    Example:
        >>> import httpx
        >>> with start(api_key="k", time_scale=0.02) as emulator:
        ...     answer = httpx.get(emulator.base_url + "/v1/emulator/ledger",
        ...                        headers={"Authorization": "Bearer k"})
        ...     answer.status_code, emulator.ledger()
        (200, [])
    """

    def __init__(
        self,
        app: EmulatorApp,
        server: uvicorn.Server,
        thread: threading.Thread,
        base_url: str,
        api_key: str,
    ) -> None:
        super().__init__(server, thread, app.emulator)
        self.app = app
        self.base_url = base_url
        self.api_key = api_key

    @property
    def faults(self) -> FaultConfig:
        """The injected faults; change them at any time, e.g. ``handle.faults.fail_rate = .1``."""
        return self.app.emulator.faults

    def __repr__(self) -> str:
        return f"<genlab emulator at {self.base_url}>"


def start(
    api_key: str = DEFAULT_API_KEY,
    time_scale: float = 1.0,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    **options: Any,
) -> EmulatorHandle:
    """Start the emulator on a daemon thread and return once it answers.

    Args:
        api_key: the bearer key clients must send.
        time_scale: multiplies every generation time (0.02 = 50x faster).
        port: 0 picks a free port.
        host: the address to listen on (loopback by default).
        **options: passed to :func:`create_app` (faults, max_processing, media_dir, ...).

    Example (it serves on a local port)::

        with start(api_key="k", time_scale=0.02) as emulator:
            print(emulator.base_url)  # http://127.0.0.1:<port>

    Example:
        >>> emulator = start(api_key="k", time_scale=0.02)
        >>> emulator.base_url.startswith("http://127.0.0.1:"), emulator.api_key
        (True, 'k')
        >>> emulator.stop()
    """
    app = create_app(api_key=api_key, time_scale=time_scale, **options)  # checks the key
    sock = listening_socket(host, port)
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_keep_alive=KEEP_ALIVE
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run,
        kwargs={"sockets": [sock]},
        name=f"genlab-emulator-{bound_port}",
        daemon=True,
    )
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the emulator did not start; see the log above")
        time.sleep(0.005)
    shown = f"[{host}]" if ":" in host else host
    return EmulatorHandle(app, server, thread, f"http://{shown}:{bound_port}", api_key)
