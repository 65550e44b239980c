"""Spending caps the client enforces before anything is sent.

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
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from genlab._errors import ConfigurationError, CreditLimitError
from genlab.catalog import RequestBase, estimate_credits, plan_output

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


def day_limit_error(what: str, credits: int, spent: int, cap: int) -> CreditLimitError:
    """The refusal of a submit (or a batch) that would cross ``Budget(day=...)``; nothing was
    sent. ``what`` names it, e.g. ``"video-a: this task"``.

    Example:
        >>> print(day_limit_error("video-a: this task", 800, 1500, 2000))
        video-a: this task would cost 800 credits and 500 of today's 2,000 remain (UTC day, every process writing this history). Nothing was sent; raise Budget(day=...) or wait for 00:00 UTC
    """  # noqa: E501
    left = max(0, cap - spent)
    return CreditLimitError(
        f"{what} would cost {credits:,} credits and {left:,} of today's {cap:,} remain "
        "(UTC day, every process writing this history). Nothing was sent; raise "
        "Budget(day=...) or wait for 00:00 UTC",
        estimate=credits,
        max_credits=left,
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
        cap = self.budget.task
        if credits is not None and cap is not None and credits > cap:
            raise CreditLimitError(
                f"{model}: this task would cost {credits} credits; the per-task "
                f"cap is {cap}. Nothing was sent; lower the duration or resolution, or raise "
                "Budget(task=...)",
                estimate=credits,
                max_credits=cap,
            )
        with self._lock:
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
            if credits is None:
                self.unknown += 1
            else:
                self.reserved += credits
        return Hold(model, credits)

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


__all__ = ["Budget", "BudgetGuard", "Hold", "Unpriced", "day_limit_error"]
