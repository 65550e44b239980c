"""Running a profile on loopback ports: the API's, and the media host's when it has one."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import replace
from typing import Any

import uvicorn

from genlab.emulator._profile_app import ProfileApp
from genlab.emulator._profile_controls import Controls
from genlab.emulator._profiles import Profile, get_profile
from genlab.emulator._server import KEEP_ALIVE, ServingHandle, create_app, listening_socket


class ProfileHandle(ServingHandle):
    """A profile serving on loopback ports. Use as a context manager, or call :meth:`stop`.

    Attributes:
        base_url: the API's base URL (with the profile's path prefix).
        media_origin: the media host's origin, or None.
        app: the :class:`ProfileApp` (``app.controls``, ``app.emulator``).
        controls: the profile's knobs (``handle.controls.cap = 2``) and observations.

    Example:
        >>> with start_profile("prefix", api_key="k", time_scale=0.02) as service:
        ...     type(service).__name__, type(service.app).__name__
        ('ProfileHandle', 'ProfileApp')
    """

    def __init__(self, app: ProfileApp, server: uvicorn.Server, thread: threading.Thread,
                 base_url: str) -> None:
        super().__init__(server, thread, app.emulator)
        self.app, self.base_url = app, base_url
        self.media_origin = app.media_origin

    @property
    def controls(self) -> Controls:
        """The running profile's knobs and what it saw (see :class:`Controls`)."""
        return self.app.controls

    def real_id(self, public: str | int) -> str:
        """The emulator's task id (as in :meth:`ledger`) behind an id a client was given."""
        return self.app.real_id(public)

    def tasks_in_flight(self, api_key: str | None = None) -> int:
        """Tasks of ``api_key`` (the served key by default) queued or processing now."""
        return self.app.tasks_in_flight(api_key)

    def stop(self, timeout: float = 10.0) -> None:
        self.app.closing.set()  # a trickling answer ends at once instead of holding the stop
        super().stop(timeout)


def bind_profile(
    profile: Profile, host: str, port: int
) -> tuple[list[socket.socket], str, str | None]:
    """The listening sockets a profile needs, its base URL and its media origin.

    Example:
        >>> from genlab.emulator import get_profile
        >>> sockets, base_url, media_origin = bind_profile(get_profile("prefix"), "127.0.0.1", 0)
        >>> base_url.endswith("/api"), media_origin
        (True, None)
        >>> for sock in sockets:
        ...     sock.close()
    """
    shown = f"[{host}]" if ":" in host else host
    sockets = [listening_socket(host, port)]
    base_url = f"http://{shown}:{sockets[0].getsockname()[1]}{profile.path_prefix}"
    media_origin = None
    if profile.media_host:
        sockets.append(listening_socket(host, 0))
        media_origin = f"http://{shown}:{sockets[1].getsockname()[1]}"
    return sockets, base_url, media_origin


def start_profile(
    profile: Profile | str, *, host: str = "127.0.0.1", port: int = 0, seed: int | None = None,
    link_ttl: float | None = None, **options: Any,
) -> ProfileHandle:
    """Serve the emulator as ``profile`` plays it, on a daemon thread; return once it answers.

    Args:
        profile: a :class:`Profile` or the name of one in :data:`PROFILES`.
        host, port: where the API listens (0 picks a free port); media get a second port.
        seed: makes the profile's random failures repeatable.
        link_ttl: seconds a signed media link lives (the profile's by default).
        **options: passed to :func:`~genlab.emulator.create_app` (api_key, time_scale ...).

    Example:
        >>> service = start_profile("prefix", api_key="k", time_scale=0.02)
        >>> service.base_url.endswith("/api")
        True
        >>> service.stop()
    """
    chosen = get_profile(profile) if isinstance(profile, str) else profile
    if link_ttl is not None:
        chosen = replace(chosen, link_ttl=link_ttl)
    sockets, base_url, media_origin = bind_profile(chosen, host, port)
    app = ProfileApp(create_app(**options), chosen, media_origin=media_origin, seed=seed)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_keep_alive=KEEP_ALIVE)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True,
                              name=f"genlab-profile-{chosen.name}")
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the profile's server did not start; see the log above")
        time.sleep(0.005)
    return ProfileHandle(app, server, thread, base_url)
