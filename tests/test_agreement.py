"""Several raters on one source: pairs shared between raters, gold pairs that catch careless
votes, their agreement measured, judges and scorers checked against people, and leaderboards
that say what the votes support. Driven from code, as a notebook or a script would."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import genlab
from genlab.emulator import samples
from genlab.history import History
from genlab.rating import RatingSession
from genlab.widgets import Background, rate

PROMPTS = 30


@pytest.fixture(autouse=True)
def _no_threads_left() -> Iterator[None]:
    yield
    Background.shared().shutdown()


def versions(folder: Path, prompts: int = PROMPTS) -> pd.DataFrame:
    """Two versions' results for each prompt, saved; which task id sorts first alternates, so
    that a pair's answer by task is not always the same one."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for p in range(prompts):
        for version in ("v1", "v2"):
            task = f"t{p:02d}-{'a' if (version == 'v2') == (p % 2 == 0) else 'b'}"
            path = folder / f"{task}.png"
            path.write_bytes(samples.image(48, 32, f"{p}{version}"))
            rows.append({"task_id": task, "model": version, "prompt": f"prompt {p}",
                         "status": "succeeded", "paths": [str(path)]})
    return pd.DataFrame(rows)


def careful(session: RatingSession) -> str:
    """Prefers version 2; on a gold pair, the better side."""
    pair = session.current
    assert pair is not None
    if pair.gold is not None:
        return pair.gold
    return "left" if pair.left_item.model == "v2" else "right"


def careless(rng: random.Random) -> object:
    def answer(session: RatingSession) -> str:
        pair = session.current
        assert pair is not None
        return "left" if pair.gold is not None else rng.choice(["left", "right", "tie"])
    return answer


def rate_all(runs: pd.DataFrame, history: History, rater: str, choose: object, *,
             seed: int, pairs: int = PROMPTS, overlap: float | None = None,
             gold: float = 0.0) -> RatingSession:
    session = RatingSession(runs, history=history, rater=rater, seed=seed, pairs=pairs,
                            overlap=overlap, gold=gold)
    while session.current is not None:
        session.answer(choose(session))  # type: ignore[operator]
    return session


@pytest.fixture
def three(tmp_path: Path) -> History:
    """Three raters over one source: ana and ben prefer version 2 (and get gold pairs right);
    carl answers at random and says "left" on every gold pair."""
    runs = versions(tmp_path / "media")
    history = History(tmp_path / "h.sqlite")
    rate_all(runs, history, "ana", careful, seed=1, gold=0.2)
    rate_all(runs, history, "ben", careful, seed=2, gold=0.2)
    rate_all(runs, history, "carl", careless(random.Random(3)), seed=3, gold=0.2)
    return history


# --- gold pairs -------------------------------------------------------------------------------


def test_gold_pairs_are_a_share_of_the_pairs_and_their_votes_are_kept_apart(
        three: History) -> None:
    real, gold = three.ratings(), three.ratings(gold=True)
    assert len(real) == 3 * PROMPTS and real["gold"].isna().all()
    # 30 real pairs with gold=0.2: 8 gold pairs each, a fifth of the 38 shown.
    assert gold["rater"].value_counts().to_dict() == {"ana": 8, "ben": 8, "carl": 8}
    assert set(gold["gold"]) <= {"left", "right"}
    # The better side is the result as it is; the other its degraded copy (same model).
    better = gold["left_task"].where(gold["gold"] == "left", gold["right_task"])
    worse = gold["right_task"].where(gold["gold"] == "left", gold["left_task"])
    assert all(w.startswith(f"{b}~") for b, w in zip(better, worse, strict=True))
    assert (gold["left_model"] == gold["right_model"]).all()
    assert len(three.ratings(gold=None)) == 3 * PROMPTS + 24


def test_gold_votes_never_count_in_a_leaderboard(three: History) -> None:
    board = genlab.leaderboard(three)
    assert board.votes == 3 * PROMPTS
    assert int(board.df["comparisons"].sum()) == 2 * 3 * PROMPTS
    every = three.ratings(gold=None)  # a table with gold rows: they are left out too
    assert genlab.leaderboard(every).votes == 3 * PROMPTS


def test_a_gold_pair_looks_like_any_pair_and_says_its_better_side_to_code(
        tmp_path: Path) -> None:
    runs = versions(tmp_path / "media", prompts=4)
    rater = rate(runs, history=History(tmp_path / "h.sqlite"), rater="ana", seed=5,
                 gold=0.5)
    seen_gold = seen_real = 0
    while rater.current is not None:
        pair = rater.current
        page = rater.stage.value
        assert "~" not in page and "gold" not in page.lower()  # nothing gives it away
        if pair.gold is None:
            seen_real += 1
            rater.answer("left")
            continue
        seen_gold += 1
        shown = {pair.left: pair.left_item, pair.right: pair.right_item}
        assert pair.gold in ("left", "right")
        better = pair.left_item if pair.gold == "left" else pair.right_item
        worse = pair.right_item if pair.gold == "left" else pair.left_item
        assert better.degraded is None and worse.degraded in ("frozen", "blur", "black")
        assert set(shown) == {better.task_id, f"{better.task_id}~{worse.degraded}"}
        left, right = rater.session.media(pair)
        assert left.tag == right.tag == "img" and left.uri != right.uri
        rater.answer(pair.gold)
    assert (seen_real, seen_gold) == (4, 4)
    assert rater.session.progress_text == "8 of 8 pairs"


def test_a_gold_vote_can_be_taken_back(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    session = RatingSession(versions(tmp_path / "media", prompts=3), history=history,
                            rater="ana", seed=1, gold=0.5)
    while session.current is not None and session.current.gold is None:
        session.answer("left")
    pair = session.current
    assert pair is not None and pair.gold is not None
    session.answer("right")
    assert len(history.ratings(gold=True)) == 1
    assert session.undo() == pair and history.ratings(gold=True).empty
    session.skip()  # a skipped gold pair: the real pairs still all come
    while session.current is not None:
        session.answer(careful(session))
    assert len(history.ratings()) == 3 and len(history.ratings(gold=True)) == 3


def test_a_rater_picks_up_gold_pairs_where_they_left_off(tmp_path: Path) -> None:
    runs, history = versions(tmp_path / "media", prompts=6), History(tmp_path / "h.sqlite")
    first = RatingSession(runs, history=history, rater="ana", seed=1, gold=0.25)
    for _ in range(4):
        first.answer(careful(first))
    done = first.done
    again = RatingSession(runs, history=history, rater="ana", seed=1, gold=0.25)
    assert again.done == done and again.total == first.total == 8


def test_history_migrate_carries_gold_votes(three: History, tmp_path: Path) -> None:
    source = three.path
    three.close()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("genlab")), "history", "migrate", str(source),
         str(tmp_path / "copy.sqlite")], capture_output=True, text=True, timeout=300,
        check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    before, after = History(source), History(tmp_path / "copy.sqlite")
    columns = ["rating_id", "rater", "answer", "gold"]
    assert after.ratings(gold=True)[columns].equals(before.ratings(gold=True)[columns])
    assert len(after.ratings()) == 3 * PROMPTS  # and gold stays apart from the real votes
    before.close()
    after.close()


# --- several raters on one source -------------------------------------------------------------


def test_overlap_gives_a_rater_that_share_of_pairs_others_voted_on(tmp_path: Path) -> None:
    runs, history = versions(tmp_path / "media", prompts=40), History(tmp_path / "h.sqlite")
    ana = rate_all(runs, history, "ana", careful, seed=1, pairs=10, overlap=0.2)
    ben = rate_all(runs, history, "ben", careful, seed=2, pairs=10, overlap=0.2)
    votes = history.ratings()

    def pairs_of(name: str) -> set[frozenset[str]]:
        mine = votes[votes["rater"] == name]
        return {frozenset(p) for p in zip(mine["left_task"], mine["right_task"], strict=True)}

    assert ana.done == ben.done == 10
    # Two of ben's ten (a fifth) are ana's; the other eight nobody had.
    assert len(pairs_of("ana") & pairs_of("ben")) == 2
    carl = rate_all(runs, history, "carl", careful, seed=3, pairs=10, overlap=0.2)
    votes = history.ratings()
    raters = votes.assign(pair=[frozenset(p) for p in zip(
        votes["left_task"], votes["right_task"], strict=True)]).groupby("pair")["rater"]
    shared = raters.nunique()
    # carl's two overlapping pairs reach a second rater before any pair reaches a third.
    assert carl.done == 10 and (shared <= 2).all() and (shared == 2).sum() == 4


def test_overlap_and_gold_must_be_shares(tmp_path: Path) -> None:
    frame = pd.DataFrame({"task_id": ["t1"], "model": ["a"], "prompt": ["p"]})
    history = History(tmp_path / "h.sqlite")
    with pytest.raises(ValueError, match="gold is a share"):
        RatingSession(frame, history=history, gold=1.0)
    with pytest.raises(ValueError, match="overlap is a share"):
        RatingSession(frame, history=history, overlap=1.5)


# --- agreement --------------------------------------------------------------------------------


def test_a_random_rater_lowers_alpha_and_is_flagged_by_gold_accuracy(three: History) -> None:
    everyone = genlab.agreement(three)
    careful_two = genlab.agreement(three, raters=["ana", "ben"])
    assert careful_two.alpha == pytest.approx(1.0)  # they always agree
    assert everyone.alpha < careful_two.alpha
    assert everyone.pairs == careful_two.pairs == PROMPTS
    low, high = everyone.interval
    assert low <= everyone.alpha <= high < 1.0
    table = everyone.df
    assert list(table.index) == ["ana", "ben", "carl"]
    gold = three.ratings(gold=True, user="carl")
    carl_right = float((gold["gold"] == "left").mean())  # he always says "left"
    assert table.loc["carl", "gold_accuracy"] == pytest.approx(carl_right) and carl_right < 0.8
    assert table.loc["carl", "flagged"].startswith(f"gold accuracy {carl_right:.2f}")
    assert table.loc["ana", "gold_accuracy"] == 1.0 and table.loc["ana", "flagged"] == ""
    assert everyone.flagged == ["carl"]
    assert table.loc["ana", "votes"] == PROMPTS and table.loc["ana", "gold_votes"] == 8
    assert table.loc["ana", "shared_pairs"] == PROMPTS
    assert table.loc["ana", "agreement"] > table.loc["carl", "agreement"]


def test_alpha_and_its_interval_match_a_hand_computation() -> None:
    # Four pairs, three raters; answers by task: A (the first task in sorted order won),
    # B (the second won), N (neither: a tie or both bad).
    #   p1: A A A   p2: A A B   p3: B B N   p4: N N (one rater skipped it)
    shown = [  # (rater, pair, left, right, answer): sides as shown, the first task is "x"
        ("ana", "p1", "x", "y", "left"), ("ben", "p1", "y", "x", "right"),
        ("cy", "p1", "x", "y", "left"),
        ("ana", "p2", "x", "y", "left"), ("ben", "p2", "x", "y", "left"),
        ("cy", "p2", "y", "x", "left"),
        ("ana", "p3", "y", "x", "left"), ("ben", "p3", "x", "y", "right"),
        ("cy", "p3", "x", "y", "tie"),
        ("ana", "p4", "x", "y", "both bad"), ("ben", "p4", "y", "x", "tie"),
    ]
    votes = pd.DataFrame([{"rater": r, "left_task": f"{p}{a}", "right_task": f"{p}{b}",
                           "answer": ans} for r, p, a, b, ans in shown])
    # By hand: values per answer n_A = 5, n_B = 3, n_N = 3, n = 11. Coincidences within an
    # answer, sum over pairs of n_c (n_c - 1) / (m - 1):
    #   p1: 3*2/2 = 3;  p2: 2*1/2 = 1;  p3: 2*1/2 = 1;  p4: 2*1/1 = 2   -> 7
    # Observed disagreement D_o = (n - 7) / n = 4/11; expected
    # D_e = (n^2 - (25 + 9 + 9)) / (n (n - 1)) = 78/110; alpha = 1 - D_o / D_e.
    hand = 1 - (4 / 11) / (78 / 110)
    assert hand == pytest.approx(0.48718, abs=1e-5)
    found = genlab.agreement(votes, rounds=2000, seed=7)
    assert found.alpha == pytest.approx(hand)
    assert found.pairs == 4
    # Observed agreement: agreeing pairs of votes / all pairs of votes, per pair
    #   p1 6/6, p2 2/6, p3 2/6, p4 2/2 -> 12/20.
    assert found.percent == pytest.approx(12 / 20)
    low, high = found.interval
    assert low <= hand <= high


def test_a_judge_is_compared_with_people_by_kappa_and_counts_only_when_asked() -> None:
    rng = np.random.default_rng(4)
    rows = []
    for p in range(40):
        left, right = f"t{p}-a", f"t{p}-b"
        truth = "left" if p % 3 else "right"
        for person in ("ana", "ben"):
            rows.append({"rater": person, "left_task": left, "right_task": right,
                         "left_model": "m1", "right_model": "m2", "answer": truth})
        judged = truth if rng.random() < 0.8 else ("right" if truth == "left" else "left")
        rows.append({"rater": "judge:sharper@1", "left_task": right, "right_task": left,
                     "left_model": "m2", "right_model": "m1",
                     "answer": "right" if judged == "left" else "left"})  # sides swapped
    votes = pd.DataFrame(rows)
    found = genlab.agreement(votes, against="judge:sharper@1")
    matched = (votes[votes["rater"] == "judge:sharper@1"]["answer"].to_numpy()
               != votes[votes["rater"] == "ana"]["answer"].to_numpy()).mean()
    assert found.accuracy == pytest.approx(matched) and found.compared == 80
    assert found.kappa is not None and found.kappa_interval is not None
    assert found.kappa_interval[0] <= found.kappa <= found.kappa_interval[1]
    assert 0.3 < found.kappa < 1.0
    people = genlab.leaderboard(votes)
    assert people.votes == 80  # the judge's votes stay out of people's leaderboard
    assert genlab.leaderboard(votes, raters="judges").votes == 40
    assert genlab.leaderboard(votes, raters=["ana"]).votes == 40
    with pytest.raises(ValueError, match="no votes by 'judge:other@1'"):
        genlab.agreement(votes, against="judge:other@1")


def test_a_score_is_checked_against_people(three: History) -> None:
    votes = three.ratings()
    v2 = set(votes["left_task"].where(votes["left_model"] == "v2", votes["right_task"]))
    tasks = set(votes["left_task"]) | set(votes["right_task"])
    for task in tasks:  # a score that rates version 2 higher
        three.save_scores(task, {"crispness": 2.0 if task in v2 else 1.0})
    found = genlab.agreement(three, against="crispness")
    decisive = votes[votes["answer"].isin(["left", "right"])]
    won_v2 = (decisive["winner"] == "v2").mean()
    assert found.accuracy == pytest.approx(won_v2) and found.compared == len(decisive)
    assert found.accuracy_interval is not None
    assert found.accuracy_interval[0] <= found.accuracy <= found.accuracy_interval[1]
    with pytest.raises(ValueError, match="no pair voted on has two different 'nothing'"):
        genlab.agreement(three, against="nothing")


def test_agreement_draws_itself_as_a_table(three: History) -> None:
    page = genlab.agreement(three)._repr_html_()
    assert page.count("<tr>") == 4 and "carl" in page and "gold accuracy 0." in page
    assert "Krippendorff" in page and "var(--jp-" in page


# --- leaderboards that say what the votes support ---------------------------------------------


def test_min_gold_accuracy_drops_a_careless_raters_votes_and_says_so(three: History) -> None:
    every = genlab.leaderboard(three)
    kept = genlab.leaderboard(three, min_gold_accuracy=0.8)
    assert every.votes == 3 * PROMPTS and kept.votes == 2 * PROMPTS
    assert len(kept.notes) == 1 and kept.notes[0].startswith(f"left out {PROMPTS} votes of carl")
    assert "Left out 30 votes of carl" in kept._repr_html_()
    # Without carl's random votes, version 2 won every vote.
    assert kept.df.loc["v2", "wins"] == 2 * PROMPTS and kept.df.loc["v1", "wins"] == 0
    assert every.notes == ()


def test_overlapping_intervals_share_a_rank() -> None:
    rows = ([("a", "b", "left")] * 20 + [("a", "b", "right")] * 19
            + [("a", "c", "left")] * 40 + [("b", "c", "left")] * 40)
    votes = pd.DataFrame(rows, columns=["left_model", "right_model", "answer"])
    board = genlab.leaderboard(votes, rounds=300)
    table = board.df
    assert table["rank"].tolist() == [1, 2, 3]
    assert table.loc["a", "lower"] < table.loc["b", "upper"]  # a and b overlap
    assert table.loc["c", "upper"] < table.loc["b", "lower"]  # c is clearly last
    assert table["rank_ub"].tolist() == [1, 1, 3]


# --- how a gold pair's copy is made worse -----------------------------------------------------


@pytest.mark.parametrize("how", ["frozen", "blur", "black"])
def test_a_video_is_degraded_here_into_a_playable_worse_copy(how: str) -> None:
    import av

    from genlab.media import sniff
    from genlab.media.degrade import degrade

    original = samples.video(64, 64, 1.0)
    worse = degrade(original, how)  # type: ignore[arg-type]
    found = sniff(worse[:64])
    assert found is not None and found.mime == "video/mp4"

    def frames(data: bytes) -> list[np.ndarray]:
        import io
        with av.open(io.BytesIO(data)) as container:
            return [f.to_ndarray(format="gray").astype(float) for f in container.decode(video=0)]

    before, after = frames(original), frames(worse)
    assert len(after) == len(before)
    middle = after[len(after) // 2]
    if how == "frozen":  # every frame is the first one
        assert max(float(np.abs(f - after[0]).mean()) for f in after) < 2.0
    elif how == "black":
        assert middle.mean() < 20 and after[0].mean() > middle.mean()
    else:  # blurred: far less fine detail than the original frame
        # Fine detail is the second difference (a blur leaves a smooth gradient's first
        # difference as it was, and the test picture is mostly gradients); measured over the
        # decoded frames, it keeps the encoder's own noise, about a third of the original's.
        def detail(f: np.ndarray) -> float:
            return float(np.abs(np.diff(f, n=2, axis=0)).mean()
                         + np.abs(np.diff(f, n=2, axis=1)).mean())
        assert detail(middle) < 0.5 * detail(before[len(before) // 2])


def test_min_gold_accuracy_needs_the_gold_votes() -> None:
    votes = pd.DataFrame({"left_model": ["a"], "right_model": ["b"], "answer": ["left"],
                          "rater": ["ana"]})
    with pytest.raises(ValueError, match="min_gold_accuracy needs the gold votes"):
        genlab.leaderboard(votes, min_gold_accuracy=0.8)
