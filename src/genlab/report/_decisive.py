"""The decisive pairs a report shows: votes that settled the order where it was closest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from genlab.report._leaderboard import Leaderboard


def decisive_pairs(
    ratings: pd.DataFrame, board: Leaderboard, limit: int = 4
) -> pd.DataFrame:
    """A few votes that decided the order: one side preferred, between models next to each
    other in the ranking (where it was closest), one vote per pair of models, newest first.

    Args:
        ratings: votes with ``left_task``, ``right_task``, ``left_model``, ``right_model`` and
            ``answer`` (``history.ratings()``).
        board: their :func:`leaderboard` by model.
        limit: how many at most.

    Example:
        >>> import pandas as pd
        >>> from genlab.report import leaderboard
        >>> votes = pd.DataFrame({"left_task": ["t1", "t3"], "right_task": ["t2", "t4"],
        ...     "left_model": ["a", "b"], "right_model": ["b", "c"], "answer": ["left", "tie"]})
        >>> decisive_pairs(votes, leaderboard(votes, rounds=10))["winner"].tolist()
        ['a']
    """
    if ratings.empty or "left_task" not in ratings.columns or board.df.empty:
        return ratings.iloc[:0]
    decided = ratings[ratings["answer"].isin(["left", "right"])].copy()
    if decided.empty:
        return decided
    rank: dict[Any, float] = {}
    if board.by == ("model",):
        rank = {m: float(r) for m, r in board.df["rank"].dropna().items()}
    left_wins = decided["answer"] == "left"
    decided["winner"] = decided["left_model"].where(left_wins, decided["right_model"])
    decided["loser"] = decided["right_model"].where(left_wins, decided["left_model"])
    decided["gap"] = [abs(rank.get(w, np.inf) - rank.get(w2, np.inf))
                      if w in rank and w2 in rank else np.inf
                      for w, w2 in zip(decided["winner"], decided["loser"], strict=True)]
    decided["pair"] = [tuple(sorted((str(a), str(b))))
                       for a, b in zip(decided["winner"], decided["loser"], strict=True)]
    decided = decided.iloc[::-1]  # newest first among equals
    decided = decided.sort_values("gap", kind="stable").drop_duplicates("pair")
    return decided.head(limit).drop(columns=["gap", "pair"])
