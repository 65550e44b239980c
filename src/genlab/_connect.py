"""``genlab.connect()``: what notebooks call. The real service when configured, otherwise the
embedded emulator, started once per process."""

from __future__ import annotations

import os
import secrets
import threading
from typing import TYPE_CHECKING, Unpack

from genlab.client import API_KEY_ENV, BASE_URL_ENV, Budget, Client, ConfigOptions
from genlab.client.journal import TaskJournal

if TYPE_CHECKING:
    from genlab.emulator import EmulatorHandle
    from genlab.history import History

_lock = threading.Lock()
_embedded: EmulatorHandle | None = None


def embedded_emulator(time_scale: float = 0.1) -> EmulatorHandle:
    """The process's embedded emulator, started on first use with a random key."""
    global _embedded
    with _lock:
        if _embedded is None:
            try:
                from genlab import emulator
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ImportError(
                    "the embedded emulator needs genlab's emulator extra: "
                    "pip install 'genlab[emulator]', or set GENLAB_BASE_URL and GENLAB_API_KEY "
                    "to use the real service"
                ) from exc
            _embedded = emulator.start(api_key=secrets.token_urlsafe(24), time_scale=time_scale)
        return _embedded


def connect(
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    history: History | TaskJournal | bool = True,
    budget: Budget | None = None,
    keep: bool | str | os.PathLike[str] = True,
    time_scale: float = 0.1,
    quiet: bool = False,
    **options: Unpack[ConfigOptions],
) -> Client:
    """A ready :class:`genlab.Client`: the real service if configured, else the emulator.

    The service is configured by the arguments or by ``GENLAB_BASE_URL`` and
    ``GENLAB_API_KEY``. Without a base URL, genlab starts its embedded emulator (once per
    process; offline, no credits spent) and says so in one line.

    Args:
        base_url: the service's base URL (default ``$GENLAB_BASE_URL``).
        api_key: the API key (default ``$GENLAB_API_KEY``); never printed or recorded.
        history: ``True`` for the default :class:`genlab.History` (``.genlab/history.sqlite``
            or ``$GENLAB_HISTORY``), a History or journal of your own, or ``False`` for an
            in-memory journal.
        budget: a :class:`genlab.Budget`: credit caps no submit can cross.
        keep: keep every result the moment it succeeds, in the media store (``True``: beside
            the history, or ``GENLAB_MEDIA``), in a folder or URL of your own, or not at all
            (``False``).
        time_scale: speed of the embedded emulator (0.1: a 5 s video takes about 3 s).
        quiet: say nothing when the emulator starts (a page people use without code, such
            as ``genlab app``, shows no log line and no address).
        **options: passed to :class:`genlab.Client` (timeouts, retries, polling); see
            :class:`genlab.client.ClientConfig`.

    Example:
        A notebook's first cell (it prints one line when it starts the emulator)::

            import genlab
            client = genlab.connect()
            # genlab: GENLAB_BASE_URL is not set; using the embedded emulator at http://...

    Example:
        >>> import genlab
        >>> client = genlab.connect("http://localhost:1", "key", history=False, keep=False)
        >>> client.base_url  # with no address, genlab.connect() starts the embedded emulator
        'http://localhost:1'
        >>> try:  # checked before anything is sent: no service needed
        ...     client.generate(model="video-a", prompt="a fox", duration=40)
        ... except genlab.InvalidParameterError as error:
        ...     print(error.message)
        video-a: duration must be from 2 to 30 (got 40)
        >>> client.close()
    """
    journal = _journal(history)
    url = base_url or os.environ.get(BASE_URL_ENV)
    if url:
        return Client(url, api_key or os.environ.get(API_KEY_ENV), history=journal,
                      budget=budget, keep=keep, **options)
    handle = embedded_emulator(time_scale)
    client = Client(handle.base_url, handle.api_key, history=journal, budget=budget, keep=keep,
                    **options)
    client.supports_uploads = True  # the emulator has POST /v1/uploads
    if quiet:
        return client
    print(
        f"genlab: {BASE_URL_ENV} is not set; using the embedded emulator at {handle.base_url} "
        "(offline, no credits spent)"
    )
    return client


def _journal(history: History | TaskJournal | bool) -> TaskJournal | None:
    if history is True:
        from genlab.history import History

        return History()
    if history is False:
        return None
    return history
