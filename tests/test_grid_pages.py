"""Experiment grids that hold many cells, as a user sees them: tiles are thumbnails (a video
its poster until played), a notebook shows a page of rows with a note naming the next page,
a saved page holds every cell; ``exp.compare`` reads as a table with the prompt's change
highlighted and the scores beside it; a leaderboard without votes says what to do."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import genlab
from genlab import emulator
from genlab.experiments import prompt
from genlab.history import History

KEY = "grid-pages-key-81f0"
SUBJECTS = [f"kite {n}" for n in range(25)]


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("grid-pages")


@pytest.fixture(scope="module")
def history(folder: Path) -> Iterator[History]:
    h = History(folder / "history.sqlite")
    yield h
    h.close()


@pytest.fixture(scope="module")
def client(server: emulator.EmulatorHandle, history: History,
           folder: Path) -> Iterator[genlab.Client]:
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                       wait_timeout=120, keep=folder / "media") as c:
        yield c


def words(result: genlab.Result) -> float:
    return float(len(str(result.prompt).split()))


@pytest.fixture(scope="module")
def big(client: genlab.Client, history: History) -> genlab.Experiment:
    """50 image cells: 25 rows of two versions, more than a page holds."""
    kite = prompt("A {subject} over the dunes", name="many", history=history)
    kite2 = kite.revise("A {subject} soaring over the dunes")
    return genlab.experiment(client, "many-cells", prompts=[kite, kite2],
                             models=["image-d"], vars={"subject": SUBJECTS},
                             params={"resolution": "512"}, seeds=[1], scorers=[words],
                             max_credits=100_000, quiet=True, progress=False)


def _images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in
            re.findall(r'<img src="data:image/webp;base64,([^"]+)"', page)]


def test_a_grid_larger_than_a_page_shows_its_first_page_of_thumbnails_and_says_what_next(
    big: genlab.Experiment,
) -> None:
    assert (big.df["status"] == "succeeded").all()
    page = big._repr_html_()
    assert page.count("<div class='genlab-row'>") == 24  # 48 cells: two a row
    assert "showing cells 1–48 of 50 (page 1 of 2)" in page
    assert "exp.show(page=2) for the next" in page and 'exp.to_html(&quot;many-cells.html' \
        in page
    shown = _images(page)
    assert len(shown) == 48
    kept = Path(big.paths(str(big.df["task_id"].iloc[0]))[0])
    assert kept.stat().st_size > 4 * max(len(s) for s in shown)  # thumbnails, not the files
    assert page.count('loading="lazy"') == 48
    assert "kite 24" not in page  # the last row is on the next page

    second = big.show(page=2)._repr_html_()
    assert second.count("<div class='genlab-row'>") == 1 and "kite 24" in second
    assert "showing cells 49–50 of 50 (page 2 of 2)" in second
    assert "exp.show(page=3)" not in second
    with pytest.raises(ValueError, match=r"pages 1 to 2 \(got page=3\): exp.show\(page=1\)"):
        big.show(page=3)


def test_the_saved_page_holds_every_cell_and_is_shown_as_a_link(
    big: genlab.Experiment, folder: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(folder)
    written = big.to_html("out/many.html")
    link = written._repr_html_()
    assert '<a href="out/many.html"' in link and "PosixPath" not in repr(written)
    text = Path(written).read_text()
    assert text.count("<div class='genlab-row'>") == 25 and "showing cells" not in text
    assert len(_images(text)) == 50 and text.count('loading="lazy"') == 50


def test_compare_is_a_table_with_the_change_highlighted_and_the_scores_beside_it(
    big: genlab.Experiment,
) -> None:
    table = big.compare("many@1", "many@2")
    assert table["words_change"].tolist() == [1.0] * 25  # the numbers stay a DataFrame
    assert table["change"].iloc[0] == "A kite 0 {+soaring +}over the dunes"
    page = table._repr_html_()
    assert "{+" not in page and "<ins class='genlab-ins'>soaring</ins>" in page
    assert "words 6 → 7 (<span class='genlab-change'>+1</span>)" in page
    assert page.count("<tr>") == 26  # the header and a row per set of variables
    assert "many@1 → many@2" in page


def test_a_leaderboard_without_votes_says_how_to_give_them(big: genlab.Experiment) -> None:
    page = big.leaderboard(seed=0)._repr_html_()
    assert "No votes yet" in page and "genlab.rate(exp)" in page
    assert "<table" not in page


def test_a_video_tile_is_its_poster_until_played(client: genlab.Client,
                                                 history: History) -> None:
    clip = prompt("A {subject} turning", name="turning", history=history)
    exp = genlab.experiment(client, "poster-tiles", prompts=[clip], models=["video-a"],
                            vars={"subject": ["kite"]},
                            params={"duration": 2, "resolution": "480P"}, seeds=[1],
                            quiet=True, progress=False)
    page = exp._repr_html_()
    assert page.count("<video") == 1 and 'preload="none"' in page
    poster = re.search(r'poster="data:image/webp;base64,([^"]+)"', page)
    assert poster is not None and len(base64.b64decode(poster.group(1))) < 20_000
    assert "onplay=" in page  # the row's handlers, given to the renderer
