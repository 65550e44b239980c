"""The asynchronous client: submit, get, wait, generate, download and map.

Example:
    async with genlab.AsyncClient() as client:
        record = await client.generate(model="video-a", prompt="a fox in the snow")
        paths = await client.download(record, "out/")
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Unpack

import httpx

from genlab._errors import (
    APIConnectionError,
    ConfigurationError,
    MediaError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TaskFailedError,
    TaskTimeoutError,
    UnreadableResponseError,
)
from genlab._wire import KINDS
from genlab.client._batch import run_many
from genlab.client._budget import Budget
from genlab.client._config import ClientConfig, ConfigOptions, resolve_config
from genlab.client._download import download_task
from genlab.client._durations import DurationModel, DurationSample, Work
from genlab.client._ids import check_task_id, task_path
from genlab.client._media_api import MediaMethods
from genlab.client._polling import PollSchedule
from genlab.client._reuse import PastResult, ReusedRecord
from genlab.client._spending import Spending, SpendingMethods
from genlab.client._submitting import Submitted, prepare_request, submit_once
from genlab.client._transport import Http
from genlab.client._types import Kind, Outcome, RequestLike, Task, TaskRecord, TaskRef
from genlab.client._waiting import (
    IN_BATCH,
    OnUpdate,
    elapsed_since,
    poll_until_done,
    unreadable_at_deadline,
)
from genlab.client.journal import JournalWriter, MemoryJournal, SubmitEntry, TaskJournal
from genlab.media import copy_media, media_location

logger = logging.getLogger("genlab")


class AsyncClient(MediaMethods, SpendingMethods):
    """The asynchronous genlab client. Every method is a coroutine; use it with ``await``.

    Args:
        base_url: the service address; defaults to ``GENLAB_BASE_URL``.
        api_key: the API key; defaults to ``GENLAB_API_KEY``. Never shown in any repr or error.
        transport: an httpx async transport, e.g. ``httpx.ASGITransport(app=emulator_app)``.
        history: a :class:`~genlab.client.TaskJournal` that records every submission; defaults
            to an in-memory journal, which also learns durations for polling.
        budget: a :class:`~genlab.client.Budget`: credit caps per task, session and UTC day
            that no submit can cross (checked before anything is sent).
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
        budget: Budget | None = None,
        **options: Unpack[ConfigOptions],
    ) -> None:
        self._config: ClientConfig = resolve_config(base_url, api_key, **options)
        if history is not None and not isinstance(history, TaskJournal):
            raise ConfigurationError(
                f"history must implement genlab.client.TaskJournal, got {type(history).__name__}"
            )
        self.history: TaskJournal = history if history is not None else MemoryJournal()
        self.durations = DurationModel(  # how long tasks take: read by every wait's schedule
            scale=self._config.poll_scale, source=self.history.duration_samples
        )
        self._http = Http(self._config, transport)
        self._journal = JournalWriter()  # history calls run there, never on the event loop
        self._unreadable: dict[str, UnreadableResponseError] = {}  # last poll, per task
        self._tasks: dict[str, Submitted] = {}  # tasks this client submitted: body, timing
        self._kinds: dict[str, Kind] = {}
        self._supports_uploads = False
        self._money = Spending(budget, self.history, self._journal, self._http)
        self._media_digests = self._money.media_digests

    @property
    def base_url(self) -> str:
        return self._config.base_url

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
        """Close the connection pool. The client cannot be used afterwards.

        History writes still pending finish on the journal's own thread.
        """
        self._journal.close()
        await self._http.aclose()

    # --- submit ----------------------------------------------------------------------

    async def submit(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        extra_body: Mapping[str, Any] | None = None,
        kind: Kind | None = None,
        reuse: bool | None = None,
        **fields: Any,
    ) -> Task:
        """Validate a request with the catalog, then submit it once, inside the budget.

        Args:
            request_or_body: a body dict or a validated request; may be omitted.
            extra_body: fields the catalog does not know yet (a vendor's new field), sent as
                given with a logged notice; fields the model declares are still checked.
            kind: ``"video"`` or ``"image"``, for a model the catalog does not know yet: its
                request is then sent unchecked, and its credits are unknown.
            reuse: answer with an earlier succeeded result of the same request at zero
                credits (``True``), never (``False``), or when the request fixes a ``seed``
                (``None``, the default). Identical submits in flight are then joined.
            **fields: request fields; they override and extend ``request_or_body``.

        Returns:
            The accepted :class:`Task`; a reused one is a ``ReusedTask`` whose ``reused``
            note says which task, from when, and the credits saved.

        Raises:
            InvalidParameterError: the request breaks the model's rules (nothing was sent).
            CreditLimitError: it would cross a cap of the client's budget (nothing was sent).
            SubmissionUncertainError: it may have reached the service; it was not resent.
            APIError / APIConnectionError: refused, or the service could not be reached.

        Example:
            task = await client.submit(model="video-a", prompt="waves", duration=8)
            task = await client.submit(model="video-a", prompt="waves", extra_body={"fps": 30})
            task = await client.submit(model="video-g", prompt="waves", kind="video")
        """
        entry, request = prepare_request(request_or_body, fields, extra_body=extra_body, kind=kind)
        task = await self._money.submit(entry, request, reuse, self._send)
        if task.kind is not None:
            self._kinds.setdefault(task.task_id, task.kind)
        return task

    async def find_reusable(
        self, request_or_body: RequestLike | None = None, /, **fields: Any
    ) -> PastResult | None:
        """The earlier succeeded result ``generate(..., reuse=True)`` would return for this
        request, or None; nothing is submitted and nothing is billed.

        Its media must still be had: saved files, else one probe of its link. Without a
        :class:`genlab.History` (or for a request sent unchecked) there is none.

        Raises:
            InvalidParameterError: the request breaks the model's rules.

        Example:
            past = await client.find_reusable(model="image-b", prompt="a kite", seed=7)
        """
        entry, request = prepare_request(request_or_body, fields)
        return await self._money.find(entry, request)

    async def _send(self, entry: SubmitEntry) -> Task:
        task, known = await submit_once(self._http, self.history, self._journal, entry)
        self._tasks[task.task_id] = known
        self._kinds[task.task_id] = known.kind
        logger.info("genlab: submitted %s task %s", entry.model, task.task_id)
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
            return TaskRecord.read(data, kind)

        record = await self._http.get(
            task_path(kind, task_id), read_record, what=f"record for task {task_id}"
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

        Polls are scheduled around when the task will likely finish (see
        :attr:`durations`), and a polling hint from the service is honoured. Network trouble
        while polling is retried and then tolerated until the deadline.

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
            UnreadableResponseError: the deadline passed while the task's record could not be
                read (such answers are retried until then); ``.excerpt`` shows what came.
            NotFoundError: the service does not know the task (for a task this client
                submitted, only after ``not_found_grace`` seconds: it may not be visible yet).
            ValueError: the id is empty, ``.`` or ``..``.

        Example:
            record = await client.wait(task, timeout=600, on_update=print)
        """
        task_id, kind = self._resolve(task, None)
        reused = self._money.take_reused(task_id)
        if reused is not None:  # an earlier result: nothing to wait for
            if on_update is not None:
                await _call(on_update, reused)
            return reused
        known = self._tasks.get(task_id)
        limit = self._config.wait_timeout if timeout is None else float(timeout)
        work = Work.of_body(known.body) if known is not None else Work("", kind)

        async def fetch() -> TaskRecord | None:
            nonlocal kind, work
            record = await self._poll(task_id, kind)
            if record is not None:  # a bare id learns its model from its first record
                kind, work = record.kind, work if work.model else Work(record.model, record.kind)
            return record

        make = PollSchedule.for_batch if IN_BATCH.get() else PollSchedule
        self._unreadable.pop(task_id, None)
        try:
            record = await poll_until_done(
                task_id,
                fetch,
                schedule=make(lambda: self.durations.predict(work), scale=self._config.poll_scale),
                elapsed=elapsed_since(known.started if known is not None else None),
                limit=limit,
                on_change=self._status_changed,
                on_update=on_update,
                hint=lambda: self._http.take_hint(task_path(kind, task_id)) if kind else None,
            )
        except TaskTimeoutError as exc:
            unreadable = self._unreadable.pop(task_id, None)
            if unreadable is None:
                raise
            raise unreadable_at_deadline(task_id, limit, unreadable) from exc
        finally:
            self._unreadable.pop(task_id, None)
            await self._journal.settle(WAIT_SETTLE)
        if record.failed and raise_on_failure:
            raise TaskFailedError(
                f"task {task_id} ({record.model}) failed: {record.error or 'no reason given'}",
                record=record,
            )
        return record

    def _status_changed(self, record: TaskRecord) -> None:
        self.durations.observe(DurationSample.of_record(record))  # the rest of a batch learns
        self._money.finished(record)
        self._journal.record("status_changed", self.history.status_changed, record)

    async def _poll(self, task_id: str, kind: Kind | None) -> TaskRecord | None:
        try:
            record = await self.get(task_id, kind=kind)
        except (ServerError, RateLimitError, APIConnectionError) as exc:
            # Retries of this GET are used up; the task is fine, the network is not. Keep
            # waiting until the deadline rather than abandoning a task that costs money.
            logger.warning("genlab: polling task %s failed (%s); still waiting", task_id, exc)
            return None
        except UnreadableResponseError as exc:
            # A proxy's page or a half-written record: transient until the wait's deadline,
            # which then reports it (see wait) instead of a plain timeout.
            self._unreadable[task_id] = exc
            logger.warning("genlab: the record of task %s was unreadable; still waiting", task_id)
            return None
        except NotFoundError:
            known = self._tasks.get(task_id)
            if known is None or time.monotonic() - known.started > self._config.not_found_grace:
                raise
            # Submitted by this client moments ago: not visible yet on an eventually
            # consistent service, not gone.
            logger.info("genlab: task %s is not visible yet; still waiting", task_id)
            return None
        self._unreadable.pop(task_id, None)
        return record

    # --- generate / map / download ---------------------------------------------------

    async def generate(
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
        """Submit and wait: the arguments of :meth:`submit`, plus those of :meth:`wait`.

        A reused result (see ``reuse``) is returned at once: a ``ReusedRecord`` whose
        ``reused`` note says which task, from when, and the credits saved.

        Example:
            record = await client.generate(model="image-d", prompt="a kite", resolution="512")
            record = await client.generate(model="video-b", prompt="a kite", reuse=True)
        """
        task = await self.submit(request_or_body, reuse=reuse, **fields)
        return await self.wait(
            task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure
        )

    async def reroll(
        self, record_or_request: TaskRef | RequestLike, /, *, timeout: float | None = None,
        on_update: OnUpdate | None = None,
    ) -> TaskRecord:
        """Generate a fresh one and pay for it (``generate(..., reuse=False)``), for a request
        or a task or record this client submitted or reused.

        Example:
            again = await client.reroll(record)
        """
        if isinstance(record_or_request, Task | TaskRecord | str):
            task_id = self._resolve(record_or_request, None)[0]
            known = self._tasks.get(task_id)
            request: RequestLike = self._money.body_of(
                task_id, known.body if known is not None else None
            )
        else:
            request = record_or_request
        return await self.generate(request, timeout=timeout, on_update=on_update, reuse=False)

    async def map(
        self,
        requests: Iterable[RequestLike],
        *,
        concurrency: int = 4,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        reuse: bool | None = None,
    ) -> list[Outcome]:
        """Run many requests, at most ``concurrency`` at a time; one outcome per request.

        Outcomes come back in input order. A failure of one request (invalid, uncertain,
        failed, timed out) is captured in its outcome's ``error`` and never stops the others.
        ``reuse`` is :meth:`submit`'s: with it off, N identical requests are N samples.

        Example:
            outcomes = await client.map([{"model": "image-b", "prompt": p} for p in prompts])
            [o.record.images[0].url for o in outcomes if o.ok]
        """
        batch = IN_BATCH.set(True)  # its waits poll as a batch (see PollSchedule.for_batch)
        try:
            return await run_many(
                self, requests, concurrency=concurrency, timeout=timeout, on_update=on_update,
                reuse=reuse,
            )
        finally:
            IN_BATCH.reset(batch)

    async def download(
        self,
        record: TaskRef,
        directory: str | os.PathLike[str] | None = None,
        *,
        storage_options: Mapping[str, Any] | None = None,
    ) -> list[Path | str]:
        """Save a succeeded task's media, covers and a ``<task_id>.json`` sidecar beside them.

        ``directory`` is a local folder or an fsspec URL such as ``"s3://bucket/prefix/"``;
        without one, the ``GENLAB_MEDIA`` environment variable, else the current folder.
        ``storage_options`` go to fsspec as they are (credentials otherwise come from the
        backend's usual environment, e.g. ``AWS_PROFILE``).

        Returns where each file went (media first, the sidecar last): a :class:`~pathlib.Path`
        for a local folder, a URL string (``"s3://bucket/prefix/t1.mp4"``) for a remote one;
        :func:`genlab.client.read_media` reads either back. A reused record whose files were
        saved before has them copied instead of fetched.

        Raises:
            TaskNotFinishedError: the task has not finished yet; wait for it first.
            TaskFailedError: the task failed, so there is nothing to download.
            MediaError: a file could not be fetched (nothing partial is left behind).
            ConfigurationError: the URL's store refused the files or its backend is not
                installed (``pip install "genlab[team]"``).

        Example:
            paths = await client.download(record, "outputs")
            urls = await client.download(record, "s3://team-media/runs/")
        """
        if isinstance(record, ReusedRecord) and record.reused.paths:
            try:
                return await asyncio.to_thread(
                    copy_media, record.reused.paths, media_location(directory),
                    storage_options=storage_options,
                )
            except (MediaError, FileNotFoundError) as exc:  # a saved copy is gone: fetch again
                logger.info("genlab: %s; downloading the results again", exc)
        refetch = None
        if isinstance(record, TaskRecord):  # its media URLs may have expired since
            refetch = functools.partial(self.get, record.task_id, kind=record.kind)
        else:
            record = await self.get(record)
        known = self._tasks.get(record.task_id)
        body = known.body if known is not None else None
        record, paths = await download_task(
            self._http, record, directory, body, refetch, storage_options
        )
        self._journal.record("results_saved", self.history.results_saved, record.task_id, paths)
        await self._journal.settle(WAIT_SETTLE)
        return paths

    # --- helpers ---------------------------------------------------------------------

    def _resolve(self, ref: TaskRef, kind: Kind | None) -> tuple[str, Kind | None]:
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be 'video' or 'image', got {kind!r}")
        if isinstance(ref, Task | TaskRecord):
            task_id = check_task_id(ref.task_id)
            return task_id, kind or ref.kind or self._kinds.get(task_id)
        if isinstance(ref, str):
            return check_task_id(ref), kind or self._kinds.get(ref)
        raise TypeError(f"expected a Task, a TaskRecord or a task id, got {ref!r}")


async def _call(on_update: OnUpdate, record: TaskRecord) -> None:
    outcome = on_update(record)
    if inspect.isawaitable(outcome):
        await outcome


WAIT_SETTLE = 2.0
"""Seconds a wait or a download gives the history to record what it saw before returning."""
