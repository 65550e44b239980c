"""The budget as the generation's lifecycle meets it: reserve before sending, give back when
refused, and the figures a person reads.

Every submit reserves what the :class:`~genlab.client._budget.Budget` counts for it (the
published price, else the assumed one) before anything is sent; the one check
(:func:`~genlab.client._budget.cap_refusal`) refuses a submit that would cross a cap, with
:class:`~genlab.CreditLimitError`, and nothing is sent. The reservation is released when the
service refuses the request, and kept when it was accepted or may have been (an uncertain
submission may have been billed). The day cap spans processes, so the history checks it
atomically when it records the submit (``SubmitEntry.day_cap``), asking the same check.

Example:
    >>> from genlab.client._prepare import prepare
    >>> from genlab.client.journal import JournalWriter, MemoryJournal
    >>> purse = Purse(Budget(session=2000, task=900), MemoryJournal(), JournalWriter())
    >>> _, held = purse.reserve(*prepare({"model": "video-a", "prompt": "x"}, {}))
    >>> held.credits, purse.reserved
    (800, 800)
    >>> purse.release(held); purse.reserved
    0
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from genlab._errors import ConfigurationError, CreditLimitError
from genlab.catalog import RequestBase, estimate_credits
from genlab.client._budget import Budget, Refusal
from genlab.client._protocols import SpendJournal, SubmitEntry, TaskJournal
from genlab.client._writer import JournalWriter


@dataclass(slots=True)
class Reservation:
    """What one submit reserved of the budget, and whether it is still reserved."""

    model: str
    credits: int | None
    released: bool = False


@dataclass(frozen=True, slots=True)
class BudgetQuote:
    """What the budget would do with one request if it were submitted now; nothing is
    reserved (``Client.budget_quote`` answers it, the Studio shows it before the click).

    Attributes:
        credits: what the submit would reserve: the published price, else the budget's
            assumed one; None when unknown (no price, and the budget lets it through or
            refuses it).
        assumed: ``credits`` is the budget's assumed price; the model publishes none.
        refused: why the budget would refuse the submit, in numbers; None when it would go
            through (:attr:`refusal` says it in words).
        session_left: what remains of the session cap now (None without one).
        day_left: what remains of the day cap now (None without one).

    Example:
        >>> quote = BudgetQuote(credits=300, assumed=True, session_left=5000)
        >>> quote.allowed, quote.credits
        (True, 300)
    """

    credits: int | None
    assumed: bool = False
    refused: Refusal | None = None
    session_left: int | None = None
    day_left: int | None = None

    @property
    def refusal(self) -> str | None:
        """Why the budget would refuse the submit, and what to change (said before a submit:
        no "Nothing was sent"); None when it would go through."""
        return None if self.refused is None else self.refused.message(sent=False)

    @property
    def allowed(self) -> bool:
        """True when the budget would let the submit through."""
        return self.refused is None


class Purse:
    """This client's reservations against its :class:`~genlab.client._budget.Budget`, and
    the figures a person reads (what remains of the session and of the day).

    Thread-safe: the judgement and the reservation are one step, so concurrent submits can
    never reserve more than the session cap together. The day's figure is the history's (it
    spans processes); it is read on the journal thread after each submit and at most every
    ``DAY_STALE`` seconds when asked, so reading :attr:`remaining_today` (the Studio does at
    every keystroke) never queries the database.
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
        self.reserved = 0  # credits reserved by this client's submits (its session)
        self.unknown = 0  # submits of an unknown price let through
        self._spend = spend if budget is not None and budget.day is not None else None
        self._writer = writer
        self._day: tuple[float, int] | None = None  # (when read, credits spent today)
        self._reading = False
        self._first = threading.Event()
        self._lock = threading.Lock()
        self.refresh()

    def _count(self, budget: Budget, entry: SubmitEntry, request: RequestBase | None) -> int | None:
        """The credits ``budget`` counts for one submit: the published price, else the assumed
        one, else None (unknown, let through).

        Raises:
            CreditLimitError: the model is unpriced and the budget refuses it.
        """
        if request is not None:
            return budget.price(request)
        return budget.price_unchecked(entry.model, entry.kind, entry.duration)

    def reserve(
        self, entry: SubmitEntry, request: RequestBase | None
    ) -> tuple[SubmitEntry, Reservation | None]:
        """Reserve what ``entry`` counts against the caps; return it with the budget's
        assumed price and day cap for the history to judge atomically, and the reservation.

        Raises:
            CreditLimitError: a cap would be crossed, or the model is unpriced and refused.
        """
        budget = self.budget
        if budget is None:
            return entry, None
        credits = self._count(budget, entry, request)
        assumed = entry.credits is None and credits is not None
        with self._lock:
            refusal = budget.cap_refusal([(entry.model, credits)], reserved=self.reserved,
                                   assumed=assumed)
            if refusal is not None:
                raise refusal.error()
            if credits is None:
                self.unknown += 1
            else:
                self.reserved += credits
        entry = replace(entry, assumed_credits=credits if assumed else None, day_cap=budget.day)
        return entry, Reservation(entry.model, credits)

    def quote(self, entry: SubmitEntry, request: RequestBase | None) -> BudgetQuote:
        """What :meth:`reserve` would do with ``entry`` now, reserving nothing: the credits
        it would count, and the refusal it would meet (the day cap judged on the last figure
        read, never a database query)."""
        budget = self.budget
        if budget is None:
            return BudgetQuote(entry.credits)
        session_left, day_left = self.remaining, self.remaining_today
        credits: int | None = None
        try:
            credits = self._count(budget, entry, request)
        except CreditLimitError:  # the one refusal a price raises
            refused: Refusal | None = Refusal("unpriced", entry.model, 0, 0)
        else:
            refused = budget.cap_refusal(
                [(entry.model, credits)], reserved=self.reserved, spent_today=self._spent_today(),
                assumed=entry.credits is None and credits is not None,
            )
        return BudgetQuote(
            credits, assumed=credits is not None and entry.credits is None, refused=refused,
            session_left=session_left, day_left=day_left,
        )

    def release(self, held: Reservation | None) -> None:
        """Refused, or never sent: nothing was billed, so the reservation goes back."""
        if held is None:
            return
        with self._lock:
            if held.released:
                return
            held.released = True
            if held.credits is None:
                self.unknown -= 1
            else:
                self.reserved -= held.credits

    @property
    def remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""
        cap = None if self.budget is None else self.budget.session
        return None if cap is None else max(0, cap - self.reserved)

    def _spent_today(self) -> int | None:
        """The day's spend last read from the history (None without a day cap or a figure)."""
        if self._spend is None:
            return None
        day = self._day
        if day is None or time.monotonic() - day[0] > self.DAY_STALE:
            self.refresh()
        if day is None:  # the client's first read is on its way: wait for it, once
            self._first.wait(5.0)
            day = self._day
        return None if day is None else day[1]

    @property
    def remaining_today(self) -> int | None:
        """Credits left in the day cap on this UTC day (None without one); never below 0.

        The last figure read from the history, refreshed in the background when stale.
        """
        spent = self._spent_today()
        if spent is None or self.budget is None or self.budget.day is None:
            return None
        return max(0, self.budget.day - spent)

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
        budget = self.budget
        if budget is None:
            return 0
        runs: list[tuple[str, int | None]] = []
        assumed = False
        for request in requests:
            credits = budget.price(request)
            assumed = assumed or (credits is not None and estimate_credits(request) is None)
            runs.append((request.model_name, credits))
        spent = None
        if budget.day is not None and self._spend is not None:
            spent = self._spend.day_spent(datetime.now(UTC))  # a decision: read it now
        refusal = budget.cap_refusal(runs, reserved=self.reserved, spent_today=spent, batch=True,
                               assumed=assumed)
        if refusal is not None:
            raise refusal.error()
        return sum(credits or 0 for _, credits in runs)


__all__ = ["Budget", "BudgetQuote", "Purse", "Reservation"]
