"""The limits a submit must respect before it is sent: the budget (credits) and the
service's concurrency cap (tasks running at once).

Spending caps the client enforces before anything is sent:

A :class:`Budget` caps credits per task, per session (this client) and per UTC day (every
process writing the same history). Every submit reserves its estimate first; a submit that
would cross a cap is refused with :class:`~genlab.CreditLimitError` and nothing is sent. The
reservation is released when the service refuses the request, and kept when it was accepted or
may have been (an uncertain submission may have been billed).

Models without a published price need a decision, because unknown spend must not slip through
a budget silently: ``unpriced="refuse"`` (the default) refuses them with a message saying what
to do, ``"allow"`` lets them through and counts them as unknown, and a mapping gives an assumed
price per model (credits per output second for video models, per image for image models).

Example:
    >>> from genlab.client import Budget
    >>> budget = Budget(session=2000, task=900, unpriced={"video-b": 100})
    >>> guard = BudgetGuard(budget)
    >>> from genlab.catalog import validate
    >>> hold = guard.reserve(validate({"model": "video-a", "prompt": "x"}))
    >>> hold.credits, guard.reserved
    (800, 800)
    >>> guard.release(hold); guard.reserved
    0

Concurrency: services of this kind let a key run only N tasks at once and answer 429 to the
next submit (with or without ``Retry-After``, sometimes with a code such as
``CONCURRENCY_LIMIT``). Such a refusal proves nothing was created, so the submit waits for
room and is sent again; the cap is learned from it (:class:`Slots`): multiplicative decrease
to what this client had running, additive increase as its tasks finish. Every request is
still created exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from genlab._errors import ConfigurationError, CreditLimitError
from genlab.catalog import RequestBase, estimate_credits, plan_output
from genlab.client.journal import (
    JournalWriter,
    SpendJournal,
    SubmitEntry,
    TaskJournal,
    day_limit_error,
)

logger = logging.getLogger("genlab")

Unpriced = Literal["refuse", "allow"] | Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Budget:
    """Credit caps: per task, per session and per UTC day, and what to do about unpriced models.

    Args:
        task: the most one task may cost.
        session: the most this client may spend (reserved + settled) while it lives.
        day: the most spent per UTC day across every process sharing the history.
        unpriced: ``"refuse"``, ``"allow"`` (counted as unknown), or model -> assumed price
            (credits per output second for video models, per image for image models).
    """

    task: int | None = None
    session: int | None = None
    day: int | None = None
    unpriced: Unpriced = "refuse"

    def __post_init__(self) -> None:
        for name in ("task", "session", "day"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise ConfigurationError(
                    f"Budget({name}=...) must be a whole number of credits >= 0, got {value!r}"
                )
        if isinstance(self.unpriced, str) and self.unpriced not in ("refuse", "allow"):
            raise ConfigurationError(
                "Budget(unpriced=...) must be 'refuse', 'allow' or a mapping of model -> "
                f"assumed price, got {self.unpriced!r}"
            )

    def price(self, request: RequestBase) -> int | None:
        """The credits this budget counts for a request: the published price, else the
        assumed one, else None (unknown).

        Raises:
            CreditLimitError: the model has no published price and ``unpriced="refuse"``.
        """
        published = estimate_credits(request)
        if published is not None:
            return published
        if self.unpriced == "allow":
            return None
        name = request.model_name
        rate = self.unpriced.get(name) if isinstance(self.unpriced, Mapping) else None
        if rate is None:
            raise _unpriced_error(name)
        plan = plan_output(request)
        # An edit billed on its input video's length has no billed_seconds until the input is
        # probed; its requested length stands in, so an assumed price never counts as zero.
        units = (plan.billed_seconds or plan.duration) if plan.duration is not None else plan.count
        return round(rate * (units or 0))

    def price_unchecked(self, model: str, kind: str, duration: float | None) -> int | None:
        """The credits counted for a request sent unchecked (a model the catalog does not know):
        its assumed price when one is set (per requested second, or per image), else as
        :meth:`price` decides for an unpriced model.

        Example:
            >>> Budget(unpriced={"video-z": 10}).price_unchecked("video-z", "video", 6)
            60
        """
        if self.unpriced == "allow":
            return None
        rate = self.unpriced.get(model) if isinstance(self.unpriced, Mapping) else None
        if rate is None:
            raise _unpriced_error(model)
        return round(rate * ((duration or 5.0) if kind == "video" else 1))

    def assumes(self, model: str) -> bool:
        """True when this budget sets an assumed price for ``model``."""
        return isinstance(self.unpriced, Mapping) and model in self.unpriced


def _unpriced_error(name: str) -> CreditLimitError:
    return CreditLimitError(
        f"{name} has no published price, so this budget cannot bound it; set an assumed "
        f"price, Budget(unpriced={{{name!r}: <credits per second or per image>}}), or let "
        "unpriced runs through with Budget(unpriced='allow'). Nothing was sent",
        estimate=0,
        max_credits=0,
    )


@dataclass(slots=True)
class Hold:
    """One reservation: what it counts, and whether it is still held."""

    model: str
    credits: int | None
    released: bool = False


@dataclass(slots=True)
class BudgetGuard:
    """This client's reservations against its :class:`Budget` (the session and task caps).

    Thread-safe: the check and the reservation are one step, so concurrent submits can never
    reserve more than the cap together. The day cap is the history's to enforce (it spans
    processes); the guard hands it the number to check.
    """

    budget: Budget
    reserved: int = 0
    unknown: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self, request: RequestBase) -> Hold:
        """Reserve the request's price; raises CreditLimitError when a cap would be crossed."""
        return self.reserve_credits(request.model_name, self.budget.price(request))

    def reserve_credits(self, model: str, credits: int | None) -> Hold:
        """Reserve ``credits`` (None: unknown) for one task of ``model``; raises
        CreditLimitError, before anything is sent, when a cap would be crossed."""
        with self._lock:
            self.check(model, credits)
            if credits is None:
                self.unknown += 1
            else:
                self.reserved += credits
        return Hold(model, credits)

    def check(self, model: str, credits: int | None) -> None:
        """Raise the CreditLimitError that reserving ``credits`` now would raise (the task and
        session caps); reserve nothing."""
        cap = self.budget.task
        if credits is not None and cap is not None and credits > cap:
            raise CreditLimitError(
                f"{model}: this task would cost {credits} credits; the per-task "
                f"cap is {cap}. Nothing was sent; lower the duration or resolution, or raise "
                "Budget(task=...)",
                estimate=credits,
                max_credits=cap,
            )
        cap = self.budget.session
        if credits is not None and cap is not None and self.reserved + credits > cap:
            left = max(0, cap - self.reserved)
            raise CreditLimitError(
                f"{model}: this task would cost {credits} credits and "
                f"{left} of the session's {cap} remain. Nothing was sent; raise "
                "Budget(session=...) or start a new client",
                estimate=credits,
                max_credits=left,
            )

    def release(self, hold: Hold) -> None:
        """Give a reservation back: the service refused the request, so nothing was billed."""
        with self._lock:
            if hold.released:
                return
            hold.released = True
            if hold.credits is None:
                self.unknown -= 1
            else:
                self.reserved -= hold.credits

    @property
    def remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""
        cap = self.budget.session
        return None if cap is None else max(0, cap - self.reserved)


@dataclass(frozen=True, slots=True)
class BudgetQuote:
    """What the budget would do with one request if it were submitted now; nothing is
    reserved (``Client.budget_quote`` answers it, the Studio shows it before the click).

    Attributes:
        credits: what the submit would reserve: the published price, else the budget's
            assumed one; None when unknown (no price, and the budget lets it through or
            refuses it).
        assumed: ``credits`` is the budget's assumed price; the model publishes none.
        refusal: why the budget would refuse the submit, and what to change; None when it
            would go through.
        session_left: what remains of the session cap now (None without one).
        day_left: what remains of the day cap now (None without one).

    Example:
        >>> quote = BudgetQuote(credits=300, assumed=True, session_left=5000)
        >>> quote.allowed, quote.credits
        (True, 300)
    """

    credits: int | None
    assumed: bool = False
    refusal: str | None = None
    session_left: int | None = None
    day_left: int | None = None

    @property
    def allowed(self) -> bool:
        """True when the budget would let the submit through."""
        return self.refusal is None


def before_sending(error: CreditLimitError) -> str:
    """A budget's refusal phrased for before a submit: what stands in the way and what to
    change, without "Nothing was sent".

    Example:
        >>> print(before_sending(CreditLimitError(
        ...     "video-a: this task would cost 800 credits; the per-task cap is 500. Nothing "
        ...     "was sent; lower the duration or resolution, or raise Budget(task=...)",
        ...     estimate=800, max_credits=500)))
        video-a: this task would cost 800 credits; the per-task cap is 500; lower the duration or resolution, or raise Budget(task=...)
    """  # noqa: E501
    return str(error).replace(". Nothing was sent; ", "; ").removesuffix(". Nothing was sent")


class Purse:
    """The budget as the generation's lifecycle meets it: reserve before sending, release
    when refused, and the figures a person reads (what remains of the session and the day).

    The day's figure is the history's (it spans processes); it is read on the journal thread
    after each submit and at most every ``DAY_STALE`` seconds when asked, so reading
    :attr:`remaining_today` (the Studio does at every keystroke) never queries the database.
    """

    DAY_STALE = 30.0

    def __init__(self, budget: Budget | None, journal: TaskJournal, writer: JournalWriter) -> None:
        if budget is not None and not isinstance(budget, Budget):
            raise ConfigurationError(
                f"budget must be a genlab.client.Budget, got {type(budget).__name__}"
            )
        spend = journal if isinstance(journal, SpendJournal) else None
        if budget is not None and budget.day is not None and spend is None:
            raise ConfigurationError(
                "Budget(day=...) is kept in the history, and this history keeps no spend; use "
                "genlab.History() (or leave history= out for an in-memory one)"
            )
        self.budget = budget
        self.guard = BudgetGuard(budget) if budget is not None else None
        self._spend = spend if budget is not None and budget.day is not None else None
        self._writer = writer
        self._day: tuple[float, int] | None = None  # (when read, credits spent today)
        self._reading = False
        self._first = threading.Event()
        self._lock = threading.Lock()
        self.refresh()

    def reserve(
        self, entry: SubmitEntry, request: RequestBase | None
    ) -> tuple[SubmitEntry, Hold | None]:
        """Reserve what ``entry`` counts against the caps; return it with the budget's
        assumed price and day cap for the history to check atomically, and the hold.

        Raises:
            CreditLimitError: a cap would be crossed, or the model is unpriced and refused.
        """
        if self.guard is None:
            return entry, None
        budget = self.guard.budget
        credits = (
            budget.price(request) if request is not None
            else budget.price_unchecked(entry.model, entry.kind, entry.duration)
        )
        hold = self.guard.reserve_credits(entry.model, credits)
        assumed = credits if entry.credits is None else None
        return replace(entry, assumed_credits=assumed, day_cap=budget.day), hold

    def quote(self, entry: SubmitEntry, request: RequestBase | None) -> BudgetQuote:
        """What :meth:`reserve` would do with ``entry`` now, reserving nothing: the credits
        it would count, and the refusal it would raise (the day cap judged on the last
        figure read, never a database query)."""
        if self.guard is None:
            return BudgetQuote(entry.credits)
        budget = self.guard.budget
        session_left, day_left = self.remaining, self.remaining_today
        credits: int | None = None
        try:
            credits = (
                budget.price(request) if request is not None
                else budget.price_unchecked(entry.model, entry.kind, entry.duration)
            )
            self.guard.check(entry.model, credits)
            if credits is not None and day_left is not None and budget.day is not None \
                    and credits > day_left:
                raise day_limit_error(f"{entry.model}: this task", credits,
                                      budget.day - day_left, budget.day)
        except CreditLimitError as exc:
            refusal: str | None = before_sending(exc)
        else:
            refusal = None
        return BudgetQuote(
            credits, assumed=credits is not None and entry.credits is None, refusal=refusal,
            session_left=session_left, day_left=day_left,
        )

    def release(self, hold: Hold | None) -> None:
        """Refused, or never sent: nothing was billed, so the reservation goes back."""
        if hold is not None and self.guard is not None:
            self.guard.release(hold)

    @property
    def remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""
        return self.guard.remaining if self.guard is not None else None

    @property
    def remaining_today(self) -> int | None:
        """Credits left in the day cap on this UTC day (None without one); never below 0.

        The last figure read from the history, refreshed in the background when stale.
        """
        if self._spend is None or self.budget is None or self.budget.day is None:
            return None
        day = self._day
        if day is None or time.monotonic() - day[0] > self.DAY_STALE:
            self.refresh()
        if day is None:  # the client's first read is on its way: wait for it, once
            self._first.wait(5.0)
            day = self._day
        if day is None:
            return None
        return max(0, self.budget.day - day[1])

    def refresh(self) -> None:
        """Read the day's spend again, on the journal thread (never waited for)."""
        spend = self._spend
        if spend is None:
            return
        with self._lock:
            if self._reading:
                return
            self._reading = True

        def read() -> None:
            try:
                self._day = (time.monotonic(), spend.day_spent(datetime.now(UTC)))
            finally:
                self._reading = False
                self._first.set()

        self._writer.record("day_spent", read)

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
        if budget.day is not None and self._spend is not None:
            spent = self._spend.day_spent(datetime.now(UTC))  # a decision: read it now
            if spent + total > budget.day:
                raise day_limit_error(f"these {count} runs", total, spent, budget.day)
        return total


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


__all__ = [
    "Budget", "BudgetGuard", "BudgetQuote", "Hold", "Purse", "Slots", "Unpriced", "before_sending",
    "day_limit_error", "says_concurrency",
]
