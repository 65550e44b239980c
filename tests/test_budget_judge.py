"""The budget's one judge: each cap's refusal carries its numbers (which cap, the cost, the cap,
what remains, whether the price was assumed), and a person reads it worded once: after a
refused submit (the exception), before one (the quote the Studio shows), for a batch."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import genlab
from genlab import CreditLimitError
from genlab.client import Budget, Client
from genlab.client.journal import MemoryJournal, Refusal

PRICED = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}  # 160
UNPRICED = {"model": "video-b", "prompt": "a fox", "duration": 4, "resolution": "480P"}


def accepting() -> httpx.MockTransport:
    ids = itertools.count(1)
    return httpx.MockTransport(lambda request: httpx.Response(
        200, json={"task_id": f"t{next(ids)}", "model": "video-a"}))


def client(budget: Budget, **options: Any) -> Client:
    return Client("http://svc", "k", transport=accepting(), budget=budget, **options)


@pytest.mark.parametrize(
    ("budget", "prior", "request_", "refusal", "after", "before"),
    [
        (Budget(task=100), 0, PRICED,
         Refusal("task", "video-a", 160, 100),
         "video-a: this task would cost 160 credits; the per-task cap is 100. Nothing was "
         "sent; lower the duration or resolution, or raise Budget(task=...)",
         "video-a: this task would cost 160 credits; the per-task cap is 100; lower the "
         "duration or resolution, or raise Budget(task=...)"),
        (Budget(session=1200), 7, PRICED,  # 7 x 160 = 1,120 counted first
         Refusal("session", "video-a", 160, 1200, 1120),
         "video-a: this task would cost 160 credits and 80 of the session's 1,200 remain. "
         "Nothing was sent; raise Budget(session=...) or start a new client",
         "video-a: this task would cost 160 credits and 80 of the session's 1,200 remain; "
         "raise Budget(session=...) or start a new client"),
        (Budget(day=1200), 7, PRICED,
         Refusal("day", "video-a", 160, 1200, 1120),
         "video-a: this task would cost 160 credits and 80 of today's 1,200 remain (UTC day, "
         "every process writing this history). Nothing was sent; raise Budget(day=...) or "
         "wait for 00:00 UTC",
         "video-a: this task would cost 160 credits and 80 of today's 1,200 remain (UTC day, "
         "every process writing this history); raise Budget(day=...) or wait for 00:00 UTC"),
        (Budget(), 0, UNPRICED,
         Refusal("unpriced", "video-b", 0, 0),
         "video-b has no published price, so this budget cannot bound it. Nothing was sent; "
         "set an assumed price, Budget(unpriced={'video-b': <credits per second or per "
         "image>}), or let unpriced runs through with Budget(unpriced='allow')",
         "video-b has no published price, so this budget cannot bound it; set an assumed "
         "price, Budget(unpriced={'video-b': <credits per second or per image>}), or let "
         "unpriced runs through with Budget(unpriced='allow')"),
        (Budget(session=500, unpriced={"video-b": 100}), 1, UNPRICED,  # 400 counted first
         Refusal("session", "video-b", 400, 500, 400, assumed=True),
         "video-b: this task would cost 400 credits and 100 of the session's 500 remain. "
         "Nothing was sent; raise Budget(session=...) or start a new client",
         "video-b: this task would cost 400 credits and 100 of the session's 500 remain; "
         "raise Budget(session=...) or start a new client"),
    ],
    ids=["task", "session", "day", "unpriced", "session-at-an-assumed-price"],
)
def test_each_caps_refusal_carries_its_numbers_and_is_worded_once(
    budget: Budget, prior: int, request_: dict[str, Any], refusal: Refusal, after: str,
    before: str,
) -> None:
    with client(budget, history=MemoryJournal()) as c:
        for _ in range(prior):
            c.submit(request_)
        c.budget_quote(request_)  # asks for the day's figure again (read in the background)
        assert _eventually(lambda: c.budget_quote(request_).refused == refusal)
        quote = c.budget_quote(request_)
        with pytest.raises(CreditLimitError) as caught:
            c.submit(request_)  # the day cap: refused by the journal, in the same words
    assert quote.refusal == before and not quote.allowed
    assert str(caught.value) == after
    assert caught.value.estimate == refusal.credits
    assert caught.value.max_credits == refusal.max_credits


@pytest.mark.parametrize(
    ("budget", "requests", "said", "estimate", "most"),
    [
        (Budget(task=100), [PRICED] * 3,
         "video-a: one run would cost 160 credits; the per-task cap is 100. Nothing was sent; "
         "lower the duration or resolution, or raise Budget(task=...)", 160, 100),
        (Budget(session=500), [PRICED] * 4,
         "these 4 runs would cost 640 credits and 500 of the session's 500 remain. Nothing "
         "was sent; make the grid smaller or raise Budget(session=...)", 640, 500),
        (Budget(day=300), [PRICED] * 2,
         "these 2 runs would cost 320 credits and 300 of today's 300 remain (UTC day, every "
         "process writing this history). Nothing was sent; raise Budget(day=...) or wait for "
         "00:00 UTC", 320, 300),
    ],
    ids=["task", "session", "day"],
)
def test_a_batch_is_judged_as_a_whole_before_anything_is_sent(
    budget: Budget, requests: list[dict[str, Any]], said: str, estimate: int, most: int,
) -> None:
    with client(budget, history=MemoryJournal()) as c:
        with pytest.raises(CreditLimitError) as caught:
            c.check_budget([genlab.validate(r) for r in requests])
        if budget.task is None:  # one run is within what remains
            assert c.check_budget([genlab.validate(PRICED)]) == 160
    assert str(caught.value) == said
    assert (caught.value.estimate, caught.value.max_credits) == (estimate, most)


def _eventually(condition: Callable[[], bool], deadline: float = 120.0) -> bool:
    end = time.monotonic() + deadline
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return bool(condition())
