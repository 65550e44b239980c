"""What one task holds of its client while it may be running, and how its submit waits for
room: the lifecycle's one owner of a task's concurrency slot and reuse claim.

A :class:`TaskHold` is an async context manager the lifecycle opens around a submit:

* on entry it takes the task's **reuse claim** (when reuse applies): identical submits of this
  client join this one instead of paying again;
* :meth:`TaskHold.send` takes a **concurrency slot** before the request leaves, and gives it
  back and takes it again while the service's cap is full (see below);
* on exit it gives both back, unless the task was accepted and :meth:`TaskHold.keep` handed
  the hold to the task's tracked entry; then :meth:`TaskHold.give_back` runs when the task
  ends on the service, is handed over, or is forgotten.

Whatever happens (success, an error, a cancellation while waiting for room or while the
request is in flight, an uncertain submission), each is given back exactly once.
:attr:`TaskHold.in_flight` tells the lifecycle which of the two a cancellation cut off: one
in flight may have been billed; one waiting for room sent nothing that was not refused.

Waiting for room: services of this kind let a key run only N tasks at once and answer 429 to
the next submit. The transport reports every 429 as a :class:`~genlab.RateLimitError`
carrying ``Retry-After``, and never retries it itself; this module decides:

* a **quota** (:class:`~genlab.QuotaExceededError`: a quota code, or a ``Retry-After``
  longer than the client waits) fails at once;
* a refusal **for concurrency** (a code naming it, or any 429 while this client has other
  tasks running) created nothing: the slot goes back, the cap is learned
  (:class:`Slots`: multiplicative decrease to what this client had running, additive
  increase as its tasks finish), and the submit waits for room (one of this
  client's tasks ending, or ``Retry-After``, or a growing pause) and is sent again, until the
  client's ``wait_timeout``;
* any **other 429** is retried after ``Retry-After`` (capped), else with exponential backoff,
  at most ``max_retries`` times, with the slot kept.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Protocol, TypeVar

from genlab._errors import QuotaExceededError, RateLimitError
from genlab.client._config import ClientConfig, Task
from genlab.client._transport import Http

logger = logging.getLogger("genlab")

T = TypeVar("T")


def says_concurrency(code: str | None) -> bool:
    """True when an error code names a concurrency cap (``CONCURRENCY_LIMIT``, ...).

    Example:
        >>> says_concurrency("CONCURRENCY_LIMIT"), says_concurrency("RATE_LIMITED")
        (True, False)
    """
    return code is not None and "CONCURREN" in code.upper()


class Slots:
    """How many of this client's tasks may run on the service at once.

    Unbounded until the service refuses a submit for concurrency; then :attr:`limit` is what
    this client had running (at least 1), and grows by one each time ``limit`` tasks finish
    without a refusal. A submit waits for room at most ``patience`` seconds per try (tasks
    never waited for hold a slot this client cannot see freed), then tries again anyway:
    the service is the judge, and its refusal costs nothing.

    Example:
        >>> slots = Slots()
        >>> slots.limit is None, slots.room_for_one
        (True, True)
        >>> slots.running = 3; slots.refused(); slots.limit
        2
    """

    def __init__(self) -> None:
        self.limit: int | None = None
        self.running = 0
        self.refusals = 0
        self._finished_since = 0
        self._freed: asyncio.Event | None = None

    @property
    def room_for_one(self) -> bool:
        return self.limit is None or self.running < self.limit

    async def acquire(self, patience: float) -> None:
        """Take a slot: at once while there is room, else when one frees or after
        ``patience`` seconds, whichever is first."""
        end = time.monotonic() + patience
        while not self.room_for_one and (left := end - time.monotonic()) > 0:
            freed = self._freed = self._freed or asyncio.Event()
            freed.clear()
            try:
                await asyncio.wait_for(freed.wait(), left)
            except TimeoutError:
                break
        self.running += 1

    async def freed(self, patience: float) -> None:
        """Wait until one of this client's slots frees, or ``patience`` seconds pass."""
        freed = self._freed = self._freed or asyncio.Event()
        freed.clear()
        try:
            await asyncio.wait_for(freed.wait(), patience)
        except TimeoutError:
            pass

    def release(self, *, finished: bool = False) -> None:
        """Give a slot back; ``finished``: its task ended on the service (additive increase)."""
        self.running = max(0, self.running - 1)
        if finished and self.limit is not None:
            self._finished_since += 1
            if self._finished_since >= self.limit:
                self.limit += 1
                self._finished_since = 0
        if self._freed is not None:
            self._freed.set()

    def refused(self) -> None:
        """The service refused a submit for concurrency while this client held ``running``
        slots (that submit's included): the cap is what the others were running."""
        self.refusals += 1
        self._finished_since = 0
        learned = max(1, self.running - 1)
        self.limit = learned if self.limit is None else max(1, min(self.limit - 1, learned))
        logger.info("genlab: the service caps concurrent tasks; running at most %s at once",
                    self.limit)


class Claims(Protocol):
    """Where reuse claims are kept (:class:`~genlab.client._reuse.Reuse`)."""

    def claim(self, key: str) -> asyncio.Future[Task]: ...

    def release(self, key: str, claim: asyncio.Future[Task]) -> None: ...


class TaskHold:
    """One task's concurrency slot and reuse claim, given back exactly once (see the module
    docstring).

    Example:
        async with TaskHold(slots, reuse, key, config) as hold:
            task = await hold.send(lambda: http.submit(...), http, "video-a")
            hold.keep(task)  # accepted: held until the task ends
        ...
        hold.give_back(finished=True)  # its final record came
    """

    def __init__(
        self, slots: Slots, claims: Claims, key: str | None, config: ClientConfig
    ) -> None:
        self._slots, self._claims, self._key, self._config = slots, claims, key, config
        self._claim: asyncio.Future[Task] | None = None
        self._slot = False  # holds one of the client's slots now
        self._kept = False  # handed to the task's tracked entry
        self._given_back = False
        self._in_flight = False  # a request may be on its way (or was, when cancelled)

    @property
    def holds_slot(self) -> bool:
        """True while this task holds one of its client's concurrency slots."""
        return self._slot

    @property
    def in_flight(self) -> bool:
        """True while a request may be on its way to the service, and after a cancellation
        that came while one was: it may have been billed. False while the submit waits for a
        slot or for room after a refusal (every earlier attempt was refused: nothing was
        created)."""
        return self._in_flight

    @property
    def holds_claim(self) -> bool:
        """True while identical submits join this task."""
        return self._claim is not None

    async def __aenter__(self) -> TaskHold:
        if self._key is not None:
            self._claim = self._claims.claim(self._key)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        claim = self._claim
        if claim is not None and not claim.done():  # joined submits learn how it ended
            if isinstance(exc, Exception):
                claim.set_exception(exc)
                claim.exception()  # joined submitters see it; nobody else must be told
            else:
                claim.cancel()
        if exc is not None or not self._kept:
            self.give_back()

    def answered(self, task: Task) -> None:
        """The submit is answered with ``task`` without sending (a result kept from before):
        submits that joined meanwhile get it, and the claim goes back at once."""
        if self._claim is not None and not self._claim.done():
            self._claim.set_result(task)
        self.give_back()

    def keep(self, task: Task) -> None:
        """``task`` was accepted: identical submits join it, and the hold stays with the
        task's tracked entry until :meth:`give_back`."""
        if self._claim is not None and not self._claim.done():
            self._claim.set_result(task)
        self._kept = True

    def give_back(self, *, finished: bool = False) -> None:
        """Give the slot and the claim back; later calls do nothing. ``finished``: the task
        ended on the service (its room there is free: the learned cap may grow)."""
        if self._given_back:
            return
        self._given_back = True
        if self._slot:
            self._slot = False
            self._slots.release(finished=finished)
        claim, self._claim = self._claim, None
        if claim is not None and self._key is not None:
            self._claims.release(self._key, claim)

    async def send(
        self, attempt: Callable[[], Awaitable[T]], http: Http, model: str
    ) -> T:
        """``attempt()`` (one POST, which raises every 429 as it came) within the service's
        concurrency cap: the slot is taken first; a 429 is judged here (see the module
        docstring) and the attempt made again only when the 429 proves nothing was created."""
        config, slots = self._config, self._slots
        patience = config.wait_timeout
        began, pause = time.monotonic(), config.retry_wait_initial or 0.5

        def for_concurrency(exc: RateLimitError) -> bool:
            if isinstance(exc, QuotaExceededError):
                return False
            return says_concurrency(exc.code) or slots.running > 1

        def retry_plain(exc: Exception) -> bool | float:
            if not isinstance(exc, RateLimitError) or isinstance(exc, QuotaExceededError):
                return False  # a quota: waiting seconds will not clear it
            if for_concurrency(exc):
                return False  # waits for room below, not on a schedule
            return http.retry_after(exc)

        while True:
            await self._take_slot(pause)
            try:
                async for each in http.retrying(retry_plain):
                    with each:
                        return await self._attempt(attempt)
                raise AssertionError("the retry schedule ended without raising")  # pragma: no cover
            except RateLimitError as exc:
                capped = for_concurrency(exc)
                if capped:
                    slots.refused()
                self._put_slot_back()  # a refusal: nothing was created
                if not capped or time.monotonic() - began > patience:
                    raise
                pause = min(exc.retry_after or pause * 2, config.retry_after_max)
                logger.info("genlab: the service's concurrency cap is full; %s waits for room",
                            model)
                await slots.freed(pause)  # one of ours ends, or the pause passes
            except BaseException:
                self._put_slot_back()  # never sent, refused, or uncertain: not running here
                raise

    async def _attempt(self, attempt: Callable[[], Awaitable[T]]) -> T:
        self._in_flight = True
        try:
            answer = await attempt()
        except asyncio.CancelledError:
            raise  # cut off on its way: it may have been billed, so it stays in flight
        except BaseException:
            self._in_flight = False  # answered (a refusal), or judged by the transport
            raise
        self._in_flight = False
        return answer

    async def _take_slot(self, patience: float) -> None:
        if not self._slot:
            await self._slots.acquire(patience)
            self._slot = True

    def _put_slot_back(self) -> None:
        if self._slot:
            self._slot = False
            self._slots.release()


__all__ = ["Claims", "Slots", "TaskHold", "says_concurrency"]
