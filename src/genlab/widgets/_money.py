"""The Studio's money line: what the request will cost (in the words of every grid's money
line, :func:`genlab.grid.price_text`), what it will reserve and what remains of the budget, the
budget's refusal before the click, and the offer to reuse a result this exact request already
has instead of paying for it again.

The budget's rules are the client's: the line shows ``client.budget_quote`` (what a submit
would reserve, and why the budget would refuse it), never a rule of its own.

The lookup (``client.find_reusable``) may probe a media link, so it runs on the widgets'
:class:`~genlab.widgets.Background` pool, never on the kernel's thread; an answer for a body the
form no longer shows is dropped. Results this Studio made (or reused) are not offered: the
person has just seen them.

Example:
    >>> from genlab.client import Budget, BudgetQuote
    >>> budget_text("400 credits", Budget(day=2000), BudgetQuote(400, day_left=1600))
    'reserves 400 credits · 1,600 of 2,000 left today'
    >>> budget_text("price not published", Budget(session=5000, unpriced={"video-b": 60}),
    ...             BudgetQuote(300, assumed=True, session_left=5000))
    "reserves 300 credits (the budget's assumed price; none is published) · 5,000 of 5,000 left this session"
    >>> budget_text("400 credits", None, BudgetQuote(400))
    '400 credits'
"""  # noqa: E501

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from genlab.catalog import Preview
from genlab.client import Budget, BudgetQuote, PastResult
from genlab.display import ERROR, MUTED, escape, styled, text
from genlab.grid import price_text
from genlab.widgets._background import Background
from genlab.widgets._protocols import StudioClient


def budget_text(estimate: str, budget: Budget | None, quote: BudgetQuote) -> str:
    """What the submit would reserve (the catalog's ``estimate`` without a budget, or when the
    budget cannot count it), followed by what remains of each cap the budget has."""
    if budget is None:
        return estimate
    if quote.credits is None:
        parts = [estimate]
    elif quote.assumed:
        parts = [f"reserves {quote.credits:,} credits (the budget's assumed price; "
                 "none is published)"]
    else:
        parts = [f"reserves {quote.credits:,} credits"]
    if budget.session is not None and quote.session_left is not None:
        parts.append(f"{quote.session_left:,} of {budget.session:,} left this session")
    if budget.day is not None and quote.day_left is not None:
        parts.append(f"{quote.day_left:,} of {budget.day:,} left today")
    return " · ".join(parts)


def money_line(client: StudioClient, checked: Preview) -> tuple[str, str | None]:
    """The money line's markup for a form the catalog ``checked``, and the budget's refusal
    (None when a submit would go through, or the request is not valid yet)."""
    # The price in the words of every grid's money line (genlab.grid): one request's line.
    estimate = (price_text([checked.credits]) if checked.valid
                else "no estimate while the request is invalid")
    budget = client.budget
    quote = BudgetQuote(None)
    if budget is not None:
        quote = BudgetQuote(None, session_left=client.budget_remaining,
                            day_left=client.budget_remaining_today)
        if checked.valid and checked.request is not None:
            quote = client.budget_quote(checked.request)
    markup = text(budget_text(estimate, budget, quote), MUTED)
    if quote.refusal is not None:
        markup += styled("Submit is off: " + escape(quote.refusal), ERROR, tag="div",
                         cls="genlab-budget-refusal")
    return markup, quote.refusal


def offer_text(past: PastResult) -> str:
    """The one line offering ``past`` instead of paying again.

    Example:
        >>> from datetime import UTC, datetime
        >>> from genlab.client import TaskRecord
        >>> past = PastResult(TaskRecord(task_id="t-1", status="succeeded"),
        ...                   datetime(2026, 5, 1, 12, tzinfo=UTC), 400)
        >>> offer_text(past)
        'this exact request already has a result from 2026-05-01 12:00 UTC (task t-1)'
    """
    when = f" from {past.submitted_at:%Y-%m-%d %H:%M} UTC" if past.submitted_at else ""
    return f"this exact request already has a result{when} (task {past.record.task_id})"


class ReuseOffer(widgets.HBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """"♻ Made before … — Reuse it / Generate again" on one line, or nothing.

    It sits on the Submit button's line, to its right (on a narrow page it takes the next
    line; its label shortens, its tooltip has it all). It appears or goes as the form is
    edited; when the person chooses (Submit, Reuse it, Generate again) it only turns
    invisible and keeps its place, so nothing below it moves while a task runs and ends.

    Args:
        client: asked with ``client.find_reusable(body)``.
        on_choice: called with ``True`` (Reuse it) or ``False`` (Generate again).

    Attributes:
        past: the earlier result offered (None when nothing is offered).
        lookup: the future of the latest lookup (tests wait on it).
        made: the task ids of results made (or reused) where this offer lives; never offered.
    """

    def __init__(self, client: StudioClient, on_choice: Callable[[bool], object]) -> None:
        super().__init__(layout=widgets.Layout(flex_flow="row nowrap", align_items="center",
                                               display="none", flex="0 1 auto", min_width="0",
                                               overflow="hidden"))
        self.add_class("genlab-reuse-offer")
        self.client = client
        self.past: PastResult | None = None
        self.lookup: concurrent.futures.Future[PastResult | None] | None = None
        self.made: set[str] = set()
        self._work = Background.shared()
        self._lock = threading.Lock()
        self._wanted: Mapping[str, Any] | None = None
        self.label = widgets.HTML(layout=widgets.Layout(flex="0 1 auto", min_width="0",
                                                        overflow="hidden"))
        self.reuse_button = widgets.Button(
            description="Reuse it", icon="recycle", button_style="success",
            tooltip="Show the earlier result at zero credits",
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
        )
        self.again_button = widgets.Button(
            description="Generate again", icon="refresh",
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
            tooltip="Pay for a fresh one (reuse=False)",
        )
        self.reuse_button.on_click(lambda _b: on_choice(True))
        self.again_button.on_click(lambda _b: on_choice(False))
        self.children = [self.label, self.reuse_button, self.again_button]

    def check(self, body: Mapping[str, Any] | None) -> None:
        """Look ``body`` up in the background (None: the request is invalid, offer nothing)."""
        with self._lock:
            if body is not None and body == self._wanted:
                return  # the same request: the answer stands
            self._wanted = dict(body) if body is not None else None
        self._show(None)
        if body is None:
            return
        wanted = self._wanted

        def answered(past: PastResult | None) -> None:
            with self._lock:
                if wanted != self._wanted:
                    return  # the form moved on
                if past is not None and past.record.task_id in self.made:
                    past = None  # made here: the person has seen it
            self._show(past)

        self.lookup = self._work.run(
            self.client.find_reusable, dict(body), on_done=answered,
            on_error=lambda _exc: self._show(None),  # no offer is the safe answer
        )

    def recheck(self, body: Mapping[str, Any] | None) -> None:
        """Look ``body`` up again even if unchanged (the history grew elsewhere)."""
        with self._lock:
            self._wanted = None
        self.check(body)

    def withdraw(self) -> None:
        """Offer nothing for the request shown (the person just chose: Submit, Reuse it or
        Generate again); it keeps its place until an edit looks again."""
        self.past = None
        self.layout.visibility = "hidden"

    def made_here(self, task_id: str) -> None:
        """Never offer the result of ``task_id``: it was made (or reused) here."""
        with self._lock:
            self.made.add(task_id)
        if self.past is not None and self.past.record.task_id == task_id:
            self._show(None)

    def _show(self, past: PastResult | None) -> None:
        self.past = past
        if past is None:
            self.layout.display = "none"
            return
        saves = (f"saves {past.credits:,} credits" if past.credits is not None
                 else "its price is unknown")
        when = f"{past.submitted_at:%Y-%m-%d %H:%M} UTC" if past.submitted_at else "before"
        self.label.value = text(f"♻ made {when}", MUTED, tag="div",
                                css="white-space:nowrap;overflow:hidden;text-overflow:ellipsis")
        self.label.tooltip = f"{offer_text(past)} — {saves}"  # the whole story
        self.reuse_button.description = (
            f"Reuse it (saves {past.credits:,} credits)" if past.credits is not None
            else "Reuse it"
        )
        self.layout.display, self.layout.visibility = "flex", "visible"
