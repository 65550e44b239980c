"""Charts of a leaderboard: scores with their intervals, and the win-rate matrix as a heat map.

Both are made without pyplot (no window, no GUI backend, never shown twice) and display
themselves as PNGs when a cell returns them, like :func:`genlab.report.plot_summary`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from genlab.report._charts import _figure_class, _label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from genlab.report._leaderboard import Leaderboard

_BAR = "#4c72b0"
_UNRATED = "#8c8c8c"


def _labels(index: pd.Index) -> list[str]:
    return [_label(key) for key in index]


def plot_leaderboard(board: Leaderboard) -> Figure:
    """Each competitor's score as a dot with its interval as a line, best at the top; those
    not ranked (unrated, not connected) are named below, without a score.

    Example:
        board = genlab.leaderboard(history)
        plot_leaderboard(board).savefig("leaderboard.png")

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"left_model": ["video-a", "video-a", "video-b"],
        ...                       "right_model": ["video-b", "video-c", "video-c"],
        ...                       "answer": ["left", "left", "tie"]})
        >>> from genlab.report import leaderboard
        >>> figure = plot_leaderboard(leaderboard(votes))
        >>> len(figure.axes)
        1
    """
    table = board.df
    labels = _labels(table.index)
    count = len(labels)
    fig = _figure_class()(figsize=(7.0, 1.2 + 0.42 * max(count, 1)), layout="constrained")
    ax = fig.subplots()
    y = np.arange(count)[::-1]
    score = table["score"].to_numpy(dtype="float64", na_value=np.nan)
    lower = table["lower"].to_numpy(dtype="float64", na_value=np.nan)
    upper = table["upper"].to_numpy(dtype="float64", na_value=np.nan)
    rated = ~np.isnan(score)
    if rated.any():
        ax.errorbar(
            score[rated], y[rated],
            # A percentile interval may, rarely, sit just beside its score: drawn to the dot.
            xerr=[np.clip(score[rated] - lower[rated], 0, None),
                  np.clip(upper[rated] - score[rated], 0, None)],
            fmt="o", color=_BAR, ecolor=_BAR, elinewidth=2.5, capsize=4, markersize=7,
        )
        ax.axvline(1000.0, color="#999", linewidth=0.8, linestyle=":")
        low, high = float(np.nanmin(lower)), float(np.nanmax(upper))
        pad = max(20.0, 0.08 * (high - low))
        ax.set_xlim(low - pad, high + pad)
        centre = (low + high) / 2
    else:
        ax.set_xlim(900, 1100)
        centre = 1000.0
    statuses = table["status"].astype(str).tolist()
    for row in np.flatnonzero(~rated):
        ax.text(centre, y[row], statuses[row], ha="center", va="center", fontsize=9,
                color=_UNRATED, style="italic")
    ax.set_yticks(y, labels, fontsize=9)
    ax.set_ylim(-0.7, count - 0.3)
    ax.set_title(f"Bradley-Terry scores, {board.level:.0%} intervals from {board.votes:,} votes",
                 fontsize=10)
    ax.set_xlabel("score (Elo-like: +400 is ten-to-one odds of being preferred)", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    if not count:
        ax.text(0.5, 0.5, "no votes yet", transform=ax.transAxes, ha="center")
    return fig


def plot_win_rates(board: Leaderboard) -> Figure:
    """The win-rate matrix: the share of votes the row's competitor won against the column's
    (ties as half), as a heat map with each share written in its cell; blank where the two
    never met.

    Example:
        plot_win_rates(genlab.leaderboard(history)).savefig("win-rates.png")

    Example:
        >>> import pandas as pd
        >>> votes = pd.DataFrame({"left_model": ["video-a", "video-a", "video-b"],
        ...                       "right_model": ["video-b", "video-c", "video-c"],
        ...                       "answer": ["left", "left", "tie"]})
        >>> from genlab.report import leaderboard
        >>> len(plot_win_rates(leaderboard(votes)).axes) >= 1
        True
    """
    matrix = board.matrix
    values = matrix.to_numpy(dtype="float64", na_value=np.nan)
    rows, cols = _labels(matrix.index), _labels(matrix.columns)
    side = 1.6 + 0.62 * max(len(cols), 1)
    fig = _figure_class()(figsize=(side + 1.4, 1.2 + 0.5 * max(len(rows), 1)),
                          layout="constrained")
    ax = fig.subplots()
    if values.size:
        shown = np.ma.masked_invalid(values)
        image = ax.imshow(shown, cmap="RdBu", vmin=0.0, vmax=1.0, aspect="auto")
        fig.colorbar(image, ax=ax, fraction=0.05, label="share won (ties as half)")
        for (i, j), value in np.ndenumerate(values):
            if np.isnan(value):
                continue
            colour = "white" if abs(value - 0.5) > 0.3 else "black"
            ax.text(j, i, f"{value:.0%}", ha="center", va="center", fontsize=8, color=colour)
        ax.set_xticks(np.arange(len(cols)), cols, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(np.arange(len(rows)), rows, fontsize=8)
    else:
        ax.text(0.5, 0.5, "no votes yet", transform=ax.transAxes, ha="center")
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_title("Share of votes won: row against column", fontsize=10)
    return fig
