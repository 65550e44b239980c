"""The Studio's money line: what remains of the budget beside the estimate, and the offer to
reuse a result this exact request already has instead of paying for it again.

The lookup (``client.find_reusable``) may probe a media link, so it runs on the widgets'
:class:`~genlab.widgets.Background` pool, never on the kernel's thread; an answer for a body the
form no longer shows is dropped.

Example:
    >>> from genlab.client import Budget
    >>> budget_text("400 credits", Budget(day=2000), None, 1600)
    '400 credits · 1,600 of 2,000 left today'
    >>> budget_text("400 credits", None, None, None)
    '400 credits'
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from genlab.client import Budget, PastResult
from genlab.display import BORDER, MUTED, text
from genlab.widgets._background import Background
from genlab.widgets._protocols import StudioClient


def budget_text(
    estimate: str, budget: Budget | None, session_left: int | None, day_left: int | None
) -> str:
    """The estimate, followed by what remains of each cap the budget has."""
    parts = [estimate]
    if budget is not None and budget.session is not None and session_left is not None:
        parts.append(f"{session_left:,} of {budget.session:,} left this session")
    if budget is not None and budget.day is not None and day_left is not None:
        parts.append(f"{day_left:,} of {budget.day:,} left today")
    return " · ".join(parts)


def client_budget_text(client: StudioClient, estimate: str) -> str:
    """:func:`budget_text` for ``client``'s budget (the estimate alone without one)."""
    budget = client.budget
    if budget is None:
        return estimate
    return budget_text(estimate, budget, client.budget_remaining, client.budget_remaining_today)


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
    """"This exact request already has a result — Reuse it / Generate again", or nothing.

    Args:
        client: asked with ``client.find_reusable(body)``.
        on_choice: called with ``True`` (Reuse it) or ``False`` (Generate again).

    Attributes:
        past: the earlier result offered (None when nothing is offered).
        lookup: the future of the latest lookup (tests wait on it).
    """

    def __init__(self, client: StudioClient, on_choice: Callable[[bool], object]) -> None:
        super().__init__(layout=widgets.Layout(flex_flow="row wrap", align_items="center",
                                               display="none"))
        self.add_class("genlab-reuse-offer")
        self.client = client
        self.past: PastResult | None = None
        self.lookup: concurrent.futures.Future[PastResult | None] | None = None
        self._work = Background.shared()
        self._lock = threading.Lock()
        self._wanted: Mapping[str, Any] | None = None
        self.label = widgets.HTML()
        self.reuse_button = widgets.Button(
            description="Reuse it", icon="recycle", button_style="success",
            tooltip="Show the earlier result at zero credits", layout=widgets.Layout(width="auto"),
        )
        self.again_button = widgets.Button(
            description="Generate again", icon="refresh", layout=widgets.Layout(width="auto"),
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
            self._show(past)

        self.lookup = self._work.run(
            self.client.find_reusable, dict(body), on_done=answered,
            on_error=lambda _exc: self._show(None),  # no offer is the safe answer
        )

    def recheck(self, body: Mapping[str, Any] | None) -> None:
        """Look ``body`` up again even if unchanged (a task just ended: the history grew)."""
        with self._lock:
            self._wanted = None
        self.check(body)

    def _show(self, past: PastResult | None) -> None:
        self.past = past
        if past is None:
            self.layout.display = "none"
            return
        saves = (f"saves {past.credits:,} credits" if past.credits is not None
                 else "its price is unknown")
        self.label.value = text(f"♻ {offer_text(past)} — {saves}", MUTED,
                                css=f"border-left:3px solid {BORDER};padding-left:6px")
        self.reuse_button.description = (
            f"Reuse it (saves {past.credits:,} credits)" if past.credits is not None
            else "Reuse it"
        )
        self.layout.display = "flex"
