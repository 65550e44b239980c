"""The rating page for people who do not code (``genlab app --rate NAME``), driven as its
buttons drive it: a name first, the pairs with how many are left and no leaderboard, thanks
at the end, the votes in the history under that name; an experiment or a tag; a name that is
neither says so. (tests/browser/test_rate_page.py drives it in Chromium.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import genlab
from genlab import emulator
from genlab.experiments import prompt
from genlab.history import History
from genlab.widgets import Background, RatingPage, rating_page

KEY = "rating-page-key-33f0"


@pytest.fixture(autouse=True)
def _no_threads_left() -> Iterator[None]:
    yield
    Background.shared().shutdown()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    folder = tmp_path_factory.mktemp("page")
    h = History(folder / "history.sqlite")
    with emulator.start(api_key=KEY, time_scale=0.02) as server, \
            genlab.Client(server.base_url, KEY, history=h, poll_scale=0.02, wait_timeout=120,
                          keep=folder / "media") as client:
        kite = prompt("A {subject} at dusk", name="kite", history=h)
        kite2 = kite.revise("A {subject} soaring at dusk")
        genlab.experiment(client, "kites", prompts=[kite, kite2], models=["image-d"],
                          vars={"subject": ["paper kite", "box kite"]},
                          params={"resolution": "512"}, seeds=[1], quiet=True, progress=False)
        h.tag = "boats"
        for model in ("image-c", "image-d"):
            client.generate(model=model, prompt="a paper boat", resolution="1K")
        h.tag = None
    yield h
    h.close()


def test_a_name_first_then_the_pairs_with_how_many_are_left_then_thanks(
    history: History
) -> None:
    page = rating_page("kites", history=history, seed=1)
    assert page.start_button.disabled and page.rater is None
    page.who.value = "  "
    assert page.start_button.disabled
    page.who.value = "ana"
    assert not page.start_button.disabled
    page.start_button.click()
    rater = page.rater
    assert rater is not None and page.asking.layout.display == "none"
    assert "Rating as <b>ana</b>: 2 pairs left" in page.left.value
    assert rater.board.layout.display == "none" and rater.leaderboard is None
    assert "kite@" not in rater.header.value + rater.stage.value
    rater.answer("left")
    assert "1 pair left" in page.left.value and page.thanks.value == ""
    rater.answer("tie")
    assert "Thank you, ana! Your 2 votes are saved." in page.thanks.value
    assert rater.layout.display == "none" and page.left.value == ""
    votes = history.ratings(user="ana")
    assert len(votes) == 2 and set(votes["tag"]) == {"kites"}
    with pytest.raises(ValueError, match="a name is needed"):
        page.start(" ")


def test_a_tag_is_rated_as_models_and_an_unknown_name_is_said(history: History) -> None:
    page = RatingPage("boats", history=history)
    rater = page.start("ben")
    assert "1 pair left" in page.left.value
    rater.answer("right")
    assert "Thank you, ben! Your 1 vote is saved." in page.thanks.value
    assert history.ratings(user="ben")["tag"].tolist() == ["boats"]

    unknown = RatingPage("nothing-here", history=history)
    assert unknown.asking.layout.display == "none"
    assert "Nothing to rate under &#x27;nothing-here&#x27;" in unknown.left.value
    assert "experiments: kites" in unknown.left.value
    assert "genlab app --rate NAME" in RatingPage("", history=history).left.value


def test_the_studio_hides_the_address_and_developer_buttons_when_asked(
    history: History, tmp_path: Path
) -> None:
    from genlab.widgets import Studio

    with emulator.start(api_key=KEY, time_scale=0.02) as server, \
            genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                          wait_timeout=120, keep=tmp_path / "media") as client:
        shown = Studio(client, model="image-d")
        page = Studio(client, model="image-d", developer=False)
        assert server.base_url in shown.children[0].value
        assert server.base_url not in page.children[0].value
        page.set(prompt="a lighthouse", resolution="512")
        card = page.submit()
        card.future.result(timeout=120)
        for part in (card.folder, card.download_button, card.code_button):
            assert part.layout.display == "none"
        shown.set(prompt="a lighthouse", resolution="512")
        other = shown.submit()
        other.future.result(timeout=120)
        assert other.download_button.layout.display != "none"


def test_download_my_votes_gives_a_file_that_migrate_merges_once(
    history: History, tmp_path: Path
) -> None:
    # The button's own code path: press it, then merge the file it links into a fresh
    # history with `genlab history migrate`, twice.
    import subprocess
    import sys

    from genlab.history import RatingEntry

    history.add_rating(RatingEntry("x1", "x2", "tie", left_model="image-c",
                                   right_model="image-d", prompt_address="p", rater="ed"))
    page = rating_page("boats", history=history, seed=2, votes_folder=tmp_path / "votes")
    assert page.downloading.layout.display == "none"  # nothing to download before a name
    page.start("cleo bell")
    assert page.downloading.layout.display == "flex"
    rater = page.rater
    assert rater is not None
    rater.answer("left")
    page.download_button.click()
    made = tmp_path / "votes" / "votes-cleo-bell.sqlite"
    assert made.is_file()
    # Outside a served page the file's place is said, with how to merge it.
    assert str(made) in page.download.value
    assert "genlab history migrate votes-cleo-bell.sqlite TEAM-HISTORY" in page.download.value
    theirs = history.ratings(user="cleo bell", gold=None)
    assert len(theirs) == 1
    team = tmp_path / "team.sqlite"
    for _ in range(2):
        run = subprocess.run([sys.executable, "-m", "genlab", "history", "migrate", str(made),
                              str(team)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        merged = History(team)
        try:
            votes = merged.ratings(gold=None)
            found = merged.df()
        finally:
            merged.close()
        assert sorted(votes["rating_id"]) == sorted(theirs["rating_id"])  # theirs, once
        assert list(votes["answer"]) == list(theirs["answer"])
        # What the votes refer to came along: both results of the pair.
        assert {theirs.iloc[0]["left_task"], theirs.iloc[0]["right_task"]} <= set(
            found["task_id"])


def test_download_my_votes_links_the_file_where_the_page_serves_it(
    history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genlab.jupyter import FILES_ROOT, FILES_URL

    monkeypatch.setenv(FILES_URL, "/voila/files/")
    monkeypatch.setenv(FILES_ROOT, str(tmp_path))
    monkeypatch.setenv("GENLAB_RATE_VOTES", str(tmp_path / "media" / "votes"))
    page = rating_page("boats", history=history, seed=2)
    page.start("dan")
    page.download_votes()
    assert ("<a href='/voila/files/media/votes/votes-dan.sqlite' download='votes-dan.sqlite'"
            in page.download.value)
