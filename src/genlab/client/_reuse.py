"""Reusing a result already paid for: when it applies, what is returned, and how it is told.

A request's content address (:func:`genlab.catalog.content_address`) names what it asks for.
When reuse applies and the history holds a succeeded task of the same address whose media can
still be had (saved on disk, or a link that still answers), that task's record is returned at
zero credits instead of paying again.

When reuse applies (``reuse=`` of ``submit``, ``generate``, ``map`` and ``compare``):

- ``None`` (the default, "auto"): when the request fixes a ``seed``. A seeded request is
  deterministic by intent, so paying again buys the same media; without a seed a fresh sample
  is a legitimate wish.
- ``True``: always; ``False`` (or ``client.reroll(...)``): never, a fresh one is paid for.

Example:
    >>> from genlab.catalog import validate
    >>> reuse_applies(None, validate({"model": "video-b", "prompt": "x"}))
    False
    >>> reuse_applies(None, validate({"model": "video-b", "prompt": "x",
    ...                               "extra_params": {"seed": 7}}))
    True
    >>> reuse_applies(True, validate({"model": "image-b", "prompt": "x"}))
    True
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import httpx
from pydantic import Field, model_validator

from genlab._errors import MediaError
from genlab.catalog import RequestBase, content_address, result_of
from genlab.client._config import Task, TaskRecord
from genlab.client._media import stream_media
from genlab.client._protocols import PastResult, Reused, SpendJournal, SubmitEntry, TaskJournal
from genlab.client._transport import Http
from genlab.client._writer import JournalWriter
from genlab.media import Result

logger = logging.getLogger("genlab")


class ReusedTask(Task):
    """The earlier task a submit returned instead of paying again; ``reused`` says which."""

    reused: Reused = Field(exclude=True, repr=False)


class ReusedRecord(Result):
    """The earlier succeeded result returned instead of paying again; ``reused`` says which
    (and its card says so, in its note).

    It is a :class:`~genlab.Result` in every other way; ``client.download(record, dir)``
    copies its saved files when there are any.

    Example:
        >>> from genlab.client._protocols import Reused
        >>> record = ReusedRecord(task_id="t2", status="succeeded", model="image-b",
        ...                       reused=Reused("t1", None, 40))
        >>> record.note
        'reused task t1, 40 credits saved; reuse=False for a fresh one'
    """

    reused: Reused = Field(exclude=True, repr=False)

    @model_validator(mode="after")
    def _says_so(self) -> ReusedRecord:
        if self.note is None:  # its card says which task it reuses
            self.note = self.reused.message
        return self

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, reused=True)  # {self.reused.message}"


class Reuse:
    """Finds what a submit may reuse: an identical submission of this client still in flight
    (joined), else an earlier succeeded task in the history whose media can still be had.

    A collaborator of the generation's lifecycle; it never sends a submission itself.
    """

    def __init__(self, journal: TaskJournal, writer: JournalWriter, http: Http) -> None:
        self._journal = journal if isinstance(journal, SpendJournal) else None
        self._writer = writer
        self._http = http
        self.media_digests: dict[str, str] = {}  # uploaded URL -> digest of the bytes sent
        self._in_flight: dict[str, asyncio.Future[Task]] = {}  # address -> its task, once known

    def address(self, entry: SubmitEntry, request: RequestBase | None) -> SubmitEntry:
        """``entry`` with its content address (None for a request sent unchecked or with
        ``extra_body`` fields: genlab cannot tell what those change)."""
        if request is None or entry.body != request.to_body():
            return entry
        return replace(entry, address=content_address(request, media_digests=self.media_digests))

    def key(
        self, entry: SubmitEntry, request: RequestBase | None, reuse: bool | None
    ) -> str | None:
        """The address under which this submit may be joined or answered; None when reuse
        does not apply to it (see :func:`reuse_applies`) or the history keeps no results."""
        if self._journal is None or entry.address is None or not reuse_applies(reuse, request):
            return None
        return entry.address

    def running(self, key: str) -> asyncio.Future[Task] | None:
        """The in-flight submission of ``key`` to join, if there is one."""
        return self._in_flight.get(key)

    def claim(self, key: str) -> asyncio.Future[Task]:
        """Mark ``key`` in flight; identical submits join the returned future until
        :meth:`release` (the task's :class:`~genlab.client._hold.TaskHold` gives it back)."""
        future: asyncio.Future[Task] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        return future

    def release(self, key: str, claim: asyncio.Future[Task]) -> None:
        """Identical submissions are no longer joined to ``claim`` (a later claim of the same
        address stays)."""
        if self._in_flight.get(key) is claim:
            del self._in_flight[key]

    async def find(self, entry: SubmitEntry, request: RequestBase | None) -> PastResult | None:
        """The earlier result a reuse of ``entry`` would return, whatever the reuse policy
        (the Studio offers it before Submit); None when there is none, or its links expired
        and it was never saved."""
        key = self.address(entry, request).address
        return None if key is None else await self.earlier(key)

    async def earlier(self, address: str) -> PastResult | None:
        """The newest succeeded result of ``address`` whose media can still be had."""
        if self._journal is None:
            return None
        found: Sequence[PastResult] = await self._writer.call(
            self._journal.find_results, address
        )
        for past in found:
            if past.saved:
                return past
        if not found:
            return None
        newest = found[0]
        if await self._links_answer(newest.record):
            return newest
        logger.info(
            "genlab: the earlier result (task %s) has links that expired and it was never "
            "saved; generating again", newest.record.task_id,
        )
        return None

    async def _links_answer(self, record: TaskRecord) -> bool:
        # One streamed GET of the first result, closed once its status is known: no body read.
        async def status_only(response: httpx.Response) -> bool:
            return True

        results = record.results
        if not results:
            return False
        try:
            return await stream_media(self._http, results[0].url, status_only)
        except MediaError as exc:
            logger.debug("genlab: probing %s: %s", record.task_id, exc)
            return False

    async def told(self, address: str, model: str, note: Reused) -> None:
        """Say a result was reused, and count it in the history (awaited: once the result is
        returned, ``history.spend()`` already counts it)."""
        logger.info("genlab: %s", note.message)
        if self._journal is None:
            return
        try:
            await self._writer.call(self._journal.reuse_recorded, address, model, note)
        except Exception as exc:  # the result stands; only the saving goes uncounted
            logger.warning("genlab: recording a reuse in the history failed: %s", exc)


def reuse_applies(reuse: bool | None, request: RequestBase | None) -> bool:
    """Whether a request may be answered by an earlier result (see the module docstring)."""
    if request is None or reuse is False:
        return False
    if reuse is True:
        return True
    return getattr(request, "seed", None) is not None


def reused_record(
    past: PastResult, note: Reused, request: RequestBase | Mapping[str, Any] | None = None
) -> ReusedRecord:
    """``past``'s result, carrying ``note``, the (identical) request asked again, the files
    still kept and the facts the history measured when they were kept."""
    return result_of(
        past.record, request, kept=tuple(str(p) for p in past.files),
        media=getattr(past, "media", ()), credits=past.credits, note=note.message,
        cls=ReusedRecord, reused=note,
    )


__all__ = [
    "PastResult",
    "Reuse",
    "Reused",
    "ReusedRecord",
    "ReusedTask",
    "reuse_applies",
    "reused_record",
]
