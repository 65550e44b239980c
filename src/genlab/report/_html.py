"""HTML galleries and self-contained reports of a run table.

Every string that came from a person or the service (prompts, model names, error messages,
task ids, parameter values) goes through :func:`genlab.display.escape`; media are data URIs,
so a saved report is one file that opens anywhere and references no server.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Literal

import pandas as pd

from genlab._version import __version__
from genlab.client import data_uri
from genlab.display import (
    BACKGROUND,
    BORDER,
    CONTENT,
    ERROR,
    FAINT,
    HTML,
    MUTED,
    SHADE,
    TEXT,
    escape,
)
from genlab.history import normalized, summarize
from genlab.media.card import MEDIA_CSS, THUMB_WIDTH, Shown, run_tile_html, tile_html
from genlab.media.preview import MAX_EMBED_BYTES
from genlab.report._charts import figure_png, plot_spend, plot_summary
from genlab.report._leaderboard import leaderboard
from genlab.report._leaderboard_html import leaderboard_section
from genlab.report._media import (
    Fetch,
    MediaReader,
    is_missing,
    original_html,
)
from genlab.report._spend import has_money, spend_of, spend_table_html
from genlab.report._written import ReportFile

# Selectors outrank JupyterLab's right-aligned output tables (two classes and two elements).
_CSS = f"""
.genlab-gallery {{ max-width: 100%; overflow-x: auto; color: {CONTENT}; }}
.genlab-gallery table {{ border-collapse: separate; border-spacing: 0; }}
.genlab-gallery table.genlab-grid th, .genlab-gallery table.genlab-grid td {{
  border: 1px solid {BORDER}; padding: 6px; vertical-align: top; text-align: left; }}
.genlab-gallery table.genlab-grid thead th {{ background: {SHADE};
  font-weight: normal; white-space: nowrap; }}
.genlab-gallery thead th b {{ font-weight: 600; }}
.genlab-gallery .param {{ display: block; color: {MUTED}; font-size: 0.85em; }}
.genlab-gallery table.genlab-grid th.prompt,
.genlab-gallery table.genlab-grid thead th:first-child {{ position: sticky; left: 0;
  z-index: 1; background: {BACKGROUND}; }}
.genlab-gallery table.genlab-grid th.prompt {{ min-width: 8em; max-width: 14em;
  font-weight: normal; white-space: pre-wrap; overflow-wrap: break-word; }}
.genlab-gallery .run {{ margin-bottom: 6px; width: 320px; }}
.genlab-gallery .meta {{ color: {MUTED}; font-size: 0.8em; margin-top: 2px; }}
.genlab-gallery .status {{ font-weight: 600; font-size: 0.85em; }}
.genlab-gallery .run-failed .status, .genlab-gallery .run-invalid .status {{
  color: {ERROR}; }}
.genlab-gallery .note {{ font-size: 0.85em; white-space: pre-wrap; overflow-wrap: anywhere; }}
.genlab-gallery .empty {{ color: {FAINT}; }}
.genlab-gallery .genlab-row {{ margin-bottom: 10px; }}
.genlab-gallery .genlab-row > .prompt {{ font-weight: 600; margin: 0 0 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; }}
.genlab-gallery .genlab-cells {{ display: flex; flex-wrap: wrap; gap: 8px;
  align-items: flex-start; }}
/* 320 px of video inside 6 px padding and a 1 px border on each side */
.genlab-gallery .genlab-cell {{ flex: 0 1 334px; min-width: 0; box-sizing: border-box;
  border: 1px solid {BORDER}; padding: 6px; }}
.genlab-gallery .genlab-cell > .head {{ background: {SHADE}; margin: -6px -6px 6px;
  padding: 4px 6px; }}
.genlab-gallery .genlab-cell .run {{ width: auto; max-width: 320px; }}
.genlab-gallery .genlab-media:has(.genlab-zoom:checked) video,
.genlab-gallery .genlab-media:has(.genlab-zoom:checked) img {{ width: 640px; max-width: none; }}
"""

# The videos of one gallery row play, pause and seek together. Inline handlers, not a script:
# they work inside widgets and saved reports; a sanitising viewer drops them and the videos
# simply play one by one.
_ROW = "this.closest('tr, .genlab-row').querySelectorAll('video')"
_SYNC = (
    f' onplay="for(const v of {_ROW})if(v!==this&amp;&amp;v.paused)v.play()"'
    f' onpause="for(const v of {_ROW})if(v!==this&amp;&amp;!v.paused)v.pause()"'
    f' onseeked="for(const v of {_ROW})if(v!==this&amp;&amp;'
    'Math.abs(v.currentTime-this.currentTime)&gt;0.3)v.currentTime=this.currentTime"'
    " muted"
)
ROW_SYNC = _SYNC
"""Attributes for a ``<video>`` that plays, pauses and seeks the other videos of its table row
(``<tr>``) or ``.genlab-row`` with it; inline handlers, so an untrusted output (where they are
stripped) still plays each video on its own."""

# A saved report is a page of its own: outside JupyterLab the theme colours' fallbacks apply.
_REPORT_CSS = f"""
body {{ font-family: system-ui, sans-serif; margin: 2em; color: {TEXT};
  background: {BACKGROUND}; }}
table.summary {{ border-collapse: collapse; margin-bottom: 1em; }}
table.summary th, table.summary td {{ border: 1px solid {BORDER}; padding: 4px 8px; }}
table.summary td {{ text-align: right; }}
table.summary th {{ background: {SHADE}; text-align: left; }}
.generated, .intro {{ color: {MUTED}; }}
img.chart {{ max-width: 100%; }}
"""


def _esc(value: Any) -> str:
    return "" if is_missing(value) else escape(value)


def _key(value: Any) -> Any:
    # Group keys must be hashable; list-valued parameters (reference lists) are keyed by text.
    if is_missing(value):
        return None
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _run_html(row: Mapping[str, Any], embed: Shown | None, numbered: bool,
              page_folder: str | os.PathLike[str] | None) -> str:
    status = str(row["status"])
    # A video's tile carries its first frame and the link to its original, which remain
    # where a host strips <video> (GitHub's notebook view, sanitisers).
    link = original_html(row, page_folder) if embed is not None else ""
    media = ""
    if embed is not None and (embed.tag is not None or link):
        salt = str(row.get("task_id")) + str(row.get("repeat"))
        alt = "" if is_missing(row.get("prompt")) else str(row.get("prompt"))
        media = tile_html(embed, salt=salt, alt=alt, caption=link, extra=_SYNC)
    notes = [] if status == "succeeded" or is_missing(row.get("error")) else [str(row["error"])]
    if embed is not None and embed.note:
        notes.append(embed.note)
    meta = []
    if numbered and not is_missing(row.get("repeat")):
        meta.append(f"#{row['repeat']}")
    if not is_missing(row.get("seconds")):
        meta.append(f"{float(row['seconds']):.1f} s")
    if not is_missing(row.get("credits")):
        meta.append(f"{int(row['credits']):,} credits")
    if not is_missing(row.get("width")) and not is_missing(row.get("height")):
        meta.append(f"{int(row['width'])}×{int(row['height'])}")
    task = None if is_missing(row.get("task_id")) else str(row["task_id"])
    return run_tile_html(media, status=status, facts=meta, notes=notes, task_id=task)


def _column_header(names: Sequence[str], key: tuple[Any, ...]) -> str:
    first, *rest = zip(names, key, strict=True)
    parts = [f"<b>{_esc(first[1]) or '–'}</b>"]
    parts += [
        f'<span class="param">{_esc(name)}={_esc(value)}</span>'
        for name, value in rest
        if value is not None
    ]
    return "".join(parts)


def gallery_html(
    df: pd.DataFrame,
    *,
    rows: str = "prompt",
    cols: str | Sequence[str] = "model",
    fetch: Fetch | None = None,
    cache: MutableMapping[str, bytes] | None = None,
    max_embed_bytes: int = MAX_EMBED_BYTES,
    thumb_width: int = THUMB_WIDTH,
    layout: Literal["auto", "table", "wrap"] = "auto",
    page_folder: str | os.PathLike[str] | None = None,
) -> str:
    """A table of runs with their media embedded: prompts down, models (and params) across.

    With one prompt (``layout="auto"``) or ``layout="wrap"``, each prompt's cells wrap onto as
    many lines as the width needs, every column readable at once; ``"table"`` keeps one row
    per prompt (it scrolls sideways when wide), which lines prompts up column by column.

    Works on a Comparison's ``df`` or any History slice. Each cell shows its runs' media as
    data URIs (MP4 ``<video>``; images as thumbnails at most ``thumb_width`` px wide; a video
    over ``max_embed_bytes`` by its cover), or the run's status and message. Media come from
    the saved files in ``paths`` when they exist, else from ``result_url`` through ``fetch``;
    without a fetch, a run whose media was not saved shows a note instead. A kept file is
    linked under its tile (``original: …``), and a video's tile keeps an image of its first
    frame, so both remain where a host strips ``<video>``.

    Args:
        df: one row per run.
        rows: the column whose values make the rows.
        cols: the column(s) whose values make the columns, e.g. ``["model", "duration"]``.
        fetch: reads a media URL, e.g. ``client.fetch_media`` (reports make no HTTP
            requests of their own).
        cache: URL -> bytes kept between calls, so each result is fetched once.
        layout: ``"auto"``, ``"table"`` or ``"wrap"`` (see above).
        page_folder: the folder the page is opened from (a saved report's): links to the
            kept files are relative to it. By default the working directory, which is a
            notebook's folder.

    Example:
        html = gallery_html(history.df(tag="sweep-1"), cols=["model", "resolution"],
                            fetch=client.fetch_media)

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> gallery_html(history.df()).startswith('<div class="genlab-gallery">')
        True
        >>> history.close()
    """
    names = [cols] if isinstance(cols, str) else list(cols)
    n = normalized(df)
    for name in [rows, *names]:
        if name not in n.columns:
            n[name] = pd.NA
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()} for r in n.to_dict(orient="records")
    ]
    row_keys: dict[Any, None] = {}
    col_keys: dict[tuple[Any, ...], None] = {}
    cells: dict[tuple[Any, tuple[Any, ...]], list[int]] = {}
    for i, record in enumerate(records):
        r, c = _key(record[rows]), tuple(_key(record[name]) for name in names)
        row_keys.setdefault(r)
        col_keys.setdefault(c)
        cells.setdefault((r, c), []).append(i)

    wanted = [i for i, rec in enumerate(records) if rec["status"] == "succeeded"]
    reader = MediaReader(fetch, cache)
    with ThreadPoolExecutor(4) as pool:
        embeds = dict(
            zip(
                wanted,
                pool.map(
                    lambda i: reader.embed(
                        records[i], max_bytes=max_embed_bytes, thumb_width=thumb_width
                    ),
                    wanted,
                ),
                strict=True,
            )
        )

    def runs(members: list[int]) -> str:
        return "".join(
            _run_html(records[i], embeds.get(i), numbered=len(members) > 1,
                      page_folder=page_folder)
            for i in members
        )

    if layout not in ("auto", "table", "wrap"):
        raise ValueError(f"layout must be 'auto', 'table' or 'wrap', got {layout!r}")
    out = [f'<div class="genlab-gallery"><style>{MEDIA_CSS}{_CSS}</style>']
    if layout == "wrap" or (layout == "auto" and len(row_keys) <= 1):
        for r in row_keys:
            out.append(f'<div class="genlab-row"><div class="prompt">{_esc(r) or "–"}</div>'
                       '<div class="genlab-cells">')
            for c in col_keys:
                members = cells.get((r, c), [])
                body = runs(members) if members else '<div class="empty">–</div>'
                out.append(f'<div class="genlab-cell"><div class="head">'
                           f"{_column_header(names, c)}</div>{body}</div>")
            out.append("</div></div>")
        out.append("</div>")
        return "".join(out)
    out.append('<table class="genlab-grid"><thead><tr>')
    out.append(f"<th>{_esc(rows)}</th>")
    out += [f"<th>{_column_header(names, c)}</th>" for c in col_keys]
    out.append("</tr></thead><tbody>")
    for r in row_keys:
        out.append(f'<tr><th class="prompt">{_esc(r) or "–"}</th>')
        for c in col_keys:
            members = cells.get((r, c), [])
            out.append(f"<td>{runs(members)}</td>" if members else '<td class="empty">–</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def gallery(df: pd.DataFrame, **options: Any) -> HTML:
    """:func:`gallery_html`, wrapped so a notebook cell displays it.

    Example:
        genlab.report.gallery(history.df(model="video-a"), fetch=client.fetch_media)

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> type(gallery(history.df())).__name__  # a notebook shows it
        'HTML'
        >>> history.close()
    """
    return HTML(gallery_html(df, **options))


def _cell(name: str, value: Any) -> str:
    if is_missing(value):
        return "–"
    if name in ("success_rate", "as_asked"):
        return f"{float(value):.0%}"
    if name.endswith("_seconds"):
        return f"{float(value):.1f}"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"  # counts and credits
    return _esc(value)


def summary_html(summary: pd.DataFrame) -> str:
    """A summary table (from :func:`summarize`) as an escaped HTML table.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> summary_html(history.summary()).startswith('<table class="summary">')
        True
        >>> history.close()
    """
    keys = [str(k) for k in summary.index.names]
    head = "".join(f"<th>{_esc(k)}</th>" for k in [*keys, *summary.columns])
    body = []
    for index, values in zip(summary.index, summary.itertuples(index=False), strict=True):
        labels = index if isinstance(index, tuple) else (index,)
        cells = "".join(f"<th>{_esc(v) or '–'}</th>" for v in labels)
        cells += "".join(
            f"<td>{_cell(str(c), v)}</td>" for c, v in zip(summary.columns, values, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="summary"><tr>{head}</tr>{"".join(body)}</table>'


def report_html(
    df: pd.DataFrame,
    *,
    title: str = "genlab report",
    intro: str | None = None,
    by: str | Sequence[str] = "model",
    rows: str = "prompt",
    cols: str | Sequence[str] = "model",
    fetch: Fetch | None = None,
    cache: MutableMapping[str, bytes] | None = None,
    spend: pd.DataFrame | None = None,
    ratings: pd.DataFrame | None = None,
    page_folder: str | os.PathLike[str] | None = None,
) -> str:
    """One self-contained HTML page: summary table, charts (PNG) and gallery, all embedded.

    A "Spend" section (credits spent, estimated and saved by reuse: a table and a chart)
    follows the summary when any credits were; a "Leaderboard" section (the table, its chart,
    the win-rate heat map and a few decisive pairs) when ``ratings`` has votes.

    Args:
        df: one row per run (a Comparison's ``df`` or a History slice).
        title: the page title.
        intro: a line of text under the title (escaped).
        by: grouping of the summary and charts.
        rows, cols, fetch, cache: as for :func:`gallery_html`.
        spend: a ``history.spend(by=...)`` frame for the Spend section (it knows the
            reuses); by default the rows are totalled per model.
        ratings: people's votes (``history.ratings(...)``) for the Leaderboard section, by
            model; the decisive pairs show media of ``df``'s rows.
        page_folder: the folder the page will be opened from, which links to the kept files
            are relative to (:func:`write_report` gives the file's); by default the working
            directory.

    Example:
        page = report_html(history.df(model="video-a"), title="video-a this week",
                           fetch=client.fetch_media)

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> page = report_html(history.df(), title="Kites")
        >>> page.startswith("<!DOCTYPE html>"), "<title>Kites</title>" in page
        (True, True)
        >>> history.close()
    """

    summary = summarize(df, by)
    chart = data_uri(figure_png(plot_summary(df, by)), mime="image/png")
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{_REPORT_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    if intro:
        parts.append(f'<p class="intro">{_esc(intro)}</p>')
    parts += [
        f'<p class="generated">{len(df):,} runs; generated {generated} by genlab '
        f"{_esc(__version__)}.</p>",
        "<h2>Summary</h2>",
        summary_html(summary),
        "<h2>Latency and credits</h2>",
        f'<img class="chart" alt="latency and credits per group" src="{chart}">',
        *_spend_section(df if spend is None else spend, totalled=spend is None),
        *_leaderboard_part(df, ratings, MediaReader(fetch, cache), page_folder),
        "<h2>Gallery</h2>",
        gallery_html(df, rows=rows, cols=cols, fetch=fetch, cache=cache,
                     page_folder=page_folder),
        "</body></html>\n",
    ]
    return "".join(parts)


def _spend_section(frame: pd.DataFrame, *, totalled: bool) -> list[str]:
    money = spend_of(frame) if totalled else frame
    if not has_money(money):
        return []
    chart = data_uri(figure_png(plot_spend(money)), mime="image/png")
    return [
        "<h2>Spend</h2>",
        spend_table_html(money),
        f'<img class="chart" alt="credits spent, estimated and saved by reuse" src="{chart}">',
    ]


def _leaderboard_part(
    df: pd.DataFrame, ratings: pd.DataFrame | None, reader: MediaReader,
    page_folder: str | os.PathLike[str] | None,
) -> list[str]:
    if ratings is None or ratings.empty:
        return []
    # Every model with a result in the report is listed: one nobody compared shows as unrated.
    shown = df.loc[df["status"] == "succeeded", "model"] if "status" in df.columns else df[:0]
    models = {*shown.dropna().astype(str), *ratings["left_model"], *ratings["right_model"]}
    board = leaderboard(ratings, models=sorted(models))
    return leaderboard_section(board, ratings, df, reader, page_folder=page_folder)


def write_report(
    df: pd.DataFrame, path: str | os.PathLike[str], **options: Any
) -> ReportFile:
    """Write :func:`report_html` to ``path`` (one file, nothing else needed) and return its
    path, which a notebook shows as a link to the file (:class:`ReportFile`).

    Example:
        genlab.report.write_report(history.df(model="video-a"), "video-a.html",
                                   fetch=client.fetch_media)

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> page = write_report(history.df(), pathlib.Path(tempfile.mkdtemp()) / "report.html")
        >>> page.name, page.read_text().startswith("<!DOCTYPE html>")
        ('report.html', True)
        >>> history.close()
    """
    target = ReportFile(path)
    target.path.parent.mkdir(parents=True, exist_ok=True)
    options.setdefault("page_folder", target.path.parent)  # its links open from there
    target.path.write_text(report_html(df, **options), encoding="utf-8")
    return target
