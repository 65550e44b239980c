"""A leaderboard as HTML: a table with each interval drawn, and a report's section (the table,
the charts, a few decisive pairs with their media).

Interval bars are plain HTML and CSS (no script, no image), so they show in a widget, a cell's
output and a saved report alike; colours follow JupyterLab's theme (:mod:`genlab.display`).
Every name and prompt is escaped.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from genlab.client import data_uri
from genlab.display import ACTIVE, BORDER, MUTED, ON_BADGE, SHADE, SUCCESS, TEXT, escape
from genlab.media.card import MEDIA_CSS, tile_html
from genlab.report._charts import figure_png
from genlab.report._decisive import decisive_pairs
from genlab.report._leaderboard_charts import plot_leaderboard, plot_win_rates
from genlab.report._media import MediaReader, is_missing, original_html

if TYPE_CHECKING:
    from genlab.report._leaderboard import Leaderboard

BOARD_CSS = f"""
.genlab-board {{ color: {TEXT}; }}
.genlab-board {{ max-width: 100%; }}
.genlab-board table.genlab-board-table {{ border-collapse: collapse; margin: 4px 0; }}
.genlab-board .genlab-board-table th, .genlab-board .genlab-board-table td {{
  border-bottom: 1px solid {BORDER}; padding: 3px 6px; text-align: right;
  white-space: nowrap; }}
.genlab-board .genlab-board-table th {{ background: {SHADE}; font-weight: 600;
  white-space: normal; vertical-align: bottom; }}
.genlab-board .genlab-board-table .name {{ text-align: left; white-space: normal;
  overflow-wrap: anywhere; }}
.genlab-board .genlab-board-table .unrated td {{ color: {MUTED}; font-style: italic; }}
.genlab-board .genlab-board-table .range-text {{ display: block; color: {MUTED};
  font-size: 0.8em; font-weight: normal; }}
.genlab-board .genlab-interval {{ position: relative; width: 100px; height: 14px; }}
.genlab-board .genlab-interval .range {{ position: absolute; top: 5px; height: 4px;
  background: {ACTIVE}; opacity: 0.55; border-radius: 2px; }}
.genlab-board .genlab-interval .dot {{ position: absolute; top: 2px; width: 10px;
  height: 10px; margin-left: -5px; border-radius: 50%; background: {ACTIVE}; }}
.genlab-board .genlab-interval .mid {{ position: absolute; top: 0; bottom: 0; width: 0;
  border-left: 1px dotted {MUTED}; }}
.genlab-board .genlab-board-note {{ color: {MUTED}; font-size: 0.85em; max-width: 40em;
  overflow-wrap: anywhere; }}
"""

_PAIRS_CSS = f"""
.genlab-decisive {{ display: flex; flex-wrap: wrap; gap: 16px; }}
.genlab-decisive .pair {{ border: 1px solid {BORDER}; padding: 8px; max-width: 680px; }}
.genlab-decisive .sides {{ display: flex; gap: 8px; }}
.genlab-decisive .side {{ width: 280px; }}
.genlab-decisive .who {{ font-size: 0.9em; margin-top: 2px; }}
.genlab-decisive .preferred {{ background: {SUCCESS}; color: {ON_BADGE}; border-radius: 3px;
  padding: 0 5px; font-size: 0.8em; margin-left: 4px; }}
.genlab-decisive .prompt {{ color: {MUTED}; font-size: 0.85em; margin-bottom: 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; }}
"""


def _name(key: Any) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " · ".join("–" if is_missing(p) else escape(p) for p in parts)


def _bar(score: float, low: float, high: float, span: tuple[float, float]) -> str:
    left, right = span
    width = right - left

    def at(value: float) -> float:
        return min(100.0, max(0.0, (value - left) / width * 100))

    mid = ""
    if left < 1000.0 < right:  # the average, for scale
        mid = f'<span class="mid" style="left:{at(1000):.1f}%"></span>'
    return (
        f'<div class="genlab-interval" title="{low:.0f} to {high:.0f}">{mid}'
        f'<span class="range" style="left:{at(low):.1f}%;width:{at(high) - at(low):.1f}%"></span>'
        f'<span class="dot" style="left:{at(score):.1f}%"></span></div>'
    )


def leaderboard_html(board: Leaderboard, *, note: str | None = None) -> str:
    """A :func:`~genlab.report.leaderboard` as an HTML table, its intervals drawn as bars.

    Example:
        >>> import pandas as pd
        >>> from genlab.report import leaderboard
        >>> votes = pd.DataFrame({"left_model": ["<b>x</b>"], "right_model": ["y"],
        ...                       "answer": ["left"]})
        >>> page = leaderboard_html(leaderboard(votes, rounds=10))
        >>> "&lt;b&gt;x&lt;/b&gt;" in page, page.count('class="genlab-interval"')
        (True, 2)
    """
    table, level = board.df, float(board.level)
    names = [str(n) for n in table.index.names]
    lower = table["lower"].to_numpy(dtype="float64", na_value=np.nan)
    upper = table["upper"].to_numpy(dtype="float64", na_value=np.nan)
    if np.isfinite(lower).any():
        low, high = float(np.nanmin(lower)), float(np.nanmax(upper))
        pad = max(10.0, 0.05 * (high - low))
        span = (low - pad, high + pad)
    else:
        span = (900.0, 1100.0)
    head = "".join(f'<th class="name">{escape(n)}</th>' for n in names)
    rows = []
    for key, row in zip(table.index, table.to_dict(orient="records"), strict=True):
        parts = key if isinstance(key, tuple) else (key,)
        cells = "".join(f'<td class="name">{_name(p)}</td>' for p in parts)
        ranked = not is_missing(row["score"])
        if ranked:
            score, lo, hi = float(row["score"]), float(row["lower"]), float(row["upper"])
            # The rank the votes support (rank_ub: overlapping intervals share one).
            # The interval's ends under the score: a narrow output keeps every column.
            cells = (f"<td title='by score alone: {int(row['rank'])}'>{int(row['rank_ub'])}"
                     f"</td>{cells}<td><b>{score:.0f}</b>"
                     f"<span class='range-text'>{lo:.0f}–{hi:.0f}</span></td>"
                     f"<td>{_bar(score, lo, hi, span)}</td>")
        else:
            cells = f"<td>–</td>{cells}<td colspan='2'>{escape(row['status'])}</td>"
        rate = "–" if is_missing(row["win_rate"]) else f"{float(row['win_rate']):.0%}"
        cells += (f"<td>{int(row['wins'])} / {int(row['losses'])} / {int(row['ties'])}"
                  f" / {int(row['both_bad'])}</td><td>{int(row['comparisons'])}</td>"
                  f"<td>{rate}</td>")
        rows.append(f'<tr class="{"ranked" if ranked else "unrated"}">{cells}</tr>')
    votes = board.votes
    said = note if note is not None else (
        f"{votes:,} vote{'' if votes == 1 else 's'}; Bradley-Terry scores on an Elo-like scale "
        f"(1000 is average; +400 is ten-to-one odds), {level:.0%} bootstrap intervals; ties "
        "and “both bad” count half a win; competitors whose intervals overlap share a rank."
    )
    told = [f"{n[:1].upper()}{n[1:]}." for n in board.notes]
    if not rows:  # nothing to rank: say so, and how votes are given
        told = [f"{n}." for n in board.notes] or [
            "genlab.rate(...) shows blind pairs to vote on; the board ranks them once there "
            "are votes."]
        return (f'<div class="genlab-board"><style>{BOARD_CSS}</style>'
                f"<p><b>No votes yet</b> (ranking by {escape(', '.join(names))}).</p>"
                f'<div class="genlab-board-note">{escape(" ".join(told))}</div></div>')
    said = " ".join([said, *told])
    return (
        f'<div class="genlab-board"><style>{BOARD_CSS}</style>'
        f'<table class="genlab-board-table"><tr><th>rank</th>{head}<th>score</th>'
        f"<th style='text-align:center'>{level:.0%} interval</th>"
        "<th title='won / lost / tie / both bad'>won / lost / tie / bad</th>"
        f"<th>votes</th><th>win rate</th></tr>{''.join(rows)}</table>"
        f'<div class="genlab-board-note">{escape(said)}</div></div>'
    )


def leaderboard_section(
    board: Leaderboard,
    ratings: pd.DataFrame,
    runs: pd.DataFrame,
    reader: MediaReader,
    *,
    pairs: int = 4,
    page_folder: str | os.PathLike[str] | None = None,
) -> list[str]:
    """A report's "Leaderboard" section: the table, the scores chart, the win-rate heat map,
    and up to ``pairs`` decisive pairs with their media (read from ``runs``' rows by task id),
    each linked to its kept file relative to ``page_folder`` (by default the working
    directory). Nothing when there are no votes."""
    if ratings.empty:
        return []
    scores = data_uri(figure_png(plot_leaderboard(board)), mime="image/png")
    heat = data_uri(figure_png(plot_win_rates(board)), mime="image/png")
    parts = [
        "<h2>Leaderboard</h2>",
        leaderboard_html(board),
        f'<img class="chart" alt="scores with their intervals" src="{scores}">',
        f'<img class="chart" alt="share of votes won, row against column" src="{heat}">',
    ]
    chosen = decisive_pairs(ratings, board, pairs)
    if not chosen.empty:
        by_task = {str(r["task_id"]): {str(k): v for k, v in r.items()}
                   for r in runs.to_dict(orient="records") if not is_missing(r.get("task_id"))}
        parts.append("<h3>Decisive pairs</h3>")
        parts.append(f'<div class="genlab-decisive"><style>{MEDIA_CSS}{_PAIRS_CSS}</style>')
        for vote in chosen.to_dict(orient="records"):
            parts.append(_pair_html({str(k): v for k, v in vote.items()}, by_task, reader,
                                    page_folder))
        parts.append("</div>")
    return parts


def _pair_html(vote: Mapping[str, Any], runs: Mapping[str, Mapping[str, Any]],
               reader: MediaReader, page_folder: str | os.PathLike[str] | None) -> str:
    sides = []
    for side in ("left", "right"):
        task, model = str(vote[f"{side}_task"]), vote[f"{side}_model"]
        row = runs.get(task)
        tile = ""
        if row is not None:  # a video's first frame and its original's link outlive <video>
            tile = tile_html(reader.embed(row), salt=task, alt=str(model),
                             caption=original_html(row, page_folder))
        note = "" if row is not None else (
            f"<div class='prompt'>{escape(task)}: not among this report's runs</div>")
        mark = "<span class='preferred'>preferred</span>" if vote["answer"] == side else ""
        sides.append(f'<div class="side">{tile}{note}<div class="who"><b>{escape(model)}</b>'
                     f"{mark}</div></div>")
    prompt = "" if is_missing(vote.get("prompt")) else escape(vote["prompt"])
    return (f'<div class="pair"><div class="prompt">{prompt}</div>'
            f'<div class="sides">{"".join(sides)}</div></div>')
