"""Leaderboards from votes: the fit finds known strengths, its intervals cover them, and what
cannot be ranked is said to be so.

The statistical tests simulate votes from known strengths (five models, 2,000 votes with ties,
100 times, seeded) and check what a person reads off the board: the order, and whether the
true strength lies inside each interval. Ties are drawn the way the fit counts them: a tie is
half a win, so a pair's expected share of the votes is the Bradley-Terry chance of the first
being preferred; ties are likelier the closer the pair.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import genlab
from genlab.report import (
    ELO_SCALE,
    Leaderboard,
    leaderboard,
    leaderboard_html,
    plot_leaderboard,
)
from genlab.report import plot_win_rates as heat

MODELS = ["m1", "m2", "m3", "m4", "m5"]
TRUE = np.array([-0.9, -0.4, 0.0, 0.5, 0.8])  # logits; centred below
SIMULATIONS = 100
VOTES = 2_000


def simulate(rng: np.random.Generator, theta: np.ndarray, votes: int,
             tie_rate: float = 0.3) -> pd.DataFrame:
    """Votes between random pairs: left preferred with P = sigmoid(difference) - ties / 2."""
    size = len(theta)
    left = rng.integers(0, size, votes)
    right = (left + rng.integers(1, size, votes)) % size
    p = 1.0 / (1.0 + np.exp(theta[right] - theta[left]))
    tie = tie_rate * (1.0 - np.abs(2 * p - 1))
    u = rng.random(votes)
    answer = np.where(u < p - tie / 2, "left", np.where(u < p + tie / 2, "tie", "right"))
    bad = (answer == "tie") & (rng.random(votes) < 0.3)  # some ties are "both bad"
    answer = np.where(bad, "both bad", answer)
    names = np.array([f"m{i + 1}" for i in range(size)])
    return pd.DataFrame({"left_model": names[left], "right_model": names[right],
                         "answer": answer})


@pytest.fixture(scope="module")
def simulated() -> list[tuple[pd.DataFrame, Leaderboard]]:
    rng = np.random.default_rng(20261126)
    runs = []
    for seed in range(SIMULATIONS):
        votes = simulate(rng, TRUE, VOTES)
        runs.append((votes, leaderboard(votes, seed=seed)))
    return runs


def _true_scores() -> pd.Series:
    centred = TRUE - TRUE.mean()
    return pd.Series(1000 + ELO_SCALE * centred, index=MODELS)


def test_the_fitted_order_is_the_true_order(
    simulated: list[tuple[pd.DataFrame, Leaderboard]],
) -> None:
    expected = list(reversed(MODELS))  # m5 is strongest
    wrong = [i for i, (_, board) in enumerate(simulated) if list(board.df.index) != expected]
    assert wrong == []


def test_the_true_strengths_lie_inside_the_intervals(
    simulated: list[tuple[pd.DataFrame, Leaderboard]],
) -> None:
    truth = _true_scores()
    inside = pd.DataFrame([
        ((table["lower"] <= truth[table.index]) & (truth[table.index] <= table["upper"]))
        .astype(bool).reindex(MODELS)
        for table in [board.df for _, board in simulated]
    ])
    per_model = inside.mean()
    # Each model's true strength inside its 95 % interval in at least 90 of 100 runs...
    assert (per_model >= 0.90).all(), per_model.to_dict()
    # ...and not because the intervals are uselessly wide: overall not far above 95 %.
    assert inside.to_numpy().mean() <= 0.99, per_model.to_dict()


def test_the_coverage_check_fails_intervals_too_narrow(
    simulated: list[tuple[pd.DataFrame, Leaderboard]],
) -> None:
    # The same check on intervals a third as wide (about a 40 % interval) must fail: the
    # test above can.
    truth = _true_scores()
    inside = []
    for _, board in simulated:
        score = board.df["score"].astype(float)
        low = score - (score - board.df["lower"].astype(float)) / 3
        high = score + (board.df["upper"].astype(float) - score) / 3
        inside.append(((low <= truth[board.df.index]) & (truth[board.df.index] <= high)).mean())
    assert np.mean(inside) < 0.90


def test_counts_add_up_and_ties_count_half(
    simulated: list[tuple[pd.DataFrame, Leaderboard]],
) -> None:
    votes, board = simulated[0]
    table = board.df
    assert table["comparisons"].sum() == 2 * VOTES
    assert table["wins"].sum() == table["losses"].sum()
    tied = votes["answer"].isin(["tie", "both bad"]).sum()
    assert table["ties"].sum() + table["both_bad"].sum() == 2 * tied
    expected = (table["wins"] + (table["ties"] + table["both_bad"]) / 2) / table["comparisons"]
    assert np.allclose(table["win_rate"].astype(float), expected.astype(float))
    assert (table["status"] == "ranked").all() and table["rank"].tolist() == [1, 2, 3, 4, 5]
    # The matrix: row's share against column's, the two shares of a pair adding up to one.
    matrix = board.matrix.to_numpy(dtype=float)
    off = ~np.eye(len(matrix), dtype=bool)
    assert np.allclose((matrix + matrix.T)[off], 1.0) and np.isnan(matrix[~off]).all()
    assert board.matrix.loc["m5", "m1"] > 0.5


def test_a_model_never_compared_is_unrated_not_ranked() -> None:
    votes = simulate(np.random.default_rng(3), TRUE[:4], 400)
    board = leaderboard(votes, models=[*MODELS[:4], "never"])
    row = board.df.loc["never"]
    assert row["status"] == "unrated" and pd.isna(row["rank"]) and pd.isna(row["score"])
    assert pd.isna(row["lower"]) and row["comparisons"] == 0
    assert board.df.index[-1] == "never"  # listed after the ranked ones
    assert board.df["rank"].dropna().tolist() == [1, 2, 3, 4]
    assert board.matrix.loc["never"].isna().all()


def test_models_whose_votes_do_not_connect_to_the_others_are_not_ranked() -> None:
    votes = pd.DataFrame({
        "left_model": ["a", "b", "a", "c", "d"],
        "right_model": ["b", "c", "c", "a", "e"],
        "answer": ["left", "left", "right", "tie", "left"],
    })
    board = leaderboard(votes, rounds=20)
    assert set(board.df.loc[board.df["status"] == "ranked"].index) == {"a", "b", "c"}
    assert board.df.loc[["d", "e"], "status"].tolist() == ["not connected"] * 2
    assert board.df.loc[["d", "e"], "rank"].isna().all()
    assert board.df.loc["d", "wins"] == 1


def test_a_clean_sweep_has_a_finite_score_and_an_interval_around_it() -> None:
    votes = pd.DataFrame({"left_model": ["a", "a"], "right_model": ["b", "b"],
                          "answer": ["left", "left"]})
    board = leaderboard(votes)
    table = board.df
    assert np.isfinite(table["score"].astype(float)).all()
    assert (table["lower"] < table["score"]).all() and (table["score"] < table["upper"]).all()


def test_a_board_per_model_and_setting_and_per_prompt() -> None:
    settings = [json.dumps({"duration": d}) for d in (4, 8, 4, 8)]
    votes = pd.DataFrame({
        "left_model": ["a", "a", "b", "a"], "right_model": ["b", "a", "a", "b"],
        "left_settings": settings, "right_settings": settings[::-1],
        "prompt": ["fox", "fox", "kite", "kite"],
        "answer": ["left", "right", "tie", "left"],
    })
    by_setting = leaderboard(votes, by=["model", "duration"], rounds=20)
    assert by_setting.df.index.names == ["model", "duration"]
    assert ("a", 4) in by_setting.df.index and ("a", 8) in by_setting.df.index
    per_prompt = leaderboard(votes, by=["prompt", "model"], rounds=20)
    assert per_prompt.df.index.names == ["prompt", "model"]
    assert set(per_prompt.df.index.get_level_values("prompt")) == {"fox", "kite"}
    assert per_prompt.df.loc[("fox", "a"), "comparisons"] == 1  # a met itself: not a vote here
    with pytest.raises(ValueError, match="names no competitor"):
        leaderboard(votes, by="prompt")


def test_the_board_shows_as_a_table_with_intervals_and_escapes_names() -> None:
    votes = pd.DataFrame({"left_model": ["<img src=x onerror=alert(1)>", "b"],
                          "right_model": ["b", "c"], "answer": ["left", "right"]})
    board = leaderboard(votes, models=["<img src=x onerror=alert(1)>", "b", "c", "$d$"],
                        rounds=20)
    page = board._repr_html_()
    assert page is not None and page == leaderboard_html(board)
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert page.count('class="genlab-interval"') == 3  # the unrated one has none
    assert "unrated" in page
    for figure in (plot_leaderboard(board), heat(board), board.chart(), board.heatmap()):
        assert figure._repr_png_().startswith(b"\x89PNG")  # type: ignore[attr-defined]


def test_an_unknown_answer_is_refused() -> None:
    votes = pd.DataFrame({"left_model": ["a"], "right_model": ["b"], "answer": ["meh"]})
    with pytest.raises(ValueError, match="unknown answer"):
        leaderboard(votes)


def test_no_votes_make_an_empty_board_that_lists_the_models() -> None:
    empty = pd.DataFrame({"left_model": [], "right_model": [], "answer": []})
    board = leaderboard(empty, models=["a", "b"])
    assert board.df["status"].tolist() == ["unrated", "unrated"] and board.votes == 0
    assert "No votes" not in leaderboard_html(board)  # the rows say unrated
    assert genlab.leaderboard is leaderboard


def test_a_board_reads_as_its_table_though_it_is_no_dataframe(
    simulated: list[tuple[pd.DataFrame, Leaderboard]],
) -> None:
    """Notebooks written when a board was a DataFrame still read it: columns, rows, length,
    export; changing it goes through a copy (``to_pandas``)."""
    _, board = simulated[0]
    assert not isinstance(board, pd.DataFrame)
    assert board["score"].equals(board.df["score"]) and len(board) == len(board.df)
    assert board.loc["m5", "rank"] == 1 and list(board) == list(board.df.columns)
    assert board.to_csv() == board.df.to_csv()
    copy = board.to_pandas()
    copy.loc["m5", "score"] = -1.0
    assert board.df.loc["m5", "score"] != -1.0
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        board.nonsense  # noqa: B018
