"""The life of one generation, from request to result, in the order it happens.

:class:`Generations` owns it (one per client). A submit goes:

1. **prepare**: the request was validated once, by :func:`~genlab.client._prepare.prepare`
   (a request the catalog already validated is not validated again);
2. **join or reuse**: when reuse applies, an identical submission of this client still in
   flight is joined, else an earlier succeeded result the history kept is answered with
   (the :class:`~genlab.client._reuse.Reuse` collaborator). From here the task's
   :class:`~genlab.client._hold.TaskHold` owns its reuse claim and, once it is sent, its
   concurrency slot, and gives both back exactly once, whatever happens;
3. **reserve**: the budget reserves what the task counts (the
   :class:`~genlab.client._purse.Purse`); a cap that would be crossed refuses it here;
4. **journal "sending"**: ``submit_started`` is recorded before anything leaves (if it cannot
   be, nothing is sent; the history checks the day cap in the same step);
5. **send**: once (:meth:`Http.submit` never resends what may have been processed), within
   the service's concurrency cap: the transport reports a 429 and the hold decides whether
   to wait for room and send again (:meth:`~genlab.client._hold.TaskHold.send`);
6. **journal the outcome**: accepted, uncertain or refused; a refusal releases the
   reservation, an uncertain submission keeps it (it may have been billed);
7. **track**: the task enters the client's one bounded table of tracked tasks.

A wait then goes:

8. **poll**: the task's record is read on its pacer's schedule (see
   :mod:`genlab.client._pacing`), each new status journaled once, network trouble and
   unreadable answers tolerated until the deadline;
9. **verify**: a record is taken only when it is the asked task's, readable, and (when it
   succeeded) lists its media (:mod:`genlab.client._tracking`);
10. **keep**: a success's media are saved in the media store *before* the success is
    journaled (so a crash in between leaves a task ``resume`` keeps), with the JSON sidecar;
    the record's ``kept`` lists the files;
11. **finish**: a final record teaches the durations, its hold gives back the concurrency
    slot and the reuse claim, and the task is handed over: its entry leaves the table, so a long
    session keeps no request it no longer needs (the journal keeps what is to be kept).

Many generations at once (``map``, and so ``compare``) are :func:`run_many`: bounded
concurrency, one outcome per request, in input order. The service's own cap on tasks running
at once is the lifecycle's (:class:`~genlab.client._purse.Slots`, taken and given back by each
task's hold), so a batch larger than the cap waits for room instead of losing requests to 429s.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from genlab._errors import (
    APIConnectionError,
    ConfigurationError,
    GenlabError,
    MediaError,
    NotFoundError,
    RateLimitError,
    ServerError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskTimeoutError,
    UnreadableResponseError,
)
from genlab.catalog import RequestBase, result_of
from genlab.client._config import (
    ClientConfig,
    Kind,
    OnUpdate,
    Outcome,
    RequestLike,
    Task,
    TaskRecord,
    task_path,
)
from genlab.client._durations import DurationModel, DurationSample, Estimate
from genlab.client._hold import Slots, TaskHold
from genlab.client._media import download_task, measure, start_previews
from genlab.client._pacing import Pacer, Pacing, Work
from genlab.client._protocols import (
    PastResult,
    Reused,
    SubmitEntry,
    TaskJournal,
    record_results,
)
from genlab.client._purse import Purse
from genlab.client._reuse import Reuse, ReusedTask, reused_record
from genlab.client._tracking import (
    FINAL_READS,
    FinalButUnreadable,
    TaskTable,
    Tracked,
    final_unreadable,
    read_record,
    ready_record,
    timed_out,
    unreadable_at_deadline,
)
from genlab.client._transport import Http
from genlab.client._writer import JournalWriter
from genlab.display import grid
from genlab.media import Location, MediaInfo, Result, media_name, provenance_for, stamp_file

logger = logging.getLogger("genlab")

ACCEPT_SETTLE = 5.0
"""Seconds a submit waits for the journal to record its task id before returning anyway (the
write goes on in the background; a durable history keeps the id elsewhere if it fails)."""
WAIT_SETTLE = 2.0
"""Seconds a wait gives the history to record what it saw before returning."""
RECALL_PATIENCE = 0.5
"""Seconds a result waits for the history to say the request of a task this client does not
remember (read on a worker thread, never on the event loop); past it the result comes without
its request, said in its note, and the request is remembered once the history answers."""
NOT_RECALLED = ("the history did not answer in time (held by another process?), so this "
                "result does not show its request yet; get it again later")


class Generations:
    """The lifecycle of every generation of one client (see the module docstring)."""

    def __init__(
        self, config: ClientConfig, http: Http, journal: TaskJournal, writer: JournalWriter,
        purse: Purse, reuse: Reuse, durations: DurationModel, pacing: Pacing,
        keep_in: Location | None = None,
    ) -> None:
        self.config, self.http, self.journal, self.writer = config, http, journal, writer
        self.purse, self.reuse, self.durations, self.pacing = purse, reuse, durations, pacing
        http.on_time_scale = durations.declare  # a sped-up emulator says how fast it runs
        self.keep_in = keep_in  # the media store: results are kept there as they succeed
        self.table = TaskTable()
        self.slots = Slots()

    # --- submit ------------------------------------------------------------------------

    async def submit(
        self, entry: SubmitEntry, request: RequestBase | None, reuse: bool | None
    ) -> Task:
        """Steps 2 to 7: the task for a prepared request (an earlier or joined one when reuse
        applies, else a new one paid for inside the budget)."""
        entry = self.reuse.address(entry, request)
        key = self.reuse.key(entry, request, reuse)
        running = self.reuse.running(key) if key is not None else None
        if key is not None and running is not None:  # 2a. join the identical submission
            task = await asyncio.shield(running)
            note = Reused(task.task_id, None, entry.counted_credits, in_flight=True,
                          tag=entry.tag)
            await self.reuse.told(key, entry.model, note)
            return ReusedTask.model_validate({**task.model_dump(), "reused": note})
        async with TaskHold(self.slots, self.reuse, key, self.config) as hold:
            past = await self.reuse.earlier(key) if key is not None else None
            if key is None or past is None:
                return await self._pay(entry, request, hold)
            credits = entry.counted_credits  # 2b. a result kept from before
            note = Reused(
                past.record.task_id, past.submitted_at,
                credits if credits is not None else past.credits, past.files, tag=entry.tag,
            )
            record = reused_record(past, note, request or entry.body)
            kind = record.kind or cast(Kind, entry.kind)
            task = ReusedTask(
                task_id=record.task_id, model=record.model or entry.model, kind=kind,
                created_at=record.created_at, reused=note,
            )
            hold.answered(task)
            await self.reuse.told(key, entry.model, note)
            forgotten = self.table.track(Tracked(
                record.task_id, kind, Work(entry.model, kind), body=entry.body, reused=record,
            ))
            if forgotten is not None and forgotten.hold is not None:
                forgotten.hold.give_back()  # a running task pushed out: its room goes back
            return task

    async def _pay(self, entry: SubmitEntry, request: RequestBase | None, hold: TaskHold) -> Task:
        entry, reservation = self.purse.reserve(entry, request)  # 3. reserve
        work = request if request is not None else Work(entry.model, entry.kind)
        try:
            return await self._send(entry, work, hold)
        except SubmissionUncertainError:
            raise  # it may have been billed: the reservation stays
        except asyncio.CancelledError:
            if not hold.in_flight:  # cancelled while waiting for room: nothing was billed
                self.purse.release(reservation)
            raise
        except BaseException:
            self.purse.release(reservation)  # refused, or never sent: nothing was billed
            raise
        finally:
            self.purse.refresh()

    async def _send(self, entry: SubmitEntry, work: Work | RequestBase, hold: TaskHold) -> Task:
        kind: Kind = entry.kind  # type: ignore[assignment]
        journal, writer = self.journal, self.writer
        # 4. journal "sending": if this raises, nothing was sent either.
        entry_id = await writer.call(journal.submit_started, entry, on_cancel=_never_sent(journal))

        def read_task(data: Mapping[str, Any]) -> Task:
            return Task.model_validate({**data, "kind": kind})

        def attempt() -> Awaitable[Task]:
            return self.http.submit(
                f"/v1/{kind}s/generate", entry.body, read_task, model=entry.model
            )

        started = time.monotonic()
        try:  # 5. send, once (again only after a refusal proved nothing was created)
            task = await hold.send(attempt, self.http, entry.model)
        except asyncio.CancelledError:  # 6. outcome
            if hold.in_flight:
                writer.record("submit_uncertain", journal.submit_uncertain, entry_id,
                              "cancelled while the request was in flight")
            else:
                writer.record("submit_failed", journal.submit_failed, entry_id,
                              "cancelled while waiting for room on the service; nothing was "
                              "billed")
            await writer.settle(ACCEPT_SETTLE)  # the caller waits for this note
            raise
        except SubmissionUncertainError as exc:
            writer.record("submit_uncertain", journal.submit_uncertain, entry_id, str(exc))
            await writer.settle(ACCEPT_SETTLE)
            raise
        except GenlabError as exc:
            writer.record("submit_failed", journal.submit_failed, entry_id, str(exc))
            await writer.settle(ACCEPT_SETTLE)
            raise
        hold.keep(task)  # its slot and claim stay with it until it ends
        writer.record("submit_accepted", _accepted(journal), entry_id, task)
        await writer.settle(ACCEPT_SETTLE)
        logger.info("genlab: submitted %s task %s", entry.model, task.task_id)
        forgotten = self.table.track(Tracked(  # 7. track
            task.task_id, kind, work, started, entry.body, content=entry.address, hold=hold,
            request=work if isinstance(work, RequestBase) else None,
        ))
        if forgotten is not None and forgotten.hold is not None:
            forgotten.hold.give_back()
        return task

    # --- wait ----------------------------------------------------------------------------

    async def wait(
        self, task_id: str, kind: Kind | None, *, timeout: float | None, on_update: OnUpdate | None,
        raise_on_failure: bool, batch: bool = False,
    ) -> Result:
        """Steps 8 and 9: poll until the task ends, then hand it over."""
        tracked = self.table.get(task_id)
        if tracked is not None and tracked.reused is not None:  # nothing to wait for
            self._let_go(task_id)
            if on_update is not None:
                await _call(on_update, tracked.reused)
            return self.describe(tracked.reused, tracked)
        limit = self.config.wait_timeout if timeout is None else float(timeout)
        note = None
        if tracked is None:  # not submitted here (or handed over): its request, if known
            body, note = await self.recall(task_id)
            here = Tracked(task_id, kind, Work("", kind), body=body)
        else:
            here = tracked
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
        record = self.describe(record, here, note=note if here.body is None else None)
        self._let_go(task_id)  # 11. handed over: the table lets it go
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
                        if record.succeeded and self.keep_in is not None:
                            record = await self._keep(here, record, batch)  # 10. before told
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
            raise timed_out(here, limit, last_status) from None

    async def _keep(self, here: Tracked, record: TaskRecord, batch: bool = False) -> TaskRecord:
        """Save a succeeded task's media (covers, last frames and a JSON sidecar too) in the
        media store before its success is journaled, so a crash in between leaves a task
        that ``resume`` waits for and keeps again. Each fetch is retried where safe and an
        expired link is fetched afresh once; a save that still fails never loses the task:
        its row keeps no files, and ``client.download(record)`` fetches them later."""
        assert self.keep_in is not None
        body = here.body

        async def refetch() -> TaskRecord:
            return (await self.read(record.task_id, record.kind))[0]

        try:
            record, paths = await download_task(
                self.http, record, self.keep_in, body, refetch, None
            )
        except (MediaError, ConfigurationError, OSError) as exc:
            logger.warning(
                "genlab: task %s succeeded, but its media could not be kept (%s); its id is "
                "in the history, and client.download(record) fetches them while the links "
                "live", record.task_id, exc,
            )
            return record
        await asyncio.to_thread(_stamp, here, record, paths)
        facts = await asyncio.to_thread(measure, paths)  # once, from the kept files
        if not batch:  # a single result's card comes next; a batch's grid is drawn later
            start_previews(paths)  # in the background: the card drawn next embeds them
        result = self.describe(record, here, kept=tuple(str(p) for p in paths), media=facts)
        self.writer.record("results_saved", record_results, self.journal, record.task_id,
                           paths, facts, result.mismatches)
        return result

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
            # A proxy's page, a half-written record, another task's record: transient until
            # the wait's deadline, which then reports it instead of a plain timeout. A final
            # record that cannot be read will not read better: it ends the wait soon.
            here.unreadable = exc
            if isinstance(exc.__cause__, FinalButUnreadable):
                here.final_reads += 1
                if here.final_reads >= FINAL_READS:
                    raise final_unreadable(here, exc) from None
            logger.warning("genlab: the record of task %s was unreadable (%s); still waiting",
                           here.task_id, exc)
            return None, None
        except NotFoundError:
            grace = self.config.not_found_grace
            if here.started is None or time.monotonic() - here.started > grace:
                raise
            # Submitted by this client moments ago: not visible yet on an eventually
            # consistent service, not gone.
            logger.info("genlab: task %s is not visible yet; still waiting", here.task_id)
            return None, None
        here.unreadable, here.final_reads = None, 0
        if here.kind is None:  # a bare id learns from its first record
            here.kind = record.kind
        if isinstance(here.work, Work) and not here.work.model:
            here.work = Work(record.model, record.kind)
        return ready_record(here, record), hint

    async def read(self, task_id: str, kind: Kind | None) -> tuple[TaskRecord, float | None]:
        """The task's record and the service's polling hint. Without a kind the video
        endpoint is asked first and, on 404, the image one."""
        if kind is None:
            try:
                return await self.read(task_id, "video")
            except NotFoundError:
                return await self.read(task_id, "image")

        def parse(data: Mapping[str, Any]) -> TaskRecord:
            return read_record(data, kind, task_id)

        reply = await self.http.get(
            task_path(kind, task_id), parse, what=f"record for task {task_id}"
        )
        self.table.learn_kind(task_id, kind)
        return reply

    def _status_changed(self, record: TaskRecord) -> None:
        self.durations.observe(DurationSample.of_record(record))  # the rest of a batch learns
        if record.done:
            tracked = self.table.get(record.task_id)
            if tracked is not None and tracked.hold is not None:
                tracked.hold.give_back(finished=True)  # its room on the service is free
        self.writer.record("status_changed", self.journal.status_changed, record)

    def _let_go(self, task_id: str) -> None:
        tracked = self.table.hand_over(task_id)
        if tracked is not None and tracked.hold is not None:
            tracked.hold.give_back()

    # --- what the client knows of a task --------------------------------------------------

    async def get(self, task_id: str, kind: Kind | None) -> Result:
        """The task's current record, as the result handed to the caller."""
        record = (await self.read(task_id, kind))[0]
        here = self.table.get(task_id)
        if here is not None:
            return self.describe(record, here)
        body, note = await self.recall(task_id)
        return self.describe(record, request=body, note=note)

    def kind_of(self, task_id: str) -> Kind | None:
        """The endpoint a task seen by this client lives at (None: never seen)."""
        return self.table.kind_of(task_id)

    async def find_reusable(
        self, entry: SubmitEntry, request: RequestBase | None
    ) -> PastResult | None:
        """The earlier result a submit of this request would be answered with, if any."""
        return await self.reuse.find(entry, request)

    def uploaded(self, url: str, digest: str) -> None:
        """An uploaded file's URL and the digest of its bytes: requests naming the URL are
        addressed by their content, so reuse finds them again."""
        self.reuse.media_digests[url] = digest

    async def downloaded(self, task_id: str, paths: list[Location]) -> None:
        """Files of a task saved on request (``download``): journaled like kept ones."""
        self.writer.record("results_saved", record_results, self.journal, task_id, paths)
        await self.writer.settle(WAIT_SETTLE)

    def close(self) -> None:
        """No new history writes; those pending finish on the journal's own thread."""
        self.writer.close()

    def expected(self, task_id: str, model: str = "", kind: Kind | None = None) -> Estimate | None:
        """Seconds from submission the task will likely take (the forecast's median), and
        whether it is learned from this service or only a prior."""
        tracked = self.table.get(task_id)
        work = tracked.work if tracked is not None else Work(model, kind)
        if isinstance(work, RequestBase):
            work = Work.of_request(work)
        return self.durations.estimate(work) if work.model else None

    def describe(
        self, record: TaskRecord, here: Tracked | None = None, *,
        request: dict[str, Any] | None = None, kept: tuple[str, ...] | None = None,
        media: tuple[MediaInfo, ...] | None = None, note: str | None = None,
    ) -> Result:
        """``record`` as the :class:`~genlab.Result` handed to the caller: with the request
        that made it (the validated one while tracked, else ``request``, else the one this
        client remembers; the history is never read here, on the event loop), its price, and
        the kept files and their measured facts when given; ``note`` says why a request is
        missing."""
        if isinstance(record, Result) and record.request is not None and kept is None:
            return record
        asked: RequestBase | dict[str, Any] | None = request
        if here is not None and asked is None:
            asked = here.request if here.request is not None else here.body
        if asked is None:
            asked = self.table.request_of(record.task_id)
        return result_of(record, asked, kept=kept, media=media,
                         note=note if asked is None else None,
                         cls=type(record) if isinstance(record, Result) else Result)

    async def recall(self, task_id: str) -> tuple[dict[str, Any] | None, str | None]:
        """The body sent for ``task_id``: the one this client tracks or remembers, else the
        journal's, read on a worker thread for at most :data:`RECALL_PATIENCE` seconds (a
        busy history never holds the event loop, nor the caller for long). Returns the body
        (None when unknown) and, when the journal did not answer in time, a note saying so;
        its answer is then remembered for the next ask."""
        body = self.table.request_of(task_id)
        ask = getattr(self.journal, "request_of", None)
        if body is not None or ask is None:
            return body, None
        reading = asyncio.ensure_future(asyncio.to_thread(ask, task_id))
        try:
            found = await asyncio.wait_for(asyncio.shield(reading), RECALL_PATIENCE)
        except TimeoutError:
            logger.info("genlab: the history did not say the request of task %s in %g s",
                        task_id, RECALL_PATIENCE)
            reading.add_done_callback(lambda done: self._remember(task_id, done))
            return None, NOT_RECALLED
        except Exception:  # an unreadable history: the result comes without its request
            logger.warning("genlab: could not read the request of task %s from the history",
                           task_id, exc_info=True)
            return None, None
        self._remember(task_id, reading)
        return found, None

    def _remember(self, task_id: str, reading: asyncio.Future[dict[str, Any] | None]) -> None:
        if reading.cancelled() or reading.exception() is not None:
            return
        body = reading.result()
        if isinstance(body, dict):
            self.table.remember_request(task_id, body)


def _elapsed(started: float | None, record: TaskRecord | None, began: float) -> float:
    """Seconds since submission: from the local submit time when known (monotonic, immune to
    clock skew), else from the record's ``created_at``, else since the wait began."""
    if started is not None:
        return time.monotonic() - started
    if record is not None and record.created_at is not None:
        return max(0.0, (datetime.now(UTC) - record.created_at).total_seconds())
    return time.monotonic() - began


def _stamp(here: Tracked, record: TaskRecord, paths: list[Location]) -> None:
    """Write the request that made them into the kept files themselves (PNG text chunk,
    MP4/MOV box, JPEG comment, WebP XMP): a copied or renamed file still says what it is.
    A file that cannot carry it keeps its sidecar only; a failure never loses the result."""
    what = here.request if here.request is not None else here.body
    if what is None:
        return
    facts = provenance_for(what, task_id=record.task_id, address=here.content,
                           completed_at=record.completed_at)
    for place in paths[:-1]:  # media, covers, last frames; the sidecar is last
        role = "cover" if "_cover" in media_name(place) else (
            "last frame" if "_last_frame" in media_name(place) else "result")
        try:
            stamp_file(place, {**facts, "role": role})
        except (OSError, ValueError) as exc:
            logger.warning("genlab: could not write provenance into %s: %s",
                           media_name(place), exc)


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


# Many generations at once: map and compare.


class Outcomes(list[Outcome]):
    """What ``map`` returns: one :class:`Outcome` per request, in input order. In a notebook
    it shows as a grid of result cards (errors as their messages)."""

    def _repr_html_(self) -> str:
        return grid(outcome._repr_html_() for outcome in self)


async def run_many(
    requests: Iterable[RequestLike],
    submit: Callable[[RequestLike], Awaitable[Task]],
    wait: Callable[[Task], Awaitable[TaskRecord]],
    *,
    concurrency: int,
) -> Outcomes:
    """Submit and wait for every request, at most ``concurrency`` tasks in flight.

    ``wait`` returns a failed task's record rather than raising. Each failure (invalid
    request, uncertain submission, failed task, timeout) is captured in its own outcome; none
    cancels the others. Cancelling the whole call cancels every wait, never a task on the
    service: accepted task ids are already in the client's history.
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
    # The gate spans submit + wait: ``concurrency`` bounds tasks in flight on the service.
    gate = asyncio.Semaphore(concurrency)

    async def run_one(request: RequestLike) -> Outcome:
        outcome = Outcome(request=request)
        async with gate:
            try:
                outcome.task = await submit(request)
                outcome.record = await wait(outcome.task)
                if outcome.record.failed:
                    outcome.error = TaskFailedError(
                        f"task {outcome.record.task_id} failed: {outcome.record.error}",
                        record=outcome.record,
                    )
            except Exception as exc:  # captured per request, by design
                outcome.error = exc
        return outcome

    return Outcomes(await asyncio.gather(*(run_one(r) for r in requests)))
