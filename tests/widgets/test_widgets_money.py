"""The Studio's money, as a person meets it: the offer to reuse a result this exact request
already has, the budget beside the estimate, and compare's "reuse earlier results" (headless,
over a real emulator on loopback, checked against its ledger).

Waits are bounded safety nets, never timing assertions.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import genlab
from genlab.client import Budget, ReusedRecord
from genlab.emulator import EmulatorHandle, start
from genlab.widgets import Studio, StudioClient

API_KEY = "studio-money-key-3"
WAIT = 120.0
# video-a at 480P: 80 credits per second (published), so 2 s = 160 credits.
SETTINGS = {"prompt": "a red kite", "duration": 2, "resolution": "480P"}


@pytest.fixture
def emulator() -> Iterator[EmulatorHandle]:
    with start(api_key=API_KEY, time_scale=0.02, port=0) as handle:
        yield handle


def _client(emulator: EmulatorHandle, **options: object) -> genlab.Client:
    return genlab.Client(emulator.base_url, API_KEY, poll_scale=0.05, **options)  # type: ignore[arg-type]


def _offer_settled(studio: Studio) -> None:
    lookup = studio.reuse_offer.lookup
    assert lookup is not None
    lookup.result(WAIT)


def _eventually(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def _studio(client: genlab.Client, tmp_path: Path) -> Studio:
    studio = Studio(client, model="video-a", media_dir=tmp_path / "media")
    studio.set(**SETTINGS)
    return studio


def _card_done(studio: Studio) -> genlab.TaskRecord:
    card = studio.cards[-1]
    assert card.future is not None
    record = card.future.result(WAIT)
    assert card.wait_done(WAIT)
    return record


def _shown(widget: object) -> str:
    """The text a person reads in an HTML widget: its markup without tags or escapes."""
    return html.unescape(re.sub(r"<[^>]+>", "", str(widget.value)))  # type: ignore[attr-defined]


def _offered(studio: Studio) -> bool:
    layout = studio.reuse_offer.layout
    return bool(layout.display != "none" and layout.visibility != "hidden")


def _in_submit_row(studio: Studio) -> bool:
    return any(
        studio.submit_button in getattr(row, "children", ())
        and studio.reuse_offer in row.children
        for row in studio.children
    )


def test_the_studio_offers_an_earlier_result_and_reusing_it_costs_nothing(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    with _client(emulator) as client:
        first = client.generate(model="video-a", **SETTINGS, reuse=False, progress=False)
        studio = _studio(client, tmp_path)
        _offer_settled(studio)
        offer = studio.reuse_offer
        assert offer.past is not None and offer.past.record.task_id == first.task_id
        assert _offered(studio)
        assert _in_submit_row(studio)  # beside Submit: showing it moves nothing below
        assert "♻ made 20" in _shown(offer.label)  # and the date; short, beside Submit
        assert "this exact request already has a result from" in offer.label.tooltip
        assert "saves 160 credits" in offer.label.tooltip
        assert offer.reuse_button.description == "Reuse it (saves 160 credits)"

        offer.reuse_button.click()
        assert not _offered(studio)  # chosen: the offer steps aside at once
        assert offer.layout.display == "flex"  # ... and keeps its place: nothing moves
        reused = _card_done(studio)
        card = studio.cards[-1]
        assert isinstance(reused, ReusedRecord) and reused.task_id == first.task_id
        assert "0 credits (reused)" in card.header.value
        assert f"reused task {first.task_id}" in card.message.value
        assert "160 credits saved" in card.message.value
        assert card.media.value  # the earlier media, embedded
        assert len(emulator.ledger()) == 1
        assert offer.past is None and not _offered(studio)


def test_generate_again_pays_and_the_offer_does_not_come_back(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    with _client(emulator) as client:
        client.generate(model="video-a", **SETTINGS, reuse=False, progress=False)
        studio = _studio(client, tmp_path)
        _offer_settled(studio)
        studio.reuse_offer.again_button.click()
        assert not _offered(studio)
        fresh = _card_done(studio)
        assert not isinstance(fresh, ReusedRecord)
        assert len(emulator.ledger()) == 2
        # An edit and back: the newest result is the one just made here, so no offer.
        studio.set(prompt="a blue kite")
        _offer_settled(studio)
        studio.set(prompt=SETTINGS["prompt"])
        _offer_settled(studio)
        assert studio.reuse_offer.past is None
        assert not _offered(studio)


def test_a_task_finished_in_the_studio_is_not_offered_back(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    with _client(emulator) as client:
        studio = _studio(client, tmp_path)
        _offer_settled(studio)
        assert studio.reuse_offer.past is None
        assert not _offered(studio)
        studio.submit(reuse=False)
        record = _card_done(studio)
        assert record.task_id in studio.reuse_offer.made
        assert not _offered(studio)
        studio.set(prompt="a blue kite")
        studio.set(prompt=SETTINGS["prompt"])  # the same request again, made here
        _offer_settled(studio)
        assert studio.reuse_offer.past is None
        assert not _offered(studio)


def test_an_edited_request_has_no_offer(emulator: EmulatorHandle, tmp_path: Path) -> None:
    with _client(emulator) as client:
        client.generate(model="video-a", **SETTINGS, reuse=False, progress=False)
        studio = _studio(client, tmp_path)
        _offer_settled(studio)
        assert studio.reuse_offer.past is not None
        studio.set(prompt="a blue kite")
        _offer_settled(studio)
        assert studio.reuse_offer.past is None
        assert not _offered(studio)


def test_the_budget_line_moves_after_a_submit_without_an_edit(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    budget = Budget(session=2000, day=5000)
    with _client(emulator, budget=budget, history=genlab.History(tmp_path / "h.db")) as client:
        studio = _studio(client, tmp_path)
        text = studio.credits_label.value
        assert "reserves 160 credits" in text
        assert "2,000 of 2,000 left this session" in text
        assert "5,000 of 5,000 left today" in text
        studio.submit(reuse=False)
        _card_done(studio)
        assert _eventually(lambda: "4,840 of 5,000 left today" in studio.credits_label.value)
        assert "1,840 of 2,000 left this session" in studio.credits_label.value
        assert not studio.submit_button.disabled


def test_an_assumed_price_is_what_the_line_says_is_reserved(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    budget = Budget(session=5000, unpriced={"video-b": 60})
    with _client(emulator, budget=budget) as client:
        studio = Studio(client, model="video-b", media_dir=tmp_path / "media")
        studio.set(prompt="a fox", duration=5, resolution="480P")
        text = _shown(studio.credits_label)
        assert "reserves 300 credits (the budget's assumed price" in text
        assert "5,000 of 5,000 left this session" in text
        assert "price not published" not in text
        studio.submit(reuse=False)
        _card_done(studio)
        assert _eventually(lambda: "4,700 of 5,000 left this session"
                           in studio.credits_label.value)


@pytest.mark.parametrize(
    ("budget", "model", "fields", "says", "fix"),
    [
        (Budget(task=200), "video-a", {**SETTINGS, "duration": 3}, "the per-task cap is 200",
         {"duration": 2}),
        (Budget(session=5000), "video-b", {"prompt": "a fox", "duration": 5},
         "video-b has no published price", {"model": "video-a", **SETTINGS}),
    ],
    ids=["over-the-task-cap", "unpriced-refused"],
)
def test_submit_is_off_with_the_reason_before_the_click(
    emulator: EmulatorHandle, tmp_path: Path, budget: Budget, model: str,
    fields: dict[str, object], says: str, fix: dict[str, object],
) -> None:
    with _client(emulator, budget=budget) as client:
        studio = Studio(client, model=model, media_dir=tmp_path / "media")
        studio.set(**fields)
        assert studio.validation.valid
        assert studio.submit_button.disabled
        assert "Submit is off:" in _shown(studio.credits_label)
        assert says in _shown(studio.credits_label)
        assert says in studio.submit_button.tooltip
        assert "Nothing was sent" not in _shown(studio.credits_label)
        studio.set(**fix)  # 160 credits at a published price: within every cap
        assert not studio.submit_button.disabled
        assert "Submit is off" not in _shown(studio.credits_label)
        assert "reserves 160 credits" in _shown(studio.credits_label)
    assert emulator.ledger() == []


def test_the_last_credits_of_a_session_turn_submit_off(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    with _client(emulator, budget=Budget(session=400)) as client:
        studio = _studio(client, tmp_path)
        studio.set(duration=3)  # 240 credits
        assert not studio.submit_button.disabled
        studio.submit(reuse=False)
        _card_done(studio)
        assert _eventually(lambda: studio.submit_button.disabled)
        assert "160 of the session's 400 remain" in _shown(studio.credits_label)
        studio.set(duration=2)  # 160 credits fit in what is left
        assert not studio.submit_button.disabled


def test_without_a_budget_only_the_estimate_shows(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    with _client(emulator) as client:
        studio = _studio(client, tmp_path)
        assert "left" not in studio.credits_label.value
        assert "160 credits" in studio.credits_label.value
        assert not studio.submit_button.disabled


def test_compare_reuse_earlier_results_fills_cells_without_paying(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    with _client(emulator) as client:
        studio = Studio(client, model="video-a", media_dir=tmp_path / "media")
        studio.set(**{**SETTINGS, "prompt": "a lighthouse"})  # no seed: only the box reuses
        first = studio.compare(["video-a"]).result(WAIT)
        assert len(emulator.ledger()) == 1
        studio.compare_panel.reuse_box.value = True
        again = studio.compare(["video-a"]).result(WAIT)
        assert len(emulator.ledger()) == 1
        assert list(again.df["task_id"]) == list(first.df["task_id"])
        studio.compare_panel.reuse_box.value = False
        studio.compare(["video-a"]).result(WAIT)
        assert len(emulator.ledger()) == 2


def test_a_genlab_client_has_the_money_surface(emulator: EmulatorHandle) -> None:
    with _client(emulator) as client:
        assert isinstance(client, StudioClient)
        assert client.find_reusable(model="video-a", **SETTINGS) is None
        assert client.budget_remaining_today is None
