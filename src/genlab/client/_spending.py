"""The client's money: reuse an earlier result instead of paying again, join identical
submissions in flight, and keep every submit inside the budget.

One :class:`Spending` per client. A submit goes through :meth:`Spending.submit`:

1. its content address is computed (uploads are identified by the bytes the client uploaded);
2. when reuse applies (see :mod:`genlab.client._reuse`), an identical submission of this client
   still in flight is joined, else the history is asked for an earlier succeeded task whose
   media can still be had (saved files first, else one probe of its link);
3. otherwise the budget reserves the estimate (task and session caps here, the day cap in the
   history's ``submit_started``) and the request is sent; the reservation is released when the
   service refused it and kept when it was accepted or may have been.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx

from genlab._errors import (
    ConfigurationError,
    CreditLimitError,
    MediaError,
    SubmissionUncertainError,
)
from genlab.catalog import RequestBase, content_address
from genlab.client._budget import Budget, BudgetGuard, Hold, day_limit_error
from genlab.client._media import stream_media
from genlab.client._reuse import (
    PastResult,
    Reused,
    ReusedRecord,
    ReusedTask,
    reuse_applies,
    reused_record,
)
from genlab.client._transport import Http
from genlab.client._types import Task, TaskRecord
from genlab.client.journal import JournalWriter, SpendJournal, SubmitEntry, TaskJournal

logger = logging.getLogger("genlab")

Send = Callable[[SubmitEntry], Awaitable[Task]]


class Spending:
    """Reuse, in-flight joining and the budget of one client (see the module docstring)."""

    def __init__(
        self, budget: Budget | None, history: TaskJournal, writer: JournalWriter, http: Http
    ) -> None:
        if budget is not None and not isinstance(budget, Budget):
            raise ConfigurationError(
                f"budget must be a genlab.client.Budget, got {type(budget).__name__}"
            )
        if budget is not None and budget.day is not None and not isinstance(history, SpendJournal):
            raise ConfigurationError(
                "Budget(day=...) is kept in the history, and this history keeps no spend; use "
                "genlab.History() (or leave history= out for an in-memory one)"
            )
        self.budget = budget
        self.guard = BudgetGuard(budget) if budget is not None else None
        self.media_digests: dict[str, str] = {}  # uploaded URL -> digest of the bytes sent
        self._history = history
        self._writer = writer
        self._http = http
        self._in_flight: dict[str, asyncio.Future[Task]] = {}
        self._address_of: dict[str, str] = {}  # task id -> address it holds in _in_flight
        self._reused: dict[str, ReusedRecord] = {}
        self._bodies: dict[str, dict[str, Any]] = {}  # reused task id -> the body asked for

    # --- submit ------------------------------------------------------------------------

    def address(self, entry: SubmitEntry, request: RequestBase | None) -> SubmitEntry:
        """``entry`` with its content address (None for a request sent unchecked or with
        ``extra_body`` fields: genlab cannot tell what those change)."""
        if request is None or entry.body != request.to_body():
            return entry
        return replace(entry, address=content_address(request, media_digests=self.media_digests))

    async def submit(
        self, entry: SubmitEntry, request: RequestBase | None, reuse: bool | None, send: Send
    ) -> Task:
        """The task for ``entry``: an earlier or in-flight one when reuse applies, else a
        new one paid for inside the budget."""
        entry = self.address(entry, request)
        key = entry.address
        if key is None or not reuse_applies(reuse, request) or not isinstance(
            self._history, SpendJournal
        ):
            return await self._pay(entry, request, send)
        running = self._in_flight.get(key)
        if running is not None:
            task = await asyncio.shield(running)
            note = Reused(task.task_id, None, entry.counted_credits, in_flight=True)
            await self._told(key, entry.model, note)
            return ReusedTask.model_validate({**task.model_dump(), "reused": note})
        future: asyncio.Future[Task] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            past = await self._earlier(key)
            if past is not None:
                self._in_flight.pop(key, None)
                credits = entry.counted_credits
                credits = credits if credits is not None else past.credits
                note = Reused(past.record.task_id, past.submitted_at, credits, past.files)
                await self._told(key, entry.model, note)
                self._reused[past.record.task_id] = reused_record(past, note)
                self._bodies[past.record.task_id] = entry.body
                task = ReusedTask(
                    task_id=past.record.task_id, model=past.record.model or entry.model,
                    kind=past.record.kind or entry.kind, created_at=past.record.created_at,
                    reused=note,
                )
            else:
                task = await self._pay(entry, request, send)
                self._address_of[task.task_id] = key
            future.set_result(task)
            return task
        except BaseException as exc:
            self._in_flight.pop(key, None)
            if isinstance(exc, Exception):
                future.set_exception(exc)
                future.exception()  # joined submitters see it; nobody else must be told
            else:
                future.cancel()
            raise

    async def _pay(self, entry: SubmitEntry, request: RequestBase | None, send: Send) -> Task:
        hold: Hold | None = None
        if self.guard is not None:
            budget = self.guard.budget
            credits = (
                budget.price(request) if request is not None
                else budget.price_unchecked(entry.model, entry.kind, entry.duration)
            )
            hold = self.guard.reserve_credits(entry.model, credits)
            assumed = credits if entry.credits is None else None
            entry = replace(entry, assumed_credits=assumed, day_cap=budget.day)
        try:
            return await send(entry)
        except (SubmissionUncertainError, asyncio.CancelledError):
            raise  # it may have been billed: the reservation stays
        except BaseException:
            if hold is not None:  # refused, or never sent: nothing was billed
                self.guard.release(hold)  # type: ignore[union-attr]
            raise

    # --- reuse -------------------------------------------------------------------------

    async def find(self, entry: SubmitEntry, request: RequestBase | None) -> PastResult | None:
        """The earlier result a reuse of ``entry`` would return, whatever the reuse policy
        (the Studio offers it before Submit); None when there is none, or its links expired
        and it was never saved."""
        key = self.address(entry, request).address
        if key is None or not isinstance(self._history, SpendJournal):
            return None
        return await self._earlier(key)

    async def _earlier(self, address: str) -> PastResult | None:
        assert isinstance(self._history, SpendJournal)
        found: Sequence[PastResult] = await self._writer.call(
            self._history.find_results, address
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

    async def _told(self, address: str, model: str, note: Reused) -> None:
        logger.info("genlab: %s", note.message)
        history = self._history
        if isinstance(history, SpendJournal):
            # Awaited: once a reused result is returned, history.spend() already counts it.
            try:
                await self._writer.call(history.reuse_recorded, address, model, note)
            except Exception as exc:  # the result stands; only the saving goes uncounted
                logger.warning("genlab: recording a reuse in the history failed: %s", exc)

    def take_reused(self, task_id: str) -> ReusedRecord | None:
        """The reused record a wait on ``task_id`` returns at once (asked once)."""
        return self._reused.pop(task_id, None)

    def body_of(self, task_id: str, submitted: dict[str, Any] | None) -> dict[str, Any]:
        """The body behind ``task_id``: ``submitted`` (this client sent it), else the body a
        reuse of it answered.

        Raises:
            ValueError: this client neither submitted nor reused the task.
        """
        body = submitted if submitted is not None else self._bodies.get(task_id)
        if body is None:
            raise ValueError(
                f"this client does not know the request of task {task_id}; pass the request "
                "itself: client.reroll({...})"
            )
        return body

    def finished(self, record: TaskRecord) -> None:
        """A task ended: identical submissions are no longer joined to it."""
        if record.done:
            key = self._address_of.pop(record.task_id, None)
            if key is not None:
                self._in_flight.pop(key, None)

    # --- budget ------------------------------------------------------------------------

    def day_remaining(self) -> int | None:
        """What remains of the day cap today (None without one); never below 0."""
        budget = self.budget
        if budget is None or budget.day is None or not isinstance(self._history, SpendJournal):
            return None
        return max(0, budget.day - self._history.day_spent(datetime.now(UTC)))

    def check_all(self, requests: Iterable[RequestBase]) -> int:
        """Check a whole batch against the budget before anything is sent; return the credits
        it counts (what the budget counts: published prices, else assumed ones).

        Raises:
            CreditLimitError: a task crosses the task cap, the batch crosses what remains of
                the session or of the day, or a model is unpriced and the budget refuses them.
        """
        if self.guard is None:
            return 0
        budget, total, count = self.guard.budget, 0, 0
        for request in requests:
            credits = budget.price(request)
            if credits is not None and budget.task is not None and credits > budget.task:
                raise CreditLimitError(
                    f"{request.model_name}: one run would cost {credits} credits; the per-task "
                    f"cap is {budget.task}. Nothing was sent",
                    estimate=credits, max_credits=budget.task,
                )
            total += credits or 0
            count += 1
        left = self.guard.remaining
        if left is not None and total > left:
            raise CreditLimitError(
                f"these {count} runs would cost {total:,} credits and {left:,} of the session's "
                f"{budget.session:,} remain. Nothing was sent; make the grid smaller or raise "
                "Budget(session=...)",
                estimate=total, max_credits=left,
            )
        if budget.day is not None and isinstance(self._history, SpendJournal):
            spent = self._history.day_spent(datetime.now(UTC))
            if spent + total > budget.day:
                raise day_limit_error(f"these {count} runs", total, spent, budget.day)
        return total


class SpendingMethods:
    """The client's budget methods, over its :class:`Spending` (inherited by the clients)."""

    _money: Spending

    @property
    def budget(self) -> Budget | None:
        """The client's :class:`~genlab.client.Budget`, if it has one."""
        return self._money.budget

    @property
    def budget_remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""
        return self._money.guard.remaining if self._money.guard is not None else None

    @property
    def budget_remaining_today(self) -> int | None:
        """Credits left in the day cap on this UTC day, across every process sharing the
        history (None without a day cap)."""
        return self._money.day_remaining()

    def check_budget(self, requests: Iterable[RequestBase]) -> int:
        """Check a whole batch against the budget before sending any of it (``compare`` does);
        returns the credits the budget counts for it (0 without a budget).

        Raises:
            CreditLimitError: a run crosses the task cap, the batch what remains of the
                session or the day, or an unpriced model is refused.
        """
        return self._money.check_all(requests)


__all__ = ["Spending", "SpendingMethods"]
