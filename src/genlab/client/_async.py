"""The asynchronous client: the user's methods, each a few lines over the generation's
lifecycle (:mod:`genlab.client._lifecycle`) and its collaborators.

Example:
    async with genlab.AsyncClient() as client:
        record = await client.generate(model="video-a", prompt="a fox in the snow")
        paths = await client.download(record, "out/")

The live line a wait shows in a notebook is here too (:class:`LiveLine`): task id, status,
time waited and the expected finish, turning into the result's card when it ends; in a
script nothing is shown. It is a display handle of the cell that waits, updated only from
that cell's thread (the kernel's), never from a background task: the sync client updates it
each time its blocked caller wakes, the async client at each new status.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Unpack

import httpx

from genlab._errors import ConfigurationError, MediaError, TaskFailedError
from genlab._wire import KINDS
from genlab.catalog import RequestBase
from genlab.client._budget import Budget
from genlab.client._config import (
    ClientConfig,
    ConfigOptions,
    Kind,
    OnUpdate,
    RequestLike,
    Task,
    TaskRecord,
    TaskRef,
    check_task_id,
    resolve_config,
)
from genlab.client._durations import DurationModel, DurationSample
from genlab.client._lifecycle import Generations, Outcomes, run_many
from genlab.client._media import MAX_MEDIA_BYTES, download_task, fetch_media, where_to_keep
from genlab.client._memory import MemoryJournal
from genlab.client._pacing import ForecastPacing, Pacing
from genlab.client._prepare import prepare
from genlab.client._protocols import Labels, TaskJournal
from genlab.client._purse import BudgetQuote, Purse
from genlab.client._reuse import PastResult, Reuse, ReusedRecord
from genlab.client._transport import Http
from genlab.client._uploads import FileLike, digest_of, inline_reference, upload
from genlab.client._writer import JournalWriter
from genlab.display import MUTED, in_notebook, text
from genlab.display import LiveLine as Live
from genlab.media import Result, copy_media, is_remote, media_location

logger = logging.getLogger("genlab")

DurationSource = Callable[[], Iterable[DurationSample]]
"""Finished tasks a client's polling learns from, read once on its first wait (e.g. a
:class:`genlab.History`'s ``duration_samples``)."""


class ClientOptions(ConfigOptions, total=False):
    """Every keyword option of :class:`~genlab.Client` and :class:`~genlab.AsyncClient`.

    Example:
        >>> options: ClientOptions = {"max_retries": 5, "history": False}
        >>> sorted(options)
        ['history', 'max_retries']
    """

    transport: httpx.AsyncBaseTransport | None
    history: TaskJournal | None
    budget: Budget | None
    durations: DurationSource | None
    pacing: Pacing | None
    keep: bool | str | os.PathLike[str] | None


class AsyncClient:
    """The asynchronous genlab client. Every method is a coroutine; use it with ``await``.

    Args:
        base_url: the service address; defaults to ``GENLAB_BASE_URL``.
        api_key: the API key; defaults to ``GENLAB_API_KEY``. Never shown in any repr or error.
        transport: an httpx async transport, e.g. ``httpx.ASGITransport(app=emulator_app)``.
        history: a :class:`~genlab.client.journal.TaskJournal` that records every submission;
            defaults to an in-memory journal.
        budget: a :class:`~genlab.client.Budget`: credit caps per task, session and UTC day
            that no submit can cross (checked before anything is sent).
        durations: finished tasks to learn polling from (default: the history's
            ``duration_samples`` when it has them, as :class:`genlab.History` does).
        pacing: how polls are timed (default: a forecast of each task's duration;
            ``FixedPacing(1.0)`` polls every second).
        keep: keep what succeeds, the moment it succeeds, in a media store: a folder or an
            fsspec URL, ``True`` for the default store (``GENLAB_MEDIA``, else beside the
            history: ``genlab-media/`` for ``.genlab/history.sqlite``), or ``False``. By default a
            client with a durable history (``genlab.History``) keeps; one without does not.
            Each result's files then survive expired links and kernel restarts; the record's
            ``kept`` lists them.
        **options: ``timeout``, ``max_retries``, ``wait_timeout`` (the default deadline of
            :meth:`wait`), ``poll_scale``, ``retry_wait_initial``, ``retry_wait_max``,
            ``retry_after_max``, ``max_connections`` and ``not_found_grace``; each is
            described, with its default, in :class:`~genlab.client.ClientConfig`.

    Raises:
        ConfigurationError: no base URL or API key was given or found in the environment.

    Example:
        client = genlab.AsyncClient("http://localhost:8000", "test-key")
        task = await client.submit(model="image-b", prompt="a red kite")
        record = await client.wait(task)

    Example:
        >>> import asyncio, genlab
        >>> async def main():
        ...     async with genlab.AsyncClient("http://localhost:1", "key") as client:
        ...         return client.base_url
        >>> asyncio.run(main())
        'http://localhost:1'
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        history: TaskJournal | None = None,
        budget: Budget | None = None,
        durations: DurationSource | None = None,
        pacing: Pacing | None = None,
        keep: bool | str | os.PathLike[str] | None = None,
        **options: Unpack[ConfigOptions],
    ) -> None:
        config = resolve_config(base_url, api_key, **options)
        if history is not None and not isinstance(history, TaskJournal):
            raise ConfigurationError(
                f"history must implement genlab.client.journal.TaskJournal, got "
                f"{type(history).__name__}"
            )
        self.history: TaskJournal = history if history is not None else MemoryJournal()
        writer = JournalWriter()  # history calls run there, never on the event loop
        self._http = Http(config, transport)
        if durations is None:
            durations = getattr(self.history, "duration_samples", None)
        self.durations = DurationModel(scale=config.poll_scale, source=durations)
        self._purse = Purse(budget, self.history, writer)  # reservations; judged by _budget
        self._life = Generations(
            config, self._http, self.history, writer,
            purse=self._purse,
            reuse=Reuse(self.history, writer, self._http),
            durations=self.durations,
            pacing=pacing or ForecastPacing(self.durations.predict, scale=config.poll_scale),
            keep_in=where_to_keep(
                keep, self.history, durable=not isinstance(self.history, MemoryJournal)
            ),
        )
        self._supports_uploads = False

    @property
    def base_url(self) -> str:
        return self.config.base_url

    @property
    def config(self) -> ClientConfig:
        """The resolved configuration (the key inside is masked)."""
        return self._life.config

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key='***')"

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool. The client cannot be used afterwards.

        History writes still pending finish on the journal's own thread.
        """
        self._life.close()
        await self._http.aclose()

    # --- generations -------------------------------------------------------------------

    async def submit(
        self,
        request_or_body: RequestLike | None = None,
        /,
        *,
        extra_body: Mapping[str, Any] | None = None,
        kind: Kind | None = None,
        reuse: bool | None = None,
        labels: Labels | None = None,
        **fields: Any,
    ) -> Task:
        """Validate a request with the catalog, then submit it once, inside the budget.

        Args:
            request_or_body: a body dict or a validated request (taken as it is); may be
                omitted.
            extra_body: fields the catalog does not know yet (a vendor's new field), sent as
                given with a logged notice; fields the model declares are still checked.
            kind: ``"video"`` or ``"image"``, for a model the catalog does not know yet: its
                request is then sent unchecked, and its credits are unknown.
            reuse: answer with an earlier succeeded result of the same request at zero
                credits (``True``), never (``False``), or when the request fixes a ``seed``
                (``None``, the default). Identical submits in flight are then joined.
            labels: what the history records with this submission (its tag, its experiment
                cell); it travels on the submission, so submissions made at once from
                several threads each keep their own.
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
        entry, request = prepare(request_or_body, fields, extra_body=extra_body, kind=kind)
        if labels is not None:
            entry = replace(entry, labels=labels)
        return await self._life.submit(entry, request, reuse)

    async def get(self, task_or_id: TaskRef, *, kind: Kind | None = None) -> Result:
        """The task's current record.

        A bare id needs its kind: pass ``kind="video"``/``"image"``, or use an id this client
        submitted. Otherwise the video endpoint is asked first and, on 404, the image one.

        Example:
            record = await client.get("task-123", kind="image")
        """
        task_id, known = self._resolve(task_or_id, kind)
        return await self._life.get(task_id, known)

    async def wait(
        self,
        task: TaskRef,
        *,
        timeout: float | None = None,
        on_update: OnUpdate | None = None,
        raise_on_failure: bool = True,
        progress: bool = True,
    ) -> Result:
        """Poll until the task succeeds or fails, within an overall deadline.

        Polls are paced around when the task will likely finish (see ``pacing``), and a
        polling hint from the service is honoured. Network trouble while polling is retried
        and then tolerated until the deadline.

        Args:
            task: a Task, a TaskRecord or a task id.
            timeout: overall seconds for this wait (default: the client's ``wait_timeout``;
                ``math.inf`` waits forever).
            on_update: called with the record once per status change, the first one included.
                May be a coroutine function. An exception it raises ends the wait (the task
                keeps running).
            raise_on_failure: with False a failed task's record is returned instead.
            progress: in a notebook, show one live line (task id, status, time waited, the
                expected finish) that ends as one line saying how the task ended; the
                result shows its card where it is displayed. ``False``: nothing.

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
        model = task.model if isinstance(task, Task | TaskRecord) else ""
        if not (progress and in_notebook()):
            return await self._life.wait(
                task_id, kind, timeout=timeout, on_update=on_update,
                raise_on_failure=raise_on_failure,
            )
        line = LiveLine(task_id, model, expected=self.expected(task_id, model, kind))

        async def seen(record: TaskRecord) -> None:  # on this loop: the cell's own thread
            line.seen(record)
            line.update()
            if on_update is not None and inspect.isawaitable(outcome := on_update(record)):
                await outcome

        with line.until_done():
            record = await self._life.wait(
                task_id, kind, timeout=timeout, on_update=seen, raise_on_failure=raise_on_failure
            )
        line.finish(record)
        return record

    async def generate(
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
        """Submit and wait: the arguments of :meth:`submit`, plus those of :meth:`wait`.

        A reused result (see ``reuse``) is returned at once: a ``ReusedRecord`` whose
        ``reused`` note says which task, from when, and the credits saved.

        Example:
            record = await client.generate(model="image-d", prompt="a kite", resolution="512")
            record = await client.generate(model="video-b", prompt="a kite", reuse=True)
        """
        task = await self.submit(request_or_body, reuse=reuse, **fields)
        return await self.wait(
            task, timeout=timeout, on_update=on_update, raise_on_failure=raise_on_failure,
            progress=progress,
        )

    async def reroll(
        self, record_or_request: TaskRef | RequestLike, /, *, timeout: float | None = None,
        on_update: OnUpdate | None = None,
    ) -> Result:
        """Generate a fresh one and pay for it (``generate(..., reuse=False)``), for a request,
        or a task or record whose request this client or its history still holds.

        Raises:
            ValueError: the request of that task is not known here; pass the request itself.

        Example:
            again = await client.reroll(record)
        """
        request: RequestLike
        if isinstance(record_or_request, Task | TaskRecord | str):
            task_id = self._resolve(record_or_request, None)[0]
            body, busy = await self._life.recall(task_id)
            if body is None:
                why = f" ({busy})" if busy else ""
                raise ValueError(
                    f"this client does not know the request of task {task_id}{why}; pass the "
                    "request itself: client.reroll({...})"
                )
            request = body
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
        labels: Labels | Sequence[Labels | None] | None = None,
    ) -> Outcomes:
        """Run many requests, at most ``concurrency`` at a time; one outcome per request.

        Outcomes come back in input order. A failure of one request (invalid, uncertain,
        failed, timed out) is captured in its outcome's ``error`` and never stops the others.
        ``reuse`` is :meth:`submit`'s: with it off, N identical requests are N samples. The
        batch's polls are paced as a batch (fewer requests, a little more lag). ``labels``
        (one for all, or one per request) go with each submission into the history (see
        :meth:`submit`).

        Example:
            outcomes = await client.map([{"model": "image-b", "prompt": p} for p in prompts])
            [o.record.images[0].url for o in outcomes if o.ok]
        """
        items = list(requests)
        if labels is None or isinstance(labels, Labels):
            each: list[Labels | None] = [labels] * len(items)
        else:
            each = list(labels)
            if len(each) != len(items):
                raise ValueError(f"labels has {len(each)} entries for {len(items)} requests; "
                                 "give one per request, or one Labels for all")
        label_of: dict[int, Labels | None] = {}
        for i, label in enumerate(each):
            if id(items[i]) in label_of:  # the same object twice: each submission its own
                item = items[i]
                items[i] = item.model_copy() if isinstance(item, RequestBase) else dict(item)
            label_of[id(items[i])] = label

        async def submit(request: RequestLike) -> Task:
            return await self.submit(request, reuse=reuse, labels=label_of.get(id(request)))

        async def wait(task: Task) -> TaskRecord:
            task_id, kind = self._resolve(task, None)
            return await self._life.wait(
                task_id, kind, timeout=timeout, on_update=on_update, raise_on_failure=False,
                batch=True,
            )

        return await run_many(items, submit, wait, concurrency=concurrency)

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
        entry, request = prepare(request_or_body, fields)
        return await self._life.find_reusable(entry, request)

    # --- results -----------------------------------------------------------------------

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

        A result the client kept (see ``keep``) is served from the media store: without a
        ``directory`` its kept files are returned as they are; with one they are copied.

        Returns where each file went (media first, the sidecar last): a :class:`~pathlib.Path`
        for a local folder, a URL string (``"s3://bucket/prefix/t1.mp4"``) for a remote one;
        :func:`genlab.media.read_media` reads either back. A reused record whose files were
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
        kept: tuple[Path | str, ...] = ()
        if isinstance(record, ReusedRecord) and record.reused.paths:
            kept = record.reused.paths
        elif isinstance(record, TaskRecord) and record.kept:
            kept = tuple(p if is_remote(p) else Path(p) for p in record.kept)
        if kept:
            if directory is None and all(isinstance(p, str) or p.is_file() for p in kept):
                return list(kept)  # served as kept
            try:
                return await asyncio.to_thread(
                    copy_media, kept, media_location(directory), storage_options=storage_options,
                )
            except (MediaError, FileNotFoundError) as exc:  # a saved copy is gone: fetch again
                logger.info("genlab: %s; downloading the results again", exc)
        refetch = None
        if isinstance(record, TaskRecord):  # its media URLs may have expired since
            refetch = functools.partial(self.get, record.task_id, kind=record.kind)
        else:
            record = await self.get(record)
        body = (await self._life.recall(record.task_id))[0]
        record, paths = await download_task(
            self._http, record, directory, body, refetch, storage_options
        )
        await self._life.downloaded(record.task_id, paths)
        return paths

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

    # --- reference media ---------------------------------------------------------------

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
        url = await upload(self._http, source, filename)
        # A request naming this URL is identified by these bytes, so re-uploading the same file
        # (a new URL each time) still finds the result already paid for.
        self._life.uploaded(url, await asyncio.to_thread(digest_of, source))
        return url

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

    # --- budget ------------------------------------------------------------------------

    @property
    def budget(self) -> Budget | None:
        """The client's :class:`~genlab.client.Budget`, if it has one."""
        return self._purse.budget

    @property
    def budget_remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""
        return self._purse.remaining

    @property
    def budget_remaining_today(self) -> int | None:
        """Credits left in the day cap on this UTC day, across every process sharing the
        history (None without a day cap); a figure kept up to date in the background."""
        return self._purse.remaining_today

    def budget_quote(
        self, request_or_body: RequestLike | None = None, /, **fields: Any
    ) -> BudgetQuote:
        """What a submit of this request would reserve, and whether the budget would refuse
        it, asked before sending; nothing is reserved or sent. Without a budget, the
        published price and no refusal.

        Raises:
            InvalidParameterError: the request breaks the model's rules.

        Example:
            quote = client.budget_quote(model="video-b", prompt="a kite", duration=5)
            quote.credits, quote.assumed, quote.refusal   # (300, True, None) at 60 a second
        """
        entry, request = prepare(request_or_body, fields)
        return self._purse.quote(entry, request)

    def check_budget(self, requests: Iterable[RequestBase]) -> int:
        """Check a whole batch against the budget before sending any of it (``compare`` does);
        returns the credits the budget counts for it (0 without a budget).

        Raises:
            CreditLimitError: a run crosses the task cap, the batch what remains of the
                session or the day, or an unpriced model is refused.
        """
        return self._purse.check_all(requests)

    # --- helpers -----------------------------------------------------------------------

    def expected(self, task_id: str, model: str = "", kind: Kind | None = None) -> float | None:
        """Seconds from submission the task will likely take, as a wait's live line says it
        (learned from this service's tasks, or only a first guess)."""
        return self._life.expected(task_id, model, kind)

    def _resolve(self, ref: TaskRef, kind: Kind | None) -> tuple[str, Kind | None]:
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be 'video' or 'image', got {kind!r}")
        if isinstance(ref, Task | TaskRecord):
            task_id = check_task_id(ref.task_id)
            return task_id, kind or ref.kind or self._life.kind_of(task_id)
        if isinstance(ref, str):
            return check_task_id(ref), kind or self._life.kind_of(ref)
        raise TypeError(f"expected a Task, a TaskRecord or a task id, got {ref!r}")


__all__ = ["AsyncClient", "ClientOptions", "DurationSource"]


# The live line of a wait in a notebook: the client says what it sees (task, status, time,
# expected finish); genlab.display owns the output it is drawn in.


class LiveLine:
    """One wait's line in the cell (see the module docstring).

    Example:
        >>> line = LiveLine("t1", "video-a", expected=24.0, show=False)
        >>> line.seen(TaskRecord(task_id="t1", status="processing"))
        >>> "t1 · processing" in line.text()
        True
    """

    def __init__(self, task_id: str, model: str, *, expected: float | None,
                 show: bool | None = None) -> None:
        self.task_id, self.model, self.expected = task_id, model, expected
        self.status = "waiting"
        self.began = time.monotonic()
        self._line = Live(self.html(), show=show)  # its output's one owner

    def seen(self, record: TaskRecord) -> None:
        """A new record (any thread): the next update shows its status."""
        self.status = record.status

    def text(self) -> str:
        waited = time.monotonic() - self.began
        parts = [f"{self.model or 'task'} · task {self.task_id} · {self.status}",
                 f"{waited:.0f} s"]
        if self.expected is not None:
            # Learned (this service's tasks or its declared pace) or only a first guess; a
            # plain number is taken as learned.
            learned, left = getattr(self.expected, "learned", True), self.expected - waited
            about = f"about {max(1, round(left))} s"
            if learned:
                parts.append(f"expected in {about}" if left > 0 else "any moment now")
            else:
                parts.append(f"first guess: {about} more (nothing learned yet)" if left > 0
                             else "longer than a first guess (nothing learned yet)")
        return " · ".join(parts)

    def html(self, line: str | None = None) -> str:
        # Plain text: no glyph a browser's fonts may lack.
        return text(self.text() if line is None else line, MUTED, tag="div", cls="genlab-live")

    def update(self) -> None:
        """Redraw the line (from the waiting cell's thread)."""
        self._line.update(self.html())

    @contextmanager
    def until_done(self) -> Iterator[None]:
        """Around a wait: a wait that raises ends the line (a failed task's record; else
        nothing known: an interrupt or a timeout reports itself). A wait that returns is
        ended by the caller with its record."""
        try:
            yield
        except TaskFailedError as failed:
            self.finish(failed.record)
            raise
        except BaseException:
            self.finish(None)
            raise

    def finish(self, record: TaskRecord | None) -> None:
        """End the line: one line saying how the task ended, or nothing (an interrupt or a
        timeout reports itself). The result shows its card where it is displayed, as any
        object does: ``r`` or ``display(r)``, never twice by itself."""
        if not self._line.shown:
            return
        if record is None:
            self._line.close("")
            return
        ended = f"{self.model or record.model or 'task'} · task {self.task_id} · {record.status}"
        ended += f" in {time.monotonic() - self.began:.1f} s"
        if record.error is not None:
            ended += f": {record.error.code}"
        self._line.close(self.html(ended))
