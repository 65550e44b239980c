"""Seeing the money: history.spend() and compare() against a budget, over a real emulator."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import genlab
from genlab import Client, CreditLimitError
from genlab.client import Budget
from genlab.emulator import EmulatorHandle
from genlab.history import SPEND_COLUMNS, History

PRICED = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}  # 160
UNPRICED = {"model": "video-b", "prompt": "a fox", "duration": 4, "resolution": "480P"}


def test_spend_shows_spent_estimated_and_saved(
    client_server: EmulatorHandle, client_options: dict[str, Any], history_location: str
) -> None:
    history = History(history_location)
    with Client(client_server.base_url, client_server.api_key, history=history,
                budget=Budget(unpriced={"video-b": 50}), **client_options) as client:
        with history.tagging("kites"):
            client.generate(PRICED)
            client.generate(PRICED, reuse=True)  # reused: 160 saved
            client.generate(UNPRICED)  # 4 s at an assumed 50: 200 estimated
    by_model = history.spend(by="model").set_index("model")
    assert list(by_model.columns) == list(SPEND_COLUMNS)
    assert by_model.loc["video-a", ["runs", "credits", "reused", "credits_saved"]].tolist() == [
        1, 160, 1, 160]
    # No published price for video-b: its credits are missing (a dash, as in the summary),
    # not 0; video-a had no assumed price, so nothing is estimated for it.
    assert by_model.loc["video-b", ["runs", "estimated"]].tolist() == [1, 200]
    assert pd.isna(by_model.loc["video-b", "credits"])
    assert pd.isna(by_model.loc["video-a", "estimated"])
    shown = history.spend(by="model").to_string(index=False).splitlines()
    assert shown[2].split() == ["video-b", "1", "–", "200", "0", "0", "0"]
    by_tag = history.spend(by="tag")
    assert by_tag["tag"].tolist() == ["kites"] and by_tag["credits_saved"].tolist() == [160]
    assert history.spend(by="day")["credits"].sum() == 160
    with pytest.raises(ValueError, match="by must be"):
        history.spend(by="week")  # type: ignore[arg-type]
    history.close()


def test_compare_checks_the_whole_grid_against_the_budget_first(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with Client(client_server.base_url, client_server.api_key, budget=Budget(session=500),
                **client_options) as client:
        with pytest.raises(CreditLimitError, match="these 4 runs would cost 640 credits"):
            genlab.compare(client, ["a", "b"], ["video-a"],
                           {"duration": 2, "resolution": "480P"}, repeats=2, quiet=True,
                           progress=False)
    assert client_server.ledger() == []


def test_compare_fills_cells_from_earlier_results_when_asked(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    params = {"duration": 2, "resolution": "480P"}
    with Client(client_server.base_url, client_server.api_key, **client_options) as client:
        first = genlab.compare(client, ["a kite"], ["video-a"], params, quiet=True,
                               progress=False)
        again = genlab.compare(client, ["a kite"], ["video-a"], params, quiet=True,
                               progress=False, reuse=True)
    assert again.df["task_id"].tolist() == first.df["task_id"].tolist()
    assert again.df["status"].tolist() == ["succeeded"]
    assert len(client_server.ledger()) == 1
