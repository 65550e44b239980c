"""Galleries, charts and self-contained HTML reports of runs: a Comparison or any History slice.

Everything here reads a plain DataFrame with genlab's run columns (``prompt``, ``model``,
``status``, ``result_url`` or ``paths``, ``seconds`` or ``total_seconds``, ``credits``…), so
the same functions serve ``genlab.compare(...)`` results and ``history.df(...)`` slices.
Media are embedded as data URIs: the output shows everywhere and references no server.

Example:
    import genlab
    from genlab import report

    history = genlab.History()
    report.gallery(history.df(model="video-a"))              # displays in a cell
    report.plot_summary(history.df(since="2026-11-01"))      # a matplotlib Figure
    report.write_report(history.df(model="video-a"), "video-a.html")
"""

from __future__ import annotations

from genlab.report._charts import plot_summary
from genlab.report._frame import SUMMARY_COLUMNS, normalized, summarize
from genlab.report._html import (
    HTML,
    gallery,
    gallery_html,
    report_html,
    summary_html,
    write_report,
)
from genlab.report._media import (
    MAX_EMBED_BYTES,
    THUMB_WIDTH,
    Embed,
    Fetch,
    MediaReader,
    fetch_url,
    sniff,
    thumbnail,
)

__all__ = [
    "Embed",
    "Fetch",
    "HTML",
    "MAX_EMBED_BYTES",
    "MediaReader",
    "SUMMARY_COLUMNS",
    "THUMB_WIDTH",
    "fetch_url",
    "gallery",
    "gallery_html",
    "normalized",
    "plot_summary",
    "report_html",
    "sniff",
    "summarize",
    "summary_html",
    "thumbnail",
    "write_report",
]
