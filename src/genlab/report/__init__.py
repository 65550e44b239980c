"""Galleries, charts and self-contained HTML reports of runs: a Comparison or any History slice.

Everything here reads a plain DataFrame with genlab's run columns (``prompt``, ``model``,
``status``, ``result_url`` or ``paths``, ``seconds`` or ``total_seconds``, ``credits``…), so
the same functions serve ``genlab.compare(...)`` results and ``history.df(...)`` slices.
Media are embedded as data URIs: the output shows everywhere and references no server.

Media bytes come from the saved files in ``paths``, or through the ``fetch`` callable given
(``client.fetch_media``: the client's one HTTP stack). Reports make no HTTP requests of their
own; without a fetch, a result that was not saved is shown with a note.

Example:
    import genlab
    from genlab import report

    client = genlab.connect()
    history = client.history
    report.gallery(history.df(model="video-a"), fetch=client.fetch_media)  # displays in a cell
    report.plot_summary(history.df(since="2026-11-01"))                     # a matplotlib Figure
    report.plot_spend(history.spend(by="day"))        # credits spent, estimated, saved by reuse
    report.write_report(history.df(model="video-a"), "video-a.html", fetch=client.fetch_media)
    report.leaderboard(history)            # people's blind votes as a ranking (genlab.rate)
    report.agreement(history)              # how far raters agree; gold accuracy; judges
    report.write_report(history.df(), "all.html", ratings=history.ratings())  # with it

Previews (``video_preview``, ``poster``, ``PREVIEW_WIDTH``) are :mod:`genlab.media.preview`'s
and summaries are :func:`genlab.history.summarize`, both re-exported here:

    >>> import pandas as pd
    >>> from genlab import report
    >>> runs = pd.DataFrame({"model": ["image-b"], "status": ["succeeded"], "seconds": [3.0]})
    >>> report.summarize(runs).loc["image-b", "runs"]
    np.int64(1)
"""

from __future__ import annotations

from genlab.display import HTML
from genlab.history import SUMMARY_COLUMNS, normalized, summarize
from genlab.media.card import MEDIA_CSS, THUMB_WIDTH, TILE_WIDTH, media_html, tile_html
from genlab.media.preview import MAX_EMBED_BYTES, PREVIEW_WIDTH, poster, video_preview
from genlab.report._agreement import (
    AGREEMENT_COLUMNS,
    Agreement,
    agreement,
    agreement_html,
    is_judge,
)
from genlab.report._bradley_terry import ELO_BASE, ELO_SCALE, Strengths, strengths
from genlab.report._bradley_terry import counts as vote_counts
from genlab.report._charts import plot_spend, plot_summary
from genlab.report._decisive import decisive_pairs
from genlab.report._html import (
    ROW_SYNC,
    gallery,
    gallery_html,
    report_html,
    summary_html,
    write_report,
)
from genlab.report._leaderboard import BOARD_COLUMNS, Leaderboard, leaderboard
from genlab.report._leaderboard_charts import plot_leaderboard, plot_win_rates
from genlab.report._leaderboard_html import leaderboard_html
from genlab.report._media import (
    MAX_FETCH_BYTES,
    Fetch,
    MediaReader,
    embed_file,
    thumbnail,
)
from genlab.report._record import as_result, outcomes_html, record_html, records_html
from genlab.report._spend import spend_of
from genlab.report._written import ReportFile

__all__ = [
    "AGREEMENT_COLUMNS",
    "Agreement",
    "BOARD_COLUMNS",
    "ELO_BASE",
    "ELO_SCALE",
    "Fetch",
    "HTML",
    "Leaderboard",
    "MAX_EMBED_BYTES",
    "MAX_FETCH_BYTES",
    "MEDIA_CSS",
    "MediaReader",
    "PREVIEW_WIDTH",
    "ROW_SYNC",
    "ReportFile",
    "SUMMARY_COLUMNS",
    "Strengths",
    "THUMB_WIDTH",
    "TILE_WIDTH",
    "agreement",
    "agreement_html",
    "as_result",
    "decisive_pairs",
    "embed_file",
    "gallery",
    "gallery_html",
    "is_judge",
    "leaderboard",
    "leaderboard_html",
    "media_html",
    "normalized",
    "outcomes_html",
    "plot_leaderboard",
    "plot_spend",
    "plot_summary",
    "plot_win_rates",
    "poster",
    "record_html",
    "records_html",
    "report_html",
    "spend_of",
    "strengths",
    "summarize",
    "summary_html",
    "thumbnail",
    "tile_html",
    "video_preview",
    "vote_counts",
    "write_report",
]
