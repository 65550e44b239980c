"""The synchronous client: the async client driven from one background runner thread.

Each :class:`Client` owns one :class:`~genlab.client._runner.Runner` (a daemon thread with its
own event loop) for its whole life, so it works in a notebook cell whose loop is already
running, in a plain script, in an ipykernel subshell and in widget callbacks.

Ctrl-C (or the notebook's interrupt button) while a call waits cancels that call on the runner
loop and re-raises ``KeyboardInterrupt``; when a task was already accepted, the exception
carries a note naming it and how to resume (``client.wait("<task_id>")``), and the task id is
already in ``client.history``.
"""

from __future__ import annotations

import concurrent.futures
import os
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Unpack

from genlab.catalog import RequestBase
from genlab.client._async import AsyncClient
from genlab.client._budget import Budget
from genlab.client._config import ClientConfig, ClientOptions
from genlab.client._files import FileLike
from genlab.client._media import MAX_MEDIA_BYTES
from genlab.client._reuse import PastResult
from genlab.client._runner import Runner, shutdown, shutdown_soon
from genlab.client._types import Kind, Outcome, RequestLike, Task, TaskRecord, TaskRef
from genlab.client._waiting import OnUpdate
from genlab.client.journal import TaskJournal


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
        **options: Unpack[ClientOptions],
    ) -> None:
        # Built first: a configuration error must not leave a thread behind.
        self._async = AsyncClient(base_url, api_key, **options)
        self._runner = Runner()
        self._finalizer = weakref.finalize(
            self, shutdown_soon, self._runner, self._async.aclose
        )

    @property
    def history(self) -> TaskJournal:
        """The journal every submission is recorded in."""
        return self._async.history

    @property
    def base_url(self) -> str:
        return self._async.base_url

    @property
    def supports_uploads(self) -> bool:
        """True when the service takes local files (``genlab.connect()`` sets it for the
        embedded emulator); see :attr:`AsyncClient.supports_uploads`."""
        return self._async.supports_uploads

    @supports_uploads.setter
    def supports_uploads(self, value: bool) -> None:
        self._async.supports_uploads = value

    def upload(self, source: FileLike, filename: str | None = None) -> str:
        """Upload a local file to the emulator; see :meth:`AsyncClient.upload`."""
        return self._runner.run(self._async.upload(source, filename))

    def reference_url(
        self, data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
    ) -> str:
        """The URL to send for a local reference file: uploaded when :attr:`supports_uploads`,
        else a ``data:`` URI for an image where allowed; see :meth:`AsyncClient.reference_url`.

        Raises:
            InvalidParameterError: the list needs a public http(s) URL for this file.

        Example:
            url = client.reference_url(png, "frame.png", allow_data_uri=spec.allow_data_uri)
        """
        return self._runner.run(
            self._async.reference_url(data, filename, allow_data_uri=allow_data_uri, field=field)
        )

    def fetch_media(self, url: str, *, max_bytes: int = MAX_MEDIA_BYTES) -> bytes:
        """The bytes behind a media URL, at most ``max_bytes``; see
        :meth:`AsyncClient.fetch_media`.

        Raises:
            MediaError: the media could not be fetched, or is larger than ``max_bytes``.

        Example:
            png = client.fetch_media(record.images[0].url)
        """
        return self._runner.run(self._async.fetch_media(url, max_bytes=max_bytes))

    @property
    def config(self) -> ClientConfig:
        return self._async.config

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
        """Credits left in the day cap today, across processes (None without one)."""
        return self._async.budget_remaining_today

    def find_reusable(
        self, request_or_body: RequestLike | None = None, /, **fields: Any
    ) -> PastResult | None:
        """The earlier result a reuse would return for this request, or None (nothing is
        sent; it may probe one media link); see :meth:`AsyncClient.find_reusable`."""
        return self._runner.run(self._async.find_reusable(request_or_body, **fields))

    def check_budget(self, requests: Iterable[RequestBase]) -> int:
        """Check a whole batch against the budget before sending any of it; see
        :meth:`AsyncClient.check_budget`."""
        return self._async.check_budget(requests)

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

    # --- the blocking API ------------------------------------------------------------

    def submit(
        self, request_or_body: RequestLike | None = None, /, *, reuse: bool | None = None,
        **fields: Any,
    ) -> Task:
        """Validate and submit once, inside the budget; see :meth:`AsyncClient.submit`."""
        return self._runner.run(
            self._async.submit(request_or_body, reuse=reuse, **fields),
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
        reuse: bool | None = None,
        **fields: Any,
    ) -> TaskRecord:
        """Submit and wait; see :meth:`AsyncClient.generate` (and its ``reuse``).

        Example:
            record = client.generate(model="video-a", prompt="a fox", duration=5)
        """
        # Two steps so an interrupt during the wait can name the accepted task.
        task = self.submit(request_or_body, reuse=reuse, **fields)
        return self.wait(
            task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure
        )

    def reroll(
        self,
        record_or_request: TaskRef | RequestLike,
        /,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
    ) -> TaskRecord:
        """Generate a fresh one and pay for it; see :meth:`AsyncClient.reroll`.

        Example:
            again = client.reroll(record)
        """
        return self._runner.run(
            self._async.reroll(record_or_request, timeout=timeout, on_update=on_update),
            interrupted_note="the submission may have reached the service; check "
            "client.history before submitting again",
        )

    def map(
        self,
        requests: Iterable[RequestLike],
        *,
        concurrency: int = 4,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        reuse: bool | None = None,
    ) -> list[Outcome]:
        """Run many requests with bounded concurrency; see :meth:`AsyncClient.map`."""
        return self._runner.run(
            self._async.map(
                list(requests), concurrency=concurrency, timeout=timeout, on_update=on_update,
                reuse=reuse,
            ),
            interrupted_note="accepted tasks keep running; their ids are in client.history",
        )

    def download(
        self,
        record: TaskRef,
        directory: str | os.PathLike[str] | None = None,
        *,
        storage_options: Mapping[str, Any] | None = None,
    ) -> list[Path | str]:
        """Save results and a JSON sidecar into a folder or a URL (``"s3://bucket/prefix/"``;
        default ``GENLAB_MEDIA``, else the current folder); see :meth:`AsyncClient.download`.

        Local files come back as :class:`~pathlib.Path`, remote ones as URL strings.
        """
        return self._runner.run(
            self._async.download(record, directory, storage_options=storage_options)
        )

    # --- non-blocking, for widgets ---------------------------------------------------

    def generate_future(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        reuse: bool | None = None,
        **fields: Any,
    ) -> concurrent.futures.Future[TaskRecord]:
        """Start submit + wait in the background and return at once.

        The returned :class:`concurrent.futures.Future` resolves to the record (or raises what
        :meth:`generate` would). ``future.cancel()`` stops waiting; the task keeps running.
        ``reuse`` is :meth:`generate`'s.

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
                reuse=reuse,
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
