"""The budget and its one check: what a submit (or a batch) may cost, and why it is refused.

A :class:`Budget` caps credits per task, per session (this client) and per UTC day (every
process writing the same history), and says what to do about models without a published
price. :func:`cap_refusal` is the one place the caps are compared with what a submit would cost: it
returns a :class:`Refusal` (which cap, the numbers, whether the price was assumed) or None.
Every place that refuses or shows a refusal words it from that structure, through
:meth:`Refusal.message` (the exception raised before sending, the Studio's money line, a
batch's pre-check, the history's atomic day-cap check), so a budget message is changed here
and nowhere else.

Example:
    >>> refusal = cap_refusal([("video-a", 800)], task=500)
    >>> refusal.cap, refusal.credits, refusal.limit
    ('task', 800, 500)
    >>> print(refusal.message())
    video-a: this task would cost 800 credits; the per-task cap is 500. Nothing was sent; lower the duration or resolution, or raise Budget(task=...)
    >>> print(refusal.message(sent=False))
    video-a: this task would cost 800 credits; the per-task cap is 500; lower the duration or resolution, or raise Budget(task=...)
    >>> cap_refusal([("video-a", 800)], task=1000, session=2000, reserved=500) is None
    True
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from genlab._errors import ConfigurationError, CreditLimitError
from genlab.catalog import RequestBase, estimate_credits, plan_output

Cap = Literal["task", "session", "day", "unpriced", "max_credits"]
"""Which limit refuses: the per-task cap, what remains of the session's or of the UTC day's,
a model without a published price that the budget does not let through, or the
``max_credits=`` a grid or an experiment was given."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the budget refuses a submit or a batch, in numbers (words: :meth:`message`).

    Attributes:
        cap: which limit refuses (see :data:`Cap`).
        model: the model refused (a single submit, the one run of a batch over the task cap,
            an unpriced model); None for a whole batch.
        credits: what it would cost (0 for an unpriced model).
        limit: the cap crossed (0 for an unpriced model).
        spent: what the cap already counts (reserved this session, spent today); 0 for the
            task cap.
        runs: the batch's size (None: one submit).
        assumed: ``credits`` counts the budget's assumed price of an unpriced model.
        named: how the batch is named in words (a grid's money line), when not by its size.
    """

    cap: Cap
    model: str | None
    credits: int
    limit: int
    spent: int = 0
    runs: int | None = None
    assumed: bool = False
    named: str | None = None

    @property
    def left(self) -> int:
        """What remains under the cap (never below 0)."""
        return max(0, self.limit - self.spent)

    @property
    def max_credits(self) -> int:
        """The most the refused submit could have cost: the task cap, or what remains."""
        return self.left if self.cap in ("session", "day") else self.limit

    def message(self, *, sent: bool = True) -> str:
        """The refusal in words: what stands in the way, then what to change. ``sent``: said
        after a submit was refused (``Nothing was sent``), else before one (the Studio)."""
        batch = self.runs is not None
        what = (self.named if self.named is not None
                else f"these {self.runs:,} runs" if batch and self.model is None
                else f"{self.model}: one run" if batch else f"{self.model}: this task")
        if self.cap == "max_credits":
            stands = f"{what}: more than max_credits={self.limit:,}"
            change = (f"raise max_credits (to at least {self.credits:,}), or make the grid "
                      "smaller")
        elif self.cap == "unpriced":
            stands = f"{self.model} has no published price, so this budget cannot bound it"
            change = (f"set an assumed price, Budget(unpriced={{{self.model!r}: <credits per "
                      "second or per image>}), or let unpriced runs through with "
                      "Budget(unpriced='allow')")
        elif self.cap == "task":
            stands = (f"{what} would cost {self.credits:,} credits; the per-task cap is "
                      f"{self.limit:,}")
            change = "lower the duration or resolution, or raise Budget(task=...)"
        elif self.cap == "session":
            stands = (f"{what} would cost {self.credits:,} credits and {self.left:,} of the "
                      f"session's {self.limit:,} remain")
            change = ("make the grid smaller or raise Budget(session=...)" if batch
                      else "raise Budget(session=...) or start a new client")
        else:
            stands = (f"{what} would cost {self.credits:,} credits and {self.left:,} of "
                      f"today's {self.limit:,} remain (UTC day, every process writing this "
                      "history)")
            change = "raise Budget(day=...) or wait for 00:00 UTC"
        if not sent:
            return f"{stands}; {change}"
        if self.cap == "max_credits":  # the caller's own limit, said as grids always said it
            return f"{stands}, so nothing was sent. To run it {change}."
        return f"{stands}. Nothing was sent; {change}"

    def error(self) -> CreditLimitError:
        """The :class:`~genlab.CreditLimitError` raised for it; nothing was sent."""
        return CreditLimitError(self.message(), estimate=self.credits,
                                max_credits=self.max_credits)

    def __str__(self) -> str:
        return self.message()


def cap_refusal(
    runs: Sequence[tuple[str, int | None]], *, task: int | None = None,
    session: int | None = None, day: int | None = None, reserved: int = 0,
    spent_today: int = 0, batch: bool = False, assumed: bool = False,
    max_credits: int | None = None, named: str | None = None,
) -> Refusal | None:
    """The budget's verdict on sending ``runs`` now: each run's (model, credits counted;
    None when unknown) against the ``task`` cap, then their sum against what remains of the
    ``session`` cap (``reserved`` already counted) and of the ``day`` cap (``spent_today``
    already counted). None when they may go; else the first cap crossed. An unknown price
    counts as 0 (the budget let it through as unknown). ``batch``: judged as a whole grid, not
    one submit; ``assumed``: the prices include the budget's assumed ones. ``max_credits``:
    the whole batch's own limit (a grid's or an experiment's), judged first; ``named``: the
    batch in words (its money line).

    Example:
        >>> cap_refusal([("video-a", 160)] * 4, session=500, batch=True).message()
        "these 4 runs would cost 640 credits and 500 of the session's 500 remain. Nothing was sent; make the grid smaller or raise Budget(session=...)"
        >>> cap_refusal([("video-a", 160)], day=200, spent_today=160).left
        40
        >>> print(cap_refusal([("video-a", 160)] * 2, max_credits=300, named="2 runs: 320 credits "
        ...             "estimated"))
        2 runs: 320 credits estimated: more than max_credits=300, so nothing was sent. To run it raise max_credits (to at least 320), or make the grid smaller.
    """  # noqa: E501
    if max_credits is not None:
        estimate = sum(credits or 0 for _, credits in runs)
        if estimate > max_credits:
            return Refusal("max_credits", None, estimate, max_credits, runs=len(runs),
                           named=named)
    if task is not None:
        for name, credits in runs:
            if credits is not None and credits > task:
                return Refusal("task", name, credits, task,
                               runs=len(runs) if batch else None, assumed=assumed)
    total = sum(credits or 0 for _, credits in runs)
    who = None if batch or not runs else runs[0][0]
    size = len(runs) if batch else None
    counted = [c for _, c in runs if c is not None]
    if session is not None and counted and reserved + total > session:
        return Refusal("session", who, total, session, reserved, size, assumed)
    if day is not None and spent_today + total > day:
        return Refusal("day", who, total, day, spent_today, size, assumed)
    return None


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

    Example:
        >>> import genlab
        >>> budget = genlab.Budget(task=500, session=5_000, unpriced={"video-b": 60})
        >>> client = genlab.connect("http://localhost:1", "key", history=False, keep=False,
        ...                         budget=budget)
        >>> try:  # refused before anything is sent
        ...     client.generate(model="video-a", prompt="a fox", duration=10)
        ... except genlab.CreditLimitError as error:
        ...     print(error.estimate, error.max_credits)
        1600 500
        >>> client.close()
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

    def cap_refusal(
        self, runs: Sequence[tuple[str, int | None]], *, reserved: int = 0,
        spent_today: int | None = None, batch: bool = False, assumed: bool = False,
    ) -> Refusal | None:
        """:func:`cap_refusal` with this budget's caps (the day cap only when ``spent_today`` is
        given: the history keeps that figure)."""
        return cap_refusal(
            runs, task=self.task, session=self.session,
            day=self.day if spent_today is not None else None, reserved=reserved,
            spent_today=spent_today or 0, batch=batch, assumed=assumed,
        )


def _unpriced_error(name: str) -> CreditLimitError:
    return Refusal("unpriced", name, credits=0, limit=0).error()


__all__ = ["Budget", "Cap", "Refusal", "Unpriced", "cap_refusal"]
