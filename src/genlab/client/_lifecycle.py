"""The life of one generation, from request to result, in the order it happens.

:class:`Generations` owns it (one per client). A submit goes:

1. **prepare**: the request was validated once, by :func:`~genlab.client._prepare.prepare`
   (a request the catalog already validated is not validated again);
2. **join or reuse**: when reuse applies, an identical submission of this client still in
   flight is joined, else an earlier succeeded result the history kept is answered with
   (the :class:`~genlab.client._reuse.Reuse` collaborator);
3. **reserve**: the budget reserves what the task counts (the
   :class:`~genlab.client._budget.Purse`); a cap that would be crossed refuses it here;
4. **journal "sending"**: ``submit_started`` is recorded before anything leaves (if it cannot
   be, nothing is sent; the history checks the day cap in the same step);
5. **send**: once (:meth:`Http.submit` never resends what may have been processed);
6. **journal the outcome**: accepted, uncertain or refused; a refusal releases the
   reservation, an uncertain submission keeps it (it may have been billed);
7. **track**: the task enters the client's one bounded table of tracked tasks.

A wait then goes:

8. **poll**: the task's record is read on its pacer's schedule (see
   :mod:`genlab.client._pacing`), each new status journaled once, network trouble and
   unreadable answers tolerated until the deadline;
9. **finish**: a final record teaches the durations, ends in-flight joining, and the task is
   handed over: its entry leaves the table, so a long session keeps no request it no longer
   needs (the journal keeps what is to be kept).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from genlab._errors import (
    APIConnectionError,
    GenlabError,
    NotFoundError,
    RateLimitError,
    ServerError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskTimeoutError,
    UnreadableResponseError,
)
from genlab.catalog import RequestBase
from genlab.client._budget import Purse
from genlab.client._config import ClientConfig
from genlab.client._durations import DurationModel, DurationSample
from genlab.client._pacing import Pacer, Pacing, Work
from genlab.client._reuse import Reuse, ReusedRecord, ReusedTask, reused_record
from genlab.client._transport import Http
from genlab.client._types import Kind, OnUpdate, Task, TaskRecord, task_path
from genlab.client.journal import JournalWriter, Reused, SubmitEntry, TaskJournal

logger = logging.getLogger("genlab")

ACCEPT_SETTLE = 5.0
"""Seconds a submit waits for the journal to record its task id before returning anyway (the
write goes on in the background; a durable history keeps the id elsewhere if it fails)."""
WAIT_SETTLE = 2.0
"""Seconds a wait gives the history to record what it saw before returning."""


@dataclass(slots=True)
class Tracked:
    """What the client holds of one task between its submit and its hand-over."""

    task_id: str
    kind: Kind | None  # None: a bare id, until its first record says
    work: Work | RequestBase  # what it asks of the service (made a Work when first paced)
    started: float | None = None  # time.monotonic() when the request left (None: not ours)
    body: dict[str, Any] | None = None  # the request as sent, for a reroll while it runs
    address: str | None = None  # its content address while identical submits may join it
    reused: ReusedRecord | None = None  # an earlier result answering the submit
    unreadable: UnreadableResponseError | None = None  # the last answer that could not be read


class TaskTable:
    """The tasks a client tracks: bounded, and each entry goes when its task is handed over.

    Only tasks submitted and not yet waited to the end are here (at most ``limit``; beyond
    it the oldest is forgotten with a warning: its id is in the history). The kinds of
    tasks seen are remembered apart, in a bounded table of their own, so a bare id can still
    be asked about at its endpoint.
    """

    def __init__(self, limit: int = 10_000, kinds: int = 100_000) -> None:
        self._tasks: OrderedDict[str, Tracked] = OrderedDict()
        self._kinds: OrderedDict[str, Kind] = OrderedDict()
        self._limit, self._kind_limit = limit, kinds

    def __len__(self) -> int:
        return len(self._tasks)

    def track(self, entry: Tracked) -> None:
        self._tasks[entry.task_id] = entry
        if entry.kind is not None:
            self.learn_kind(entry.task_id, entry.kind)
        while len(self._tasks) > self._limit:
            old, _ = self._tasks.popitem(last=False)
            logger.warning("genlab: no longer tracking task %s (its id is in the history)", old)

    def get(self, task_id: str) -> Tracked | None:
        return self._tasks.get(task_id)

    def hand_over(self, task_id: str) -> Tracked | None:
        return self._tasks.pop(task_id, None)

    def kind_of(self, task_id: str) -> Kind | None:
        return self._kinds.get(task_id)

    def learn_kind(self, task_id: str, kind: Kind) -> None:
        self._kinds[task_id] = kind
        self._kinds.move_to_end(task_id)
        if len(self._kinds) > self._kind_limit:
            self._kinds.popitem(last=False)


class Generations:
    """The lifecycle of every generation of one client (see the module docstring)."""

    def __init__(
        self, config: ClientConfig, http: Http, journal: TaskJournal, writer: JournalWriter,
        purse: Purse, reuse: Reuse, durations: DurationModel, pacing: Pacing,
    ) -> None:
        self.config, self.http, self.journal, self.writer = config, http, journal, writer
        self.purse, self.reuse, self.durations, self.pacing = purse, reuse, durations, pacing
        self.table = TaskTable()

    # --- submit ------------------------------------------------------------------------

    async def submit(
        self, entry: SubmitEntry, request: RequestBase | None, reuse: bool | None
    ) -> Task:
        """Steps 2 to 7: the task for a prepared request (an earlier or joined one when reuse
        applies, else a new one paid for inside the budget)."""
        entry = self.reuse.address(entry, request)
        key = self.reuse.key(entry, request, reuse)
        if key is None:
            return await self._pay(entry, request)
        running = self.reuse.running(key)
        if running is not None:  # 2a. join the identical submission in flight
            task = await asyncio.shield(running)
            note = Reused(task.task_id, None, entry.counted_credits, in_flight=True)
            await self.reuse.told(key, entry.model, note)
            return ReusedTask.model_validate({**task.model_dump(), "reused": note})
        claim = self.reuse.claim(key)
        try:
            past = await self.reuse.earlier(key)  # 2b. a result kept from before
            if past is not None:
                self.reuse.release(key)
                credits = entry.counted_credits
                note = Reused(
                    past.record.task_id, past.submitted_at,
                    credits if credits is not None else past.credits, past.files,
                )
                await self.reuse.told(key, entry.model, note)
                record = reused_record(past, note)
                kind = record.kind or cast(Kind, entry.kind)
                self.table.track(Tracked(
                    record.task_id, kind, Work(entry.model, kind), body=entry.body,
                    reused=record,
                ))
                task = ReusedTask(
                    task_id=record.task_id, model=record.model or entry.model, kind=kind,
                    created_at=record.created_at, reused=note,
                )
            else:
                task = await self._pay(entry, request, key)
            claim.set_result(task)
            return task
        except BaseException as exc:
            self.reuse.release(key)
            if isinstance(exc, Exception):
                claim.set_exception(exc)
                claim.exception()  # joined submitters see it; nobody else must be told
            else:
                claim.cancel()
            raise

    async def _pay(
        self, entry: SubmitEntry, request: RequestBase | None, address: str | None = None
    ) -> Task:
        entry, hold = self.purse.reserve(entry, request)  # 3. reserve
        work = request if request is not None else Work(entry.model, entry.kind)
        try:
            return await self._send(entry, work, address)
        except (SubmissionUncertainError, asyncio.CancelledError):
            raise  # it may have been billed: the reservation stays
        except BaseException:
            self.purse.release(hold)  # refused, or never sent: nothing was billed
            raise
        finally:
            self.purse.refresh()

    async def _send(
        self, entry: SubmitEntry, work: Work | RequestBase, address: str | None
    ) -> Task:
        kind: Kind = entry.kind  # type: ignore[assignment]
        journal, writer = self.journal, self.writer
        # 4. journal "sending": if this raises, nothing was sent either.
        entry_id = await writer.call(journal.submit_started, entry, on_cancel=_never_sent(journal))

        def read_task(data: Mapping[str, Any]) -> Task:
            return Task.model_validate({**data, "kind": kind})

        started = time.monotonic()
        try:  # 5. send, once
            task = await self.http.submit(
                f"/v1/{kind}s/generate", entry.body, read_task, model=entry.model
            )
        except (SubmissionUncertainError, asyncio.CancelledError) as exc:  # 6. outcome
            reason = (
                "cancelled while the request was in flight"
                if isinstance(exc, asyncio.CancelledError) else str(exc)
            )
            writer.record("submit_uncertain", journal.submit_uncertain, entry_id, reason)
            await writer.settle(ACCEPT_SETTLE)  # the caller waits for this note
            raise
        except GenlabError as exc:
            writer.record("submit_failed", journal.submit_failed, entry_id, str(exc))
            await writer.settle(ACCEPT_SETTLE)
            raise
        writer.record("submit_accepted", _accepted(journal), entry_id, task)
        await writer.settle(ACCEPT_SETTLE)
        logger.info("genlab: submitted %s task %s", entry.model, task.task_id)
        self.table.track(Tracked(task.task_id, kind, work, started, entry.body, address))  # 7.
        return task

    # --- wait ----------------------------------------------------------------------------

    async def wait(
        self, task_id: str, kind: Kind | None, *, timeout: float | None, on_update: OnUpdate | None,
        raise_on_failure: bool, batch: bool = False,
    ) -> TaskRecord:
        """Steps 8 and 9: poll until the task ends, then hand it over."""
        tracked = self.table.get(task_id)
        if tracked is not None and tracked.reused is not None:  # nothing to wait for
            self.table.hand_over(task_id)
            if on_update is not None:
                await _call(on_update, tracked.reused)
            return tracked.reused
        limit = self.config.wait_timeout if timeout is None else float(timeout)
        here = tracked or Tracked(task_id, kind, Work("", kind))
        here.unreadable = None
        if isinstance(here.work, RequestBase):  # its output plan, once it is waited for
            here.work = Work.of_request(here.work)
        pacer = self.pacing.pacer(here.work, batch=batch)
        try:
            record = await self._poll_until_done(here, pacer, limit, on_update, batch)
        except TaskTimeoutError as exc:
            if here.unreadable is None:
                raise
            raise unreadable_at_deadline(task_id, limit, here.unreadable) from exc
        finally:
            await self.writer.settle(WAIT_SETTLE)
        self.table.hand_over(task_id)  # 9. handed over: the table lets it go
        if record.failed and raise_on_failure:
            raise TaskFailedError(
                f"task {task_id} ({record.model}) failed: {record.error or 'no reason given'}",
                record=record,
            )
        return record

    async def _poll_until_done(
        self, here: Tracked, pacer: Pacer, limit: float, on_update: OnUpdate | None,
        batch: bool,
    ) -> TaskRecord:
        record: TaskRecord | None = None
        last_status: str | None = None
        began = time.monotonic()
        deadline = asyncio.timeout(None if math.isinf(limit) else limit)
        try:
            async with deadline:
                while True:
                    work = here.work
                    fresh, hint = await self._poll(here)
                    if here.work is not work:  # a bare id's first record named its model
                        pacer = self.pacing.pacer(here.work, batch=batch)  # type: ignore[arg-type]
                    if fresh is not None:
                        record = fresh
                        if record.status != last_status:
                            last_status = record.status
                            self._status_changed(record)
                            if on_update is not None:
                                await _call(on_update, record)
                        if record.done:
                            return record
                    elapsed = _elapsed(here.started, record, began)
                    await asyncio.sleep(pacer.next_delay(fresh, elapsed, hint))
        except TimeoutError:
            if not deadline.expired():
                raise  # not our deadline: someone else's timeout, let it through
            status = last_status or "unknown"
            raise TaskTimeoutError(
                f"task {here.task_id} is still {status} after waiting {limit:g} s; it keeps "
                f"running on the service. Resume with client.wait({here.task_id!r}).",
                task_id=here.task_id,
                last_status=last_status,
            ) from None

    async def _poll(self, here: Tracked) -> tuple[TaskRecord | None, float | None]:
        """One read of the task's record, and the service's hint; (None, None) when the read
        failed for a reason that is transient until the deadline."""
        try:
            record, hint = await self.read(here.task_id, here.kind)
        except (ServerError, RateLimitError, APIConnectionError) as exc:
            # Retries of this GET are used up; the task is fine, the network is not. Keep
            # waiting until the deadline rather than abandoning a task that costs money.
            logger.warning("genlab: polling task %s failed (%s); still waiting", here.task_id, exc)
            return None, None
        except UnreadableResponseError as exc:
            # A proxy's page or a half-written record: transient until the wait's deadline,
            # which then reports it instead of a plain timeout.
            here.unreadable = exc
            logger.warning(
                "genlab: the record of task %s was unreadable; still waiting", here.task_id
            )
            return None, None
        except NotFoundError:
            grace = self.config.not_found_grace
            if here.started is None or time.monotonic() - here.started > grace:
                raise
            # Submitted by this client moments ago: not visible yet on an eventually
            # consistent service, not gone.
            logger.info("genlab: task %s is not visible yet; still waiting", here.task_id)
            return None, None
        here.unreadable = None
        if here.kind is None:  # a bare id learns from its first record
            here.kind = record.kind
        if isinstance(here.work, Work) and not here.work.model:
            here.work = Work(record.model, record.kind)
        return record, hint

    async def read(self, task_id: str, kind: Kind | None) -> tuple[TaskRecord, float | None]:
        """The task's record and the service's polling hint. Without a kind the video
        endpoint is asked first and, on 404, the image one."""
        if kind is None:
            try:
                return await self.read(task_id, "video")
            except NotFoundError:
                return await self.read(task_id, "image")

        def read_record(data: Mapping[str, Any]) -> TaskRecord:
            return TaskRecord.read(data, kind)

        reply = await self.http.get(
            task_path(kind, task_id), read_record, what=f"record for task {task_id}"
        )
        self.table.learn_kind(task_id, kind)
        return reply

    def _status_changed(self, record: TaskRecord) -> None:
        self.durations.observe(DurationSample.of_record(record))  # the rest of a batch learns
        if record.done:
            tracked = self.table.get(record.task_id)
            if tracked is not None:
                self.reuse.release(tracked.address)  # identical submits no longer join it
        self.writer.record("status_changed", self.journal.status_changed, record)

    # --- what the client knows of a task --------------------------------------------------

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        """The body sent for ``task_id`` while it is tracked, else as the journal keeps it."""
        tracked = self.table.get(task_id)
        if tracked is not None and tracked.body is not None:
            return tracked.body
        ask = getattr(self.journal, "request_of", None)
        return ask(task_id) if ask is not None else None


def _elapsed(started: float | None, record: TaskRecord | None, began: float) -> float:
    """Seconds since submission: from the local submit time when known (monotonic, immune to
    clock skew), else from the record's ``created_at``, else since the wait began."""
    if started is not None:
        return time.monotonic() - started
    if record is not None and record.created_at is not None:
        return max(0.0, (datetime.now(UTC) - record.created_at).total_seconds())
    return time.monotonic() - began


def unreadable_at_deadline(
    task_id: str, limit: float, last: UnreadableResponseError
) -> UnreadableResponseError:
    """The error of a wait whose deadline passed while the task's record could not be read
    (unreadable records are transient until then): what came back, bounded, and what to do."""
    return UnreadableResponseError(
        f"the service's record for task {task_id} could not be read until the wait's deadline "
        f"({limit:g} s): {last}. The task may still be running and its id is in the history; "
        f"see the answer's start in .excerpt, then client.wait({task_id!r}) again.",
        status=last.status,
        excerpt=last.excerpt,
    )


def _accepted(journal: TaskJournal) -> Callable[[str, Task], None]:
    def record(entry_id: str, task: Task) -> None:
        try:
            journal.submit_accepted(entry_id, task)
        except Exception:
            logger.error(
                "genlab: task %r was accepted (and may be billed) but the history could not "
                "record its id; keep this id", task.task_id,
            )
            raise

    return record


def _never_sent(journal: TaskJournal) -> Callable[[str], None]:
    def mark(entry_id: str) -> None:
        journal.submit_failed(entry_id, "cancelled before it was sent; nothing was billed")

    return mark


async def _call(on_update: OnUpdate, record: TaskRecord) -> None:
    outcome = on_update(record)
    if inspect.isawaitable(outcome):
        await outcome
