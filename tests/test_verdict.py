"""A verdict on two prompt versions as a team reads it: better when people prefer the
candidate in most paired cells, undecided on an A/A experiment, a scorer's median change, and
``genlab gate`` exiting 1 only when the candidate is worse (run as a CI step runs it)."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import genlab
from genlab import emulator
from genlab.experiments import Experiment, prompt
from genlab.history import History, RatingEntry
from genlab.media import Result

KEY = "verdict-test-key-91ad"
ROOT = Path(__file__).resolve().parent.parent


def words(result: Result) -> float:
    """A scorer: the prompt's words (version 2 adds three)."""
    return float(len((result.prompt or "").split()))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Experiment]]:
    """An experiment of two versions, 2 models x 2 subjects x 3 seeds (12 paired cells),
    scored by ``words``, kept in a history file no test writes to."""
    folder = tmp_path_factory.mktemp("verdict")
    history = History(folder / "made.sqlite")
    with emulator.start(api_key=KEY, time_scale=0.02) as server, \
            genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                          wait_timeout=120, keep=folder / "media") as client:
        kite = prompt("A {subject} over {place} at dusk", name="kite", history=history)
        kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
        exp = genlab.experiment(client, "kites", prompts=[kite, kite2],
                                models=["image-b", "image-d"],
                                vars={"subject": ["paper kite", "box kite"], "place": "dunes"},
                                params={"resolution": "512"} , seeds=[1, 2, 3],
                                scorers=[words], quiet=True, progress=False)
        assert set(exp.df["status"]) == {"succeeded"}
    yield folder / "made.sqlite", exp
    history.close()


@pytest.fixture
def fresh(made: tuple[Path, Experiment], tmp_path: Path) -> Iterator[tuple[Path, Experiment]]:
    """A copy of the made history (votes added here stay here), and the experiment on it."""
    source, exp = made
    copy = tmp_path / "history.sqlite"
    with sqlite3.connect(source) as old, sqlite3.connect(copy) as new:
        old.backup(new)
    history = History(copy)
    yield copy, Experiment(exp.name, history, exp.cells, exp.scorers)
    history.close()


def pairs(exp: Experiment) -> list[tuple[str, str]]:
    """(version 1 task, version 2 task) of each model, subject and seed."""
    df = exp.df
    key = ["model", "subject", "seed"]
    one = df[df["prompt_version"] == 1].set_index(key)["task_id"]
    two = df[df["prompt_version"] == 2].set_index(key)["task_id"]
    return [(str(one[k]), str(two[k])) for k in one.index]


def vote(history: History, left: str, right: str, answer: str, rater: str) -> None:
    history.add_rating(RatingEntry(left, right, answer,  # type: ignore[arg-type]
                                   left_model="image-b", right_model="image-b",
                                   prompt_address="x", rater=rater))


def prefer_version_2(exp: Experiment, rater: str = "ana", against: int = 1) -> None:
    """People prefer version 2 in every paired cell but ``against`` (shown either side), with
    a tie and a "both bad" on top that change nothing."""
    for i, (old, new) in enumerate(pairs(exp)):
        won = i >= against
        if i % 2:
            vote(exp.history, new, old, "left" if won else "right", rater)
        else:
            vote(exp.history, old, new, "right" if won else "left", rater)
    old, new = pairs(exp)[-1]
    vote(exp.history, old, new, "tie", "ben")
    vote(exp.history, new, old, "both bad", "ben")


def test_people_preferring_the_candidate_in_most_cells_make_it_better(
    fresh: tuple[Path, Experiment]
) -> None:
    _, exp = fresh
    prefer_version_2(exp)
    found = exp.verdict("kite@1", "kite@2")
    assert found.outcome == "better"
    assert found.n == 12 and found.counts["candidate"] == 11  # ties, both bad: no side
    assert found.effect == pytest.approx(11 / 12)
    assert 0.5 < found.interval[0] < found.effect < found.interval[1] <= 1
    assert found.counts["votes"] == 14
    assert "people preferred kite@2 in 11 of 12 paired cells" in str(found)
    # The other way round, the candidate is worse; by number and alias too.
    assert exp.verdict("kite@2", "kite@1").outcome == "worse"
    assert exp.verdict(2, 1).outcome == "worse"
    html = found._repr_html_()
    assert "better" in html and "kite@2" in html and "paired cells" in html
    # A stricter alpha asks for more: 11 of 12 is not enough at 0.001.
    assert exp.verdict("kite@1", "kite@2", alpha=0.001).outcome == "undecided"


def test_an_a_a_experiment_is_undecided(fresh: tuple[Path, Experiment]) -> None:
    """Two versions people cannot tell apart: each answers by a coin; and a scorer that
    gives both versions the same."""
    _, exp = fresh
    coin = random.Random(7)
    for rater in ("ana", "ben", "cy"):
        for old, new in pairs(exp):
            vote(exp.history, old, new, coin.choice(["left", "right", "tie"]), rater)
    found = exp.verdict("kite@1", "kite@2")
    assert found.outcome == "undecided"
    assert found.interval[0] < 0.5 < found.interval[1]
    # A/A on a score: each version against itself.
    same = exp.verdict("kite@1", "kite@1", metric="words")
    assert (same.outcome, same.effect, same.n) == ("undecided", 0.0, 12)
    nothing = exp.verdict("kite@1", "kite@1")
    assert (nothing.outcome, nothing.n) == ("undecided", 0)


def test_a_scorer_verdict_is_the_median_change_with_its_interval(
    fresh: tuple[Path, Experiment]
) -> None:
    _, exp = fresh
    found = exp.verdict("kite@1", "kite@2", metric="words")
    assert (found.outcome, found.effect, found.n, found.interval) == ("better", 3.0, 12,
                                                                      (3.0, 3.0))
    assert "median words change +3 over 12 paired cells" in str(found)
    assert exp.verdict("kite@1", "kite@2", metric="words",
                       higher_is_better=False).outcome == "worse"
    with pytest.raises(ValueError, match="no 'sharpness' scores.*words"):
        exp.verdict("kite@1", "kite@2", metric="sharpness")
    with pytest.raises(LookupError, match="matches none"):
        exp.verdict("kite@1", "kite@7")


def gate(history: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "genlab", "gate", str(history), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_gate_exits_1_only_when_the_candidate_is_worse(fresh: tuple[Path, Experiment]) -> None:
    path, exp = fresh
    prefer_version_2(exp)
    for judge in pairs(exp):  # a judge's votes against version 2 do not count for people
        vote(exp.history, judge[0], judge[1], "left", "judge:contrary@1")
    better = gate(path, "--experiment", "kites", "--baseline", "kite@1", "--candidate", "kite@2")
    assert better.returncode == 0, better.stderr
    assert better.stdout.startswith("kite@2 against kite@1: better: people preferred kite@2 "
                                    "in 11 of 12 paired cells")
    worse = gate(path, "--experiment", "kites", "--baseline", "kite@2", "--candidate", "kite@1")
    assert worse.returncode == 1, worse.stderr
    assert "kite@1 against kite@2: worse" in worse.stdout
    scored = gate(path, "--experiment", "kites", "--baseline", "kite@2", "--candidate",
                  "kite@1", "--metric", "words", "--alpha", "0.01")
    assert scored.returncode == 1 and "median words change -3" in scored.stdout
    undecided = gate(path, "--experiment", "kites", "--baseline", "kite@1", "--candidate",
                     "kite@1")
    assert undecided.returncode == 0 and ": undecided:" in undecided.stdout


@pytest.mark.parametrize(("args", "said"), [
    (["--experiment", "nope", "--baseline", "kite@1", "--candidate", "kite@2"],
     "no experiment 'nope' in"),
    (["--experiment", "kites", "--baseline", "kite@1", "--candidate", "kite@9"],
     "'kite@9' matches none of this experiment's versions (kite@1, kite@2)"),
    (["--experiment", "kites", "--baseline", "kite@1", "--candidate", "kite@2",
      "--metric", "clip"], "has no 'clip' scores"),
    (["--experiment", "kites", "--baseline", "kite@1", "--candidate", "kite@2",
      "--alpha", "2"], "alpha must be between 0 and 1"),
    (["--experiment", "kites", "--baseline", "kite@1"], "the following arguments are required: "
     "--candidate"),
])
def test_gate_usage_errors_exit_2_with_a_clear_message(
    fresh: tuple[Path, Experiment], args: list[str], said: str
) -> None:
    path, _ = fresh
    done = gate(path, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_gate_on_a_history_that_is_not_there_exits_2(tmp_path: Path) -> None:
    done = gate(tmp_path / "missing.sqlite", "--experiment", "kites", "--baseline", "kite@1",
                "--candidate", "kite@2")
    assert done.returncode == 2 and "no history at" in done.stderr
    assert not (tmp_path / "missing.sqlite").exists()  # a typo makes no empty history
