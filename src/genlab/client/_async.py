"""The asynchronous client: submit, get, wait, generate, download and map.

Example:
    async with genlab.AsyncClient() as client:
        record = await client.generate(model="video-a", prompt="a fox in the snow")
        paths = await client.download(record, "out/")
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Unpack

import httpx

from genlab._errors import (
    APIConnectionError,
    ConfigurationError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TaskFailedError,
    TaskNotFinishedError,
)
from genlab._wire import KINDS
from genlab.client._batch import run_many
from genlab.client._config import ClientConfig, ConfigOptions, resolve_config
from genlab.client._download import download_record
from genlab.client._files import FileLike
from genlab.client._journal import MemoryJournal, TaskJournal, recording
from genlab.client._media import MAX_MEDIA_BYTES, fetch_media
from genlab.client._polling import PollSchedule
from genlab.client._submitting import Submitted, build_request, submit_once
from genlab.client._transport import Http
from genlab.client._types import Kind, Outcome, RequestLike, Task, TaskRecord, TaskRef
from genlab.client._uploads import inline_reference, upload
from genlab.client._waiting import OnUpdate, elapsed_since, poll_until_done

logger = logging.getLogger("genlab")


class AsyncClient:
    """The asynchronous genlab client. Every method is a coroutine; use it with ``await``.

    Args:
        base_url: the service address; defaults to ``GENLAB_BASE_URL``.
        api_key: the API key; defaults to ``GENLAB_API_KEY``. Never shown in any repr or error.
        transport: an httpx async transport, e.g. ``httpx.ASGITransport(app=emulator_app)``.
        history: a :class:`~genlab.client.TaskJournal` that records every submission; defaults
            to an in-memory journal, which also learns durations for polling.
        **options: ``timeout``, ``max_retries``, ``wait_timeout`` (the default deadline of
            :meth:`wait`), ``poll_scale``, ``retry_wait_initial``, ``retry_wait_max``,
            ``retry_after_max`` and ``max_connections``; each is described, with its default,
            in :class:`~genlab.client.ClientConfig`.

    Raises:
        ConfigurationError: no base URL or API key was given or found in the environment.

    Example:
        client = genlab.AsyncClient("http://localhost:8000", "test-key")
        task = await client.submit(model="image-b", prompt="a red kite")
        record = await client.wait(task)
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        history: TaskJournal | None = None,
        **options: Unpack[ConfigOptions],
    ) -> None:
        self._config: ClientConfig = resolve_config(base_url, api_key, **options)
        if history is not None and not isinstance(history, TaskJournal):
            raise ConfigurationError(
                f"history must implement genlab.client.TaskJournal, got {type(history).__name__}"
            )
        self.history: TaskJournal = history if history is not None else MemoryJournal()
        self._http = Http(self._config, transport)
        self._tasks: dict[str, Submitted] = {}  # tasks this client submitted: body, timing
        self._kinds: dict[str, Kind] = {}
        self._supports_uploads = False

    @property
    def base_url(self) -> str:
        return self._config.base_url

    @property
    def supports_uploads(self) -> bool:
        """True when the service takes local files through :meth:`upload` (genlab's emulator).

        ``genlab.connect()`` sets it when it starts the embedded emulator; the real service
        has no upload endpoint, so it is False unless set.
        """
        return self._supports_uploads

    @supports_uploads.setter
    def supports_uploads(self, value: bool) -> None:
        self._supports_uploads = bool(value)

    async def upload(self, source: FileLike, filename: str | None = None) -> str:
        """Upload a local file (path or bytes) to the emulator; returns a URL to reference.

        The real service has no upload endpoint: there, give public URLs (or
        :func:`genlab.client.data_uri` for images on models that accept Base64), or let
        :meth:`reference_url` choose.

        Example:
            url = await client.upload("character.png")
            await client.submit(model="video-d", reference_images=[{"url": url}], ...)
        """
        return await upload(self._http, source, filename)

    async def reference_url(
        self, data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
    ) -> str:
        """The URL to send for a local file used as reference media.

        Uploaded when :attr:`supports_uploads`; otherwise a ``data:`` URI when the list allows
        them (``allow_data_uri``, from the catalog) and the file is an image.

        Raises:
            InvalidParameterError: the list needs a public http(s) URL; ``field`` names the
                list in the message.

        Example:
            url = await client.reference_url(png, "frame.png", allow_data_uri=True)
        """
        if self.supports_uploads:
            return await self.upload(data, filename)
        return inline_reference(data, filename, allow_data_uri=allow_data_uri, field=field)

    async def fetch_media(self, url: str, *, max_bytes: int = MAX_MEDIA_BYTES) -> bytes:
        """The bytes behind a media URL (a result, a cover), at most ``max_bytes`` of them.

        Fetched like :meth:`download` fetches: retried where safe, redirects followed, and never
        with the API key (media URLs are public and may be on another host).

        Raises:
            MediaError: an error status, network trouble, not an http(s) URL, or larger than
                ``max_bytes`` (64 MiB by default).

        Example:
            png = await client.fetch_media(record.images[0].url)
        """
        return await fetch_media(self._http, url, max_bytes=max_bytes)

    @property
    def config(self) -> ClientConfig:
        """The resolved configuration (the key inside is masked)."""
        return self._config

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._config.base_url!r}, api_key='***')"

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool. The client cannot be used afterwards."""
        await self._http.aclose()

    # --- submit ----------------------------------------------------------------------

    async def submit(self, request_or_body: RequestLike | None = None, /, **fields: Any) -> Task:
        """Validate a request with the catalog, then submit it once.

        Args:
            request_or_body: a body dict or a validated request; may be omitted.
            **fields: request fields; they override and extend ``request_or_body``.

        Returns:
            The accepted :class:`Task`.

        Raises:
            InvalidParameterError: the request breaks the model's rules (nothing was sent).
            SubmissionUncertainError: it may have reached the service; it was not resent.
            APIError / APIConnectionError: refused, or the service could not be reached.

        Example:
            task = await client.submit(model="video-a", prompt="waves", duration=8)
        """
        request = build_request(request_or_body, fields)
        task, known = await submit_once(self._http, self.history, request)
        self._tasks[task.task_id] = known
        self._kinds[task.task_id] = known.kind
        logger.info("genlab: submitted %s task %s", request.model_name, task.task_id)
        return task

    # --- get / wait ------------------------------------------------------------------

    async def get(self, task_or_id: TaskRef, *, kind: Kind | None = None) -> TaskRecord:
        """The task's current record.

        A bare id needs its kind: pass ``kind="video"``/``"image"``, or use an id this client
        submitted. Otherwise the video endpoint is asked first and, on 404, the image one.

        Example:
            record = await client.get("task-123", kind="image")
        """
        task_id, known = self._resolve(task_or_id, kind)
        if known is not None:
            return await self._get(task_id, known)
        try:
            return await self._get(task_id, "video")
        except NotFoundError:
            return await self._get(task_id, "image")

    async def _get(self, task_id: str, kind: Kind) -> TaskRecord:
        def read_record(data: Mapping[str, Any]) -> TaskRecord:
            return TaskRecord.model_validate({**data, "kind": kind})

        record = await self._http.get(
            f"/v1/{kind}s/tasks/{task_id}", read_record, what=f"record for task {task_id}"
        )
        self._kinds[task_id] = kind
        return record

    async def wait(
        self,
        task: TaskRef,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
    ) -> TaskRecord:
        """Poll until the task succeeds or fails, within an overall deadline.

        Polling is adaptive, and learned from the history when it knows how long similar tasks
        took. Network trouble while polling is retried and then tolerated until the deadline.

        Args:
            task: a Task, a TaskRecord or a task id.
            timeout: overall seconds for this wait (default: the client's ``wait_timeout``;
                ``math.inf`` waits forever).
            on_update: called with the record once per status change, the first one included.
                May be a coroutine function. An exception it raises ends the wait (the task
                keeps running).
            raise_on_failure: with False a failed task's record is returned instead.

        Raises:
            TaskFailedError: the task failed (``.record`` holds it).
            TaskTimeoutError: the deadline passed; the task keeps running. Resume with
                ``client.wait(task_id)``.

        Example:
            record = await client.wait(task, timeout=600, on_update=print)
        """
        task_id, kind = self._resolve(task, None)
        known = self._tasks.get(task_id)
        limit = self._config.wait_timeout if timeout is None else float(timeout)

        async def fetch() -> TaskRecord | None:
            nonlocal kind
            record = await self._poll(task_id, kind)
            kind = record.kind if record is not None else kind
            return record

        record = await poll_until_done(
            task_id,
            fetch,
            schedule=self._schedule_for(known),
            elapsed=elapsed_since(known.started if known is not None else None),
            limit=limit,
            on_change=self._status_changed,
            on_update=on_update,
        )
        if record.failed and raise_on_failure:
            raise TaskFailedError(
                f"task {task_id} ({record.model}) failed: {record.error or 'no reason given'}",
                record=record,
            )
        return record

    def _status_changed(self, record: TaskRecord) -> None:
        with recording("status_changed"):
            self.history.status_changed(record)

    async def _poll(self, task_id: str, kind: Kind | None) -> TaskRecord | None:
        try:
            return await self.get(task_id, kind=kind)
        except (ServerError, RateLimitError, APIConnectionError) as exc:
            # Retries of this GET are used up; the task is fine, the network is not. Keep
            # waiting until the deadline rather than abandoning a task that costs money.
            logger.warning("genlab: polling task %s failed (%s); still waiting", task_id, exc)
            return None

    def _schedule_for(self, known: Submitted | None) -> PollSchedule:
        expected = None
        key = known.duration_key if known is not None else None
        if key is not None:
            try:
                expected = self.history.expected_duration(*key)
            except Exception:  # a journal problem must not stop the wait
                logger.exception("genlab: the history could not estimate a duration")
        return PollSchedule(expected=expected, scale=self._config.poll_scale)

    # --- generate / map / download ---------------------------------------------------

    async def generate(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        **fields: Any,
    ) -> TaskRecord:
        """Submit and wait: the arguments of :meth:`submit`, plus those of :meth:`wait`.

        Example:
            record = await client.generate(model="image-d", prompt="a kite", resolution="512")
        """
        task = await self.submit(request_or_body, **fields)
        return await self.wait(
            task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure
        )

    async def map(
        self,
        requests: Iterable[RequestLike],
        *,
        concurrency: int = 4,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
    ) -> list[Outcome]:
        """Run many requests, at most ``concurrency`` at a time; one outcome per request.

        Outcomes come back in input order. A failure of one request (invalid, uncertain,
        failed, timed out) is captured in its outcome's ``error`` and never stops the others.

        Example:
            outcomes = await client.map([{"model": "image-b", "prompt": p} for p in prompts])
            [o.record.images[0].url for o in outcomes if o.ok]
        """
        return await run_many(
            self, requests, concurrency=concurrency, timeout=timeout, on_update=on_update
        )

    async def download(
        self, record: TaskRef, directory: str | os.PathLike[str] = "."
    ) -> list[Path]:
        """Save a succeeded task's media, covers and a ``<task_id>.json`` sidecar.

        Returns the paths written (media first, the sidecar last).

        Raises:
            TaskNotFinishedError: the task has not finished yet; wait for it first.
            TaskFailedError: the task failed, so there is nothing to download.
            MediaError: a file could not be fetched (nothing partial is left behind).

        Example:
            paths = await client.download(record, "outputs")
        """
        if not isinstance(record, TaskRecord):
            record = await self.get(record)
        if record.failed:
            raise TaskFailedError(
                f"task {record.task_id} failed ({record.error}); there is nothing to download",
                record=record,
            )
        if not record.succeeded:
            raise TaskNotFinishedError(
                f"task {record.task_id} is {record.status}; wait for it first: "
                f"record = client.wait({record.task_id!r})",
                task_id=record.task_id,
                status=record.status,
            )
        known = self._tasks.get(record.task_id)
        paths = await download_record(
            self._http, record, directory, body=known.body if known is not None else None
        )
        with recording("results_saved"):
            self.history.results_saved(record.task_id, paths)
        return paths

    # --- helpers ---------------------------------------------------------------------

    def _resolve(self, ref: TaskRef, kind: Kind | None) -> tuple[str, Kind | None]:
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be 'video' or 'image', got {kind!r}")
        if isinstance(ref, Task | TaskRecord):
            return ref.task_id, kind or ref.kind or self._kinds.get(ref.task_id)
        if isinstance(ref, str) and ref:
            return ref, kind or self._kinds.get(ref)
        raise TypeError(f"expected a Task, a TaskRecord or a task id, got {ref!r}")


__all__ = ["AsyncClient"]
