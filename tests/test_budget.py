"""Budgets that cannot be crossed: task, session and day caps, unpriced models, and the
emulator's ledger (what the service billed) as the judge."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from genlab import APIError, AsyncClient, Client, CreditLimitError
from genlab.client import Budget
from genlab.client.journal import MemoryJournal
from genlab.emulator import EmulatorHandle
from genlab.history import History

PRICED = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}  # 160
UNPRICED = {"model": "video-b", "prompt": "a fox", "duration": 4, "resolution": "480P"}


def _billed(server: EmulatorHandle) -> int:
    return sum(e["credits"] or 0 for e in server.ledger())


def test_a_task_over_the_task_cap_is_refused_before_it_is_sent(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with Client(client_server.base_url, client_server.api_key, budget=Budget(task=1000),
                **client_options) as client:
        with pytest.raises(CreditLimitError) as caught:
            client.submit({**PRICED, "duration": 5, "resolution": "1080P"})  # 1,400
    assert "1,400 credits" in str(caught.value) and "per-task cap is 1,000" in str(caught.value)
    assert caught.value.estimate == 1400 and caught.value.max_credits == 1000
    assert client_server.ledger() == []


@pytest.mark.parametrize("cap", ["session", "day"])
async def test_100_concurrent_submits_never_cross_a_cap(
    client_server: EmulatorHandle, client_options: dict[str, Any], history_location: str,
    cap: str,
) -> None:
    budget = Budget(**{cap: 1000})
    history = History(history_location) if cap == "day" else MemoryJournal()
    async with AsyncClient(client_server.base_url, client_server.api_key, budget=budget,
                           history=history, max_connections=20, **client_options) as client:
        results = await asyncio.gather(
            *(client.submit(PRICED) for _ in range(100)), return_exceptions=True
        )
    accepted = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, CreditLimitError)]
    assert len(accepted) == 6 and len(refused) == 94  # 6 x 160 = 960 <= 1,000 < 7 x 160
    assert _billed(client_server) == 960
    assert len(client_server.ledger()) == 6
    if isinstance(history, History):
        assert history.day_spent(datetime.now(UTC)) == 960
        history.close()


_WORKER = textwrap.dedent("""
    import sys
    from genlab import Client, CreditLimitError
    from genlab.client import Budget
    from genlab.history import History

    base_url, key, path = sys.argv[1:4]
    body = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}
    accepted = 0
    with Client(base_url, key, history=History(path), budget=Budget(day=1000),
                poll_scale=0.02) as client:
        for _ in range(8):
            try:
                client.submit(body)
                accepted += 1
            except CreditLimitError:
                pass
    print(accepted)
""")


def test_a_day_budget_is_shared_by_two_processes(
    client_server: EmulatorHandle, history_location: str
) -> None:
    # Two processes stand for two machines; on PostgreSQL it is a team's shared day budget.
    path = history_location
    History(path).close()  # created once, so both processes open an existing file
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, client_server.base_url, client_server.api_key,
             str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    counts = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        counts.append(int(out.strip()))
    assert sum(counts) == 6  # 16 tried across both: the day allows 6 x 160
    assert _billed(client_server) == 960


def test_unpriced_models_are_refused_by_default_with_what_to_do(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with Client(client_server.base_url, client_server.api_key, budget=Budget(session=5000),
                **client_options) as client:
        with pytest.raises(CreditLimitError) as caught:
            client.submit(UNPRICED)
    message = str(caught.value)
    assert "video-b has no published price" in message
    assert "Budget(unpriced={'video-b':" in message and "unpriced='allow'" in message
    assert client_server.ledger() == []


def test_unpriced_models_allowed_or_at_an_assumed_price(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path
) -> None:
    history = History(tmp_path / "h.sqlite")
    with Client(client_server.base_url, client_server.api_key, history=history,
                budget=Budget(session=1000, unpriced={"video-b": 100}), **client_options) as c:
        c.submit(UNPRICED)  # 4 s at an assumed 100 per second: 400 counted
        c.submit(UNPRICED)
        with pytest.raises(CreditLimitError, match="200 of the session's 1,000 remain"):
            c.submit(UNPRICED)
        assert c.budget_remaining == 200
    assert history.df()["assumed_credits"].tolist() == [400, 400]
    history.close()
    with Client(client_server.base_url, client_server.api_key,
                budget=Budget(session=1, unpriced="allow"), **client_options) as c:
        c.submit(UNPRICED)  # counted as unknown: the cap bounds priced runs only
        assert c.budget_remaining == 1
    assert len(client_server.ledger()) == 3


def test_a_refused_submit_gives_its_reservation_back(client_options: dict[str, Any]) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": {"code": "INVALID_PARAMETER",
                                                   "message": "no"}})

    client = Client("http://svc.example", "k", transport=httpx.MockTransport(refuse),
                    budget=Budget(session=500), **client_options)
    with client:
        with pytest.raises(APIError):
            client.submit(PRICED)
        assert client.budget_remaining == 500


def test_a_day_cap_needs_a_history_that_keeps_spend() -> None:
    class Plain:
        def submit_started(self, entry: Any) -> str: return "1"
        def submit_accepted(self, entry_id: str, task: Any) -> None: ...
        def submit_uncertain(self, entry_id: str, reason: str) -> None: ...
        def submit_failed(self, entry_id: str, reason: str) -> None: ...
        def status_changed(self, record: Any) -> None: ...
        def results_saved(self, task_id: str, paths: Any) -> None: ...
        def duration_samples(self, limit: int = 1000) -> list[Any]: return []

    from genlab import ConfigurationError

    with pytest.raises(ConfigurationError, match="genlab.History"):
        AsyncClient("http://x", "k", history=Plain(), budget=Budget(day=100))


@pytest.mark.parametrize("bad", [{"session": -1}, {"day": 1.5}, {"task": True},
                                 {"unpriced": "maybe"}])
def test_bad_budgets_say_what_is_wrong(bad: dict[str, Any]) -> None:
    from genlab import ConfigurationError

    with pytest.raises(ConfigurationError, match="Budget"):
        Budget(**bad)


class CountingJournal(MemoryJournal):
    """An in-memory journal that counts how often the day's spend is read."""

    def __init__(self) -> None:
        super().__init__()
        self.day_reads = 0

    def day_spent(self, moment: datetime) -> int:
        self.day_reads += 1
        return super().day_spent(moment)


def test_what_remains_today_is_read_off_the_caller_and_follows_each_submit(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    journal = CountingJournal()
    with Client(client_server.base_url, client_server.api_key, history=journal,
                budget=Budget(day=1000), **client_options) as client:
        figures = [client.budget_remaining_today for _ in range(200)]  # a form's keystrokes
        assert figures == [1000] * 200 and journal.day_reads == 1
        client.submit(PRICED)  # 160 credits
        for _ in range(100):  # the figure is refreshed in the background after a submit
            if client.budget_remaining_today == 840:
                break
            threading.Event().wait(0.05)
        assert client.budget_remaining_today == 840
        assert journal.day_reads <= 3
