"""Asking the budget before the click: ``Client.budget_quote`` says what a submit would reserve
and why the budget would refuse it, and a submit then does exactly that (the emulator's ledger
and the client's remaining figures are the judges)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from genlab import Client, CreditLimitError, History, InvalidParameterError
from genlab.client import Budget
from genlab.emulator import EmulatorHandle

PRICED = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}  # 160
UNPRICED = {"model": "video-b", "prompt": "a fox", "duration": 5, "resolution": "480P"}


def _client(server: EmulatorHandle, options: dict[str, Any], **kwargs: Any) -> Client:
    return Client(server.base_url, server.api_key, **options, **kwargs)


def test_without_a_budget_the_quote_is_the_published_price(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options) as client:
        quote = client.budget_quote(PRICED)
        assert (quote.credits, quote.assumed, quote.allowed) == (160, False, True)
        assert client.budget_quote(UNPRICED).credits is None
        assert client.budget_quote(**UNPRICED).allowed


def test_the_quote_is_what_a_submit_reserves_at_an_assumed_price(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    budget = Budget(session=5000, unpriced={"video-b": 60})
    with _client(client_server, client_options, budget=budget) as client:
        quote = client.budget_quote(UNPRICED)
        assert (quote.credits, quote.assumed, quote.refusal) == (300, True, None)
        assert quote.session_left == 5000
        client.submit(UNPRICED, reuse=False)
        assert client.budget_remaining == 4700
        assert client.budget_quote(UNPRICED).session_left == 4700
    assert len(client_server.ledger()) == 1


@pytest.mark.parametrize(
    ("budget", "body", "says"),
    [
        (Budget(task=100), PRICED, "160 credits; the per-task cap is 100; lower the duration"),
        (Budget(session=100), PRICED, "100 of the session's 100 remain; raise Budget(session"),
        (Budget(session=5000), UNPRICED, "video-b has no published price"),
    ],
    ids=["task-cap", "session-cap", "unpriced-refused"],
)
def test_a_refusal_is_known_before_the_submit_and_the_submit_is_refused(
    client_server: EmulatorHandle, client_options: dict[str, Any], budget: Budget,
    body: dict[str, Any], says: str,
) -> None:
    with _client(client_server, client_options, budget=budget) as client:
        quote = client.budget_quote(body)
        assert not quote.allowed and quote.refusal is not None
        assert says in quote.refusal
        assert "Nothing was sent" not in quote.refusal  # nothing was tried yet
        with pytest.raises(CreditLimitError):
            client.submit(body, reuse=False)
    assert client_server.ledger() == []


def test_the_session_left_after_submits_turns_the_quote_into_a_refusal(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options, budget=Budget(session=300)) as client:
        assert client.budget_quote(PRICED).allowed
        client.submit(PRICED, reuse=False)
        quote = client.budget_quote(PRICED)
        assert quote.session_left == 140 and quote.credits == 160
        assert quote.refusal is not None and "140 of the session's 300 remain" in quote.refusal
        with pytest.raises(CreditLimitError):
            client.submit(PRICED, reuse=False)
    assert len(client_server.ledger()) == 1


def test_the_day_cap_refuses_on_the_figure_the_history_keeps(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path
) -> None:
    history = History(tmp_path / "h.db")
    with _client(client_server, client_options, budget=Budget(day=200),
                 history=history) as client:
        quote = client.budget_quote(PRICED)
        assert quote.allowed and quote.day_left == 200
        client.generate(PRICED, reuse=False)
        client.budget_quote(PRICED)  # the day's figure is read again in the background

        def refused() -> bool:
            return client.budget_quote(PRICED).day_left == 40

        assert _eventually(refused)
        quote = client.budget_quote(PRICED)
        assert quote.refusal is not None and "40 of today's 200 remain" in quote.refusal


def test_an_invalid_request_cannot_be_quoted(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options, budget=Budget(task=100)) as client:
        with pytest.raises(InvalidParameterError):
            client.budget_quote({**PRICED, "duration": 99})


def _eventually(condition: Callable[[], bool], deadline: float = 120.0) -> bool:
    end = time.monotonic() + deadline
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return bool(condition())
