"""Prompt experiments as a user sees them: versions, aliases and diffs kept in the history
(SQLite and PostgreSQL), a matrix checked and priced before anything is sent, cells run once
even across a killed process, scores, the grid, a comparison and the one-file page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import genlab
from _clocks import PausableClock
from genlab import emulator
from genlab.experiments import Prompt, PromptDiff, prompt
from genlab.history import History
from genlab.media import Result

KEY = "experiments-key-5c1e"
TEMPLATE = "A {subject} over {place} at dusk"
IMAGES = ["image-b", "image-d"]


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    h = History(tmp_path / "history.sqlite")
    yield h
    h.close()


@pytest.fixture
def client(server: emulator.EmulatorHandle, history: History,
           tmp_path: Path) -> Iterator[genlab.Client]:
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                       wait_timeout=120, keep=tmp_path / "media") as c:
        yield c


def billed(server: emulator.EmulatorHandle) -> int:
    return len(server.ledger())


def kites(history: History) -> tuple[Prompt, Prompt]:
    kite = prompt(TEMPLATE, name="kite", history=history)
    return kite, kite.revise("A {subject} soaring over {place} at dusk, 35 mm")


# --- prompts ---------------------------------------------------------------------------------


def test_a_phrase_replaced_reads_as_one_change_not_word_by_word() -> None:
    diff = PromptDiff("A {subject} over {place} at dusk",
                      "A {subject} over {place} in fading light, 35 mm")
    assert str(diff) == "A {subject} over {place} [-at dusk-]{+in fading light, 35 mm+}"
    # The removal and its replacement are two words on screen, a space between them.
    assert ("<del class='genlab-del'>at dusk</del> "
            "<ins class='genlab-ins'>in fading light, 35 mm</ins>") in diff.html()
    # Words kept between two changes stay outside them.
    assert str(PromptDiff("a red kite at dusk", "a blue kite at dawn")) == \
        "a [-red-]{+blue+} kite at [-dusk-]{+dawn+}"


def test_versions_aliases_and_diffs_are_kept_in_the_history(history_location: str) -> None:
    history = History(history_location)
    try:
        kite, kite2 = kites(history)
        assert (kite.version, kite2.version, kite2.parent) == (1, 2, 1)
        assert prompt(TEMPLATE, name="kite", history=history).version == 1  # a cell run again
        kite2.alias("best")
        assert prompt("kite@best", history=history).template == kite2.template
        assert prompt("kite@1", history=history) == kite
        assert prompt("kite", history=history).version == 2  # the newest
        kite.alias("best")  # an alias moves
        assert prompt("kite@best", history=history).version == 1
        frame = history.prompts()
        assert frame[["name", "version", "aliases"]].values.tolist() == [
            ["kite", 1, "best"], ["kite", 2, ""]]
        diff = kite2.diff(kite)
        assert str(diff) == "kite@1 -> kite@2: A {subject}{+ soaring+} over {place} at " \
            "dusk{+, 35 mm+}"
        assert "<ins class='genlab-ins'> soaring</ins>" not in diff.html()  # spaces stay out
        assert "<ins class='genlab-ins'>soaring</ins>" in diff.html()
    finally:
        history.close()
    again = History(history_location)  # another process sharing the history sees them
    try:
        assert prompt("kite@best", history=again).version == 1
        with pytest.raises(LookupError, match="no alias 'worst'.*best"):
            prompt("kite@worst", history=again)
        with pytest.raises(LookupError, match="versions 1 to 2"):
            prompt("kite@7", history=again)
    finally:
        again.close()


def test_a_missing_or_extra_variable_is_a_clear_error(history: History) -> None:
    kite, _ = kites(history)
    with pytest.raises(ValueError, match=r"kite@1 needs a value for place .*nothing was sent"):
        kite.fill(subject="paper kite")
    with pytest.raises(ValueError, match="kite@1 has no slot for colour"):
        kite.fill(subject="paper kite", place="dunes", colour="red")
    assert kite.fill(subject="<b>kite</b>", place="dunes") == "A <b>kite</b> over dunes at dusk"
    with pytest.raises(ValueError, match="slots must be named"):
        prompt("A {} kite", name="bad", history=history)
    with pytest.raises(ValueError, match="without '@'"):
        prompt("A {subject}", name="kite@2", history=history)


def test_a_variable_missing_from_the_matrix_sends_nothing(
    client: genlab.Client, history: History, server: emulator.EmulatorHandle
) -> None:
    kite, kite2 = kites(history)
    before = billed(server)
    with pytest.raises(ValueError, match="needs a value for place"):
        genlab.experiment(client, "no-place", prompts=[kite, kite2], models=IMAGES,
                          vars={"subject": ["paper kite"]}, quiet=True, progress=False)
    with pytest.raises(ValueError, match="no prompt has a slot for colour"):
        genlab.experiment(client, "colour", prompts=[kite], models=IMAGES,
                          vars={"subject": "kite", "place": "dunes", "colour": "red"},
                          quiet=True, progress=False)
    assert billed(server) == before


# --- the matrix --------------------------------------------------------------------------


def test_an_invalid_cell_is_reported_and_not_sent(
    client: genlab.Client, history: History, server: emulator.EmulatorHandle
) -> None:
    kite, kite2 = kites(history)
    before = billed(server)
    exp = genlab.experiment(
        client, "kite-study", prompts=[kite, kite2], models=["image-d", "video-a"],
        vars={"subject": ["paper kite", "dragon kite"], "place": "dunes"},
        params={"resolution": "512"}, seeds=[1, 2], quiet=True, progress=False,
    )
    df = exp.df
    invalid = df[df["model"] == "video-a"]
    assert len(df) == 16 and len(invalid) == 8
    assert set(invalid["status"]) == {"invalid"} and invalid["task_id"].isna().all()
    assert invalid["error"].str.contains("resolution must be one of").all()
    sent = df[df["model"] == "image-d"]
    assert set(sent["status"]) == {"succeeded"}
    assert billed(server) - before == 8  # only the valid cells reached the service
    assert sent["prompt"].tolist()[0] == "A paper kite over dunes at dusk"
    assert {"experiment", "prompt_name", "prompt_version", "subject", "place", "seed",
            "credits", "seconds", "media_width", "as_asked"} <= set(df.columns)
    assert (sent["media_width"] == 512).all()
    tagged = history.df(tag="kite-study")
    assert len(tagged) == 8  # each task carries the experiment in the history


def test_the_whole_matrix_is_refused_over_budget_before_any_submit(
    client: genlab.Client, history: History, server: emulator.EmulatorHandle, tmp_path: Path
) -> None:
    kite, kite2 = kites(history)
    before = billed(server)
    big = dict(prompts=[kite, kite2], models=["video-a"], vars={"subject": ["a", "b"],
               "place": "dunes"}, params={"duration": 4, "resolution": "480P"}, seeds=[1, 2])
    with pytest.raises(genlab.CreditLimitError, match="max_credits=1,000, so nothing was sent"):
        genlab.experiment(client, "too-dear", **big, max_credits=1_000, quiet=True)
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                       budget=genlab.Budget(session=2_000)) as capped:
        with pytest.raises(genlab.CreditLimitError):
            genlab.experiment(capped, "too-dear", **big, quiet=True)
    assert billed(server) == before
    assert history.df(tag="too-dear").empty


def test_running_the_same_call_again_pays_for_nothing_and_scores_once(
    client: genlab.Client, history: History, server: emulator.EmulatorHandle, tmp_path: Path
) -> None:
    kite, kite2 = kites(history)
    calls: list[str] = []

    def words(result: Result) -> float:
        calls.append(result.task_id)
        return float(len((result.prompt or "").split()))

    call: dict[str, Any] = dict(prompts=[kite, kite2], models=IMAGES,
                                vars={"subject": ["paper kite"], "place": "dunes"},
                                seeds=[1, 2], scorers=[words], quiet=True, progress=False)
    before = billed(server)
    first = genlab.experiment(client, "again", **call)
    assert billed(server) - before == 8 and len(calls) == 8
    second = genlab.experiment(client, "again", **call)
    assert billed(server) - before == 8 and len(calls) == 8
    assert second.money_line == "8 cells: 8 done earlier, nothing to send"
    assert second.df["task_id"].tolist() == first.df["task_id"].tolist()
    assert second.df["words"].tolist() == [7.0] * 4 + [10.0] * 4
    table = second.compare("kite@1", "v2")
    assert table["words_change"].tolist() == [3.0, 3.0]
    assert table["change"].iloc[0] == "A paper kite{+ soaring+} over dunes at dusk{+, 35 mm+}"
    page = second.to_html(tmp_path / "again.html").read_text()
    assert "<th>words</th>" in page and "<td>7</td>" in page and "<td>10</td>" in page


def test_the_grid_shows_diffs_seeds_and_escaped_text(
    client: genlab.Client, history: History, tmp_path: Path
) -> None:
    kite = prompt("A {subject} at dusk", name="tags", history=history)
    kite2 = kite.revise("A {subject} at <i>dawn</i>")
    exp = genlab.experiment(client, "grid", prompts=[kite, kite2], models=["image-d"],
                            vars={"subject": ["<script>x</script>"]},
                            params={"resolution": "512"}, seeds=[1, 2], quiet=True,
                            progress=False)
    page = exp._repr_html_()
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<ins class='genlab-ins'>&lt;i&gt;dawn&lt;/i&gt;</ins>" in page.replace(
        "</ins><ins class='genlab-ins'>", "")
    assert page.count("<div class='genlab-row'>") == 1  # one row per variable set
    assert page.count('genlab-exp-seed"') == 4 and "seed 2" in page
    assert page.count("<img") >= 4
    # The line said before sending, and where the cells stand now: a finished grid does not
    # read as if everything were still to send.
    assert "before the run: 4 cells: no published price" in page
    assert "— now: 4 succeeded</div>" in page
    by_model = exp.show(columns="model")._repr_html_()
    assert "<b>image-d</b>" in by_model and "genlab-diff" in by_model
    written = exp.to_html(tmp_path / "grid.html")
    text = written.read_text()
    assert "src=\"http" not in text and "src='http" not in text and "data:image" in text


def test_a_row_of_videos_plays_in_step(
    client: genlab.Client, history: History
) -> None:
    clip = prompt("A {subject} turning", name="clip", history=history)
    exp = genlab.experiment(client, "clips", prompts=[clip], models=["video-a"],
                            vars={"subject": ["kite"]},
                            params={"duration": 2, "resolution": "480P"}, seeds=[1, 2],
                            quiet=True, progress=False)
    page = exp._repr_html_()
    assert page.count("<video") == 2
    assert page.count("onplay=") == 2 and "closest('tr, .genlab-row')" in page


# --- a killed process ----------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import os, sys, genlab
    from genlab.history import History
    history = History(os.environ["GENLAB_HISTORY"])
    client = genlab.Client(os.environ["BASE_URL"], os.environ["KEY"], history=history,
                           poll_scale=0.05, keep=os.environ["MEDIA"])
    kite = genlab.prompt("A {subject} over {place} at dusk", name="kite", history=history)
    kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
    exp = genlab.experiment(client, "crash-study", prompts=[kite, kite2],
                            models=["image-b", "image-d"],
                            vars={"subject": ["paper kite", "dragon kite"], "place": "dunes"},
                            seeds=[1], concurrency=int(os.environ["CONCURRENCY"]),
                            progress=False)
    print("done", len(exp.task_ids(status="succeeded")), flush=True)
    """
)


def _cells_sent(path: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM experiment_cells "
                                  "WHERE task_id IS NOT NULL").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_process_killed_mid_experiment_is_continued_without_paying_twice(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crash.sqlite"
    clock = PausableClock()
    with emulator.start(api_key=KEY, time_scale=0.02, clock=clock) as server:
        env = {**os.environ, "GENLAB_HISTORY": str(path), "BASE_URL": server.base_url,
               "KEY": KEY, "MEDIA": str(tmp_path / "media"), "CONCURRENCY": "3"}
        child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            # The emulator's clock stands still: the first three cells are accepted and wait.
            deadline = time.monotonic() + 120
            while _cells_sent(path) < 3 and time.monotonic() < deadline:
                assert child.poll() is None, child.stdout.read() if child.stdout else ""
                time.sleep(0.1)
            sent = _cells_sent(path)
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(30)
            if child.stdout is not None:
                child.stdout.close()
        assert child.returncode == -signal.SIGKILL and sent == 3
        assert len(server.ledger()) == 3

        clock.resume()  # the service carries on; the same call runs in a new process
        env["CONCURRENCY"] = "4"
        again = subprocess.run([sys.executable, "-c", CHILD], env=env, text=True,
                               capture_output=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert "8 cells: 3 still running, 5 to send" in again.stdout
        assert again.stdout.strip().endswith("done 8")
        assert len(server.ledger()) == 8  # every cell paid for once

        third = subprocess.run([sys.executable, "-c", CHILD], env=env, text=True,
                               capture_output=True, timeout=300)
        assert "8 cells: 8 done earlier, nothing to send" in third.stdout, third.stderr
        assert len(server.ledger()) == 8
    history = History(path)
    try:
        cells = history.experiment_cells("crash-study")
        assert len(cells) == 8 and len({c["task_id"] for c in cells}) == 8
    finally:
        history.close()


def test_prompt_versions_are_ranked_by_votes_between_their_results(
    client: genlab.Client, history: History
) -> None:
    from genlab.history import RatingEntry

    kite, kite2 = kites(history)
    exp = genlab.experiment(client, "votes", prompts=[kite, kite2], models=["image-d"],
                            vars={"subject": ["paper kite"], "place": "dunes"},
                            params={"resolution": "512"}, seeds=[1, 2, 3], quiet=True,
                            progress=False)
    df = exp.df
    old = df[df["prompt_version"] == 1]["task_id"].tolist()
    new = df[df["prompt_version"] == 2]["task_id"].tolist()
    for left, right in zip(new, old, strict=True):  # people preferred version 2 each time
        history.add_rating(RatingEntry(left, right, "left", left_model="image-d",
                                       right_model="image-d", prompt_address="x"))
    board = exp.leaderboard(seed=0)
    assert board.df.index[0] == "kite@2" and int(board.df.loc["kite@2", "wins"]) == 3
    assert int(board.df.loc["kite@1", "losses"]) == 3
    same = genlab.leaderboard(history, by="prompt_version", experiment="votes", seed=0)
    assert same.df.index.tolist() == ["kite@2", "kite@1"]
    with pytest.raises(ValueError, match="experiment='its name'"):
        genlab.leaderboard(history, by="prompt_version")


def test_a_scorer_is_a_known_name_or_a_function_and_its_trouble_reads_as_missing() -> None:
    from genlab.media.scores import resolve, score

    with pytest.raises(ValueError, match="unknown scorer 'clip'.*scorers=\\[my_score\\]"):
        resolve(["clip"])

    def broken(result: Result) -> float:
        raise RuntimeError("no weights here")

    def text(result: Result) -> Any:
        return "high"

    def another() -> Any:
        def broken(result: Result) -> float:
            return 1.0
        return broken

    with pytest.raises(ValueError, match="two scorers are named 'broken'"):
        resolve([broken, another()])
    result = Result(task_id="t1", status="succeeded")
    assert score(result, resolve([broken, text])) == {"broken": None, "text": None}


def test_rating_an_experiment_pairs_its_versions_blind_and_ranks_them(
    client: genlab.Client, history: History
) -> None:
    from genlab.widgets import Background

    kite, kite2 = kites(history)
    exp = genlab.experiment(client, "blind", prompts=[kite, kite2], models=IMAGES,
                            vars={"subject": ["paper kite", "box kite"], "place": "dunes"},
                            params={"resolution": "512"}, seeds=[1, 2], quiet=True,
                            progress=False)
    cells = exp.df.set_index("task_id")
    try:
        rater = genlab.rate(exp, seed=4)
        assert rater.goal == 8  # 2 models x 2 subjects x 2 seeds: one pair each
        voted = []
        while rater.current is not None:
            pair = rater.current
            left, right = cells.loc[pair.left], cells.loc[pair.right]
            for column in ("model", "subject", "seed"):  # only the version differs
                assert left[column] == right[column]
            assert {int(left["prompt_version"]), int(right["prompt_version"])} == {1, 2}
            shown = rater.header.value + rater.stage.value
            assert "kite@" not in shown and "soaring" not in shown and "at dusk" not in shown
            assert f"place: dunes, subject: {left['subject']}" in rater.header.value
            assert shown.count("<img src=\"data:image/") == 2
            # people prefer version 2, wherever it is shown
            rater.answer("left" if int(left["prompt_version"]) == 2 else "right")
            voted.append((pair.left, pair.right))
        assert len(set(voted)) == 8 and "done: 8 of 8 pairs" in rater.stage.value
    finally:
        Background.shared().shutdown()
    votes = history.ratings()
    assert len(votes) == 8 and set(votes["tag"]) == {"blind"}
    assert not votes["prompt"].str.contains("soaring|at dusk").any()
    board = genlab.leaderboard(history, by="prompt_version", experiment="blind", seed=0)
    table = board.df
    assert table.index.tolist() == ["kite@2", "kite@1"]
    assert int(table.loc["kite@2", "wins"]) == 8 and table.loc["kite@2", "status"] == "ranked"
    assert table.loc["kite@2", "lower"] < table.loc["kite@2", "score"] < \
        table.loc["kite@2", "upper"]
    assert rater.leaderboard is not None and rater.leaderboard.df.index[0] == "kite@2"
    assert "kite@2" in rater.board.value
    with pytest.raises(ValueError, match="rated as prompt versions"):
        genlab.rate(exp, by="model")
    with pytest.raises(ValueError, match=r"give the experiment, genlab.rate\(exp\)"):
        genlab.rate(history, by="prompt_version")


# --- one grid for comparisons and experiments ---------------------------------------------
# The same params mean the same requests in genlab.compare and genlab.experiment; experiments
# run at once on one history each label only their own tasks; a cell's task is recorded as
# the task is accepted; the client never imports IPython (live output is genlab.display's).


def test_the_same_params_make_the_same_requests_in_compare_and_experiment(
    client: genlab.Client, history: History
) -> None:
    params = {"duration": [2, 3], "resolution": "480P"}
    cmp = genlab.compare(client, ["a kite"], ["video-a", "image-b"], params=params,
                         progress=False, quiet=True)
    kite = prompt("a kite", name="plain-kite", history=history)
    exp = genlab.experiment(client, "same-grid", [kite], ["video-a", "image-b"],
                            params=params, seeds=[None], progress=False, quiet=True)
    from_compare = [run.request for run in cmp.runs]
    from_experiment = [cell.request for cell in exp.cells]
    # A list sweeps in both: two video cells (2 s and 3 s at 480P), and one image cell (the
    # image model has no duration; its resolution 480P is not one it takes, in both).
    assert [r.to_body() if r else None for r in from_compare] == \
        [r.to_body() if r else None for r in from_experiment]
    assert [r.model_dump() if r else None for r in from_compare] == \
        [r.model_dump() if r else None for r in from_experiment]
    assert [(r.model, r.values["duration"]) for r in cmp.runs] == \
        [("video-a", 2), ("video-a", 3), ("image-b", None)]
    assert [None if v is pd.NA else v for v in exp.df["duration"]] == [2, 3, None]
    videos = exp.df[exp.df["model"] == "video-a"]
    assert list(videos["status"]) == ["succeeded", "succeeded"]  # no "must be an integer"
    assert list(cmp.df["status"]) == list(exp.df["status"])


def test_experiments_started_at_once_on_one_history_each_label_their_own_tasks(
    client: genlab.Client, history: History
) -> None:
    started = threading.Barrier(2)
    made: dict[str, genlab.Experiment] = {}
    failed: list[BaseException] = []
    kite = prompt("A {colour} kite", name="kite", history=history)

    def one(name: str, colours: list[str]) -> None:
        try:
            started.wait(timeout=30)
            made[name] = genlab.experiment(client, name, [kite], ["image-b", "image-d"],
                                           vars={"colour": colours}, seeds=[1, 2],
                                           progress=False, quiet=True)
        except BaseException as exc:  # shown by the assertion below
            failed.append(exc)

    threads = [threading.Thread(target=one, args=("reds", ["red", "crimson"])),
               threading.Thread(target=one, args=("blues", ["blue", "navy", "teal"]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failed, failed
    rows = history.df()
    tag_of = dict(zip(rows["task_id"], rows["tag"], strict=True))
    for name, colours in (("reds", ["red", "crimson"]), ("blues", ["blue", "navy", "teal"])):
        df = made[name].df
        assert len(df) == len(colours) * 2 * 2
        assert set(df["status"]) == {"succeeded"}
        assert set(df["colour"]) == set(colours)  # only its own cells
        # Each task's prompt is one of its own colours, and its history row has its tag.
        own = {f"A {c} kite" for c in colours}
        assert set(df["prompt"]) == own
        assert {tag_of[t] for t in df["task_id"]} == {name}
    reds, blues = set(made["reds"].df["task_id"]), set(made["blues"].df["task_id"])
    assert not reds & blues
    assert set(rows["tag"].dropna()) == {"reds", "blues"}
    assert len(rows) == len(reds) + len(blues)


def test_history_tag_still_tags_submissions_that_carry_none(
    client: genlab.Client, history: History
) -> None:
    history.tag = "by-hand"
    try:
        task = client.submit(model="image-b", prompt="a kite")
        client.wait(task, progress=False)
        labelled = client.submit(model="image-b", prompt="an owl",
                                 labels=genlab.client.Labels(tag="its-own"))
        client.wait(labelled, progress=False)
    finally:
        history.tag = None
    tags = dict(zip(history.df()["task_id"], history.df()["tag"], strict=True))
    assert tags[task.task_id] == "by-hand"
    assert tags[labelled.task_id] == "its-own"  # what travels on the submission wins


def test_a_cells_task_is_recorded_by_the_journal_with_the_submission(
    client: genlab.Client, history: History
) -> None:
    from genlab.grid import run_cells

    kite = prompt("A {colour} kite", name="kite", history=history)
    cells = genlab.experiments.plan_cells([kite], ["image-b", "image-d"],
                                          {"colour": ["red", "blue"]})
    history.plan_cells("watched", [c.row() for c in cells])
    # The runner writes nothing to the history itself: the cell -> task rows come from the
    # journal's step that records each task's acceptance, from the labels the submission
    # carried.
    ran = run_cells(client, [c.request for c in cells if c.request is not None],
                    progress=False, labels=[genlab.client.Labels(
                        tag="watched", experiment="watched", cell=c.key) for c in cells])
    recorded = {c["cell"]: c["task_id"] for c in history.experiment_cells("watched")}
    assert recorded == {c.key: o.task_id for c, o in zip(cells, ran.outcomes, strict=True)}
    assert all(o.ok for o in ran.outcomes)


def test_a_sweep_of_an_empty_list_says_what_to_give(client: genlab.Client,
                                                    history: History) -> None:
    kite = prompt("a kite", name="k", history=history)
    with pytest.raises(ValueError, match=r"params\['duration'\] is an empty list"):
        genlab.experiment(client, "empty", [kite], ["video-a"], params={"duration": []},
                          progress=False, quiet=True)
    with pytest.raises(ValueError, match=r"params\['duration'\] is an empty list"):
        genlab.compare(client, ["a kite"], ["video-a"], params={"duration": []},
                       progress=False, quiet=True)


def test_importing_the_client_loads_no_ipython_and_no_progress_bar() -> None:
    # A script using the client pays for no notebook machinery; live output is
    # genlab.display's, drawn only in a kernel.
    code = ("import sys, genlab.client; "
            "print(sorted(m for m in ('IPython', 'tqdm', 'ipykernel') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_a_reused_result_is_counted_under_the_tag_of_the_grid_that_reused_it(
    client: genlab.Client, history: History
) -> None:
    request = {"duration": 2, "resolution": "480P"}
    genlab.compare(client, ["a kite"], ["video-a"], request, tag="paid", progress=False,
                   quiet=True)
    again = genlab.compare(client, ["a kite"], ["video-a"], request, tag="reused",
                           progress=False, quiet=True, reuse=True)
    assert list(again.df["reused"]) == [True]
    spend = history.spend(by="tag").set_index("tag")
    assert int(spend.loc["reused", "reused"]) == 1  # under its own tag, not the payer's
    assert int(spend.loc["reused", "credits_saved"]) == int(spend.loc["paid", "credits"])
