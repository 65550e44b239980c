"""An experiment drawn: the grid (word diffs above the columns, seeds side by side, a row's
videos in step), the comparison of two versions, and the one-file page.

Media are drawn by the one card renderer in its tile frame (:func:`genlab.media.card.media_html`
with ``frame="tile"``: thumbnails at tile size loaded lazily, a video its poster until played,
links to the originals); a row's videos carry the report's :data:`genlab.report.ROW_SYNC`
handlers, passed to the renderer. A grid in a notebook shows a page of rows at a time
(:data:`PAGE_CELLS` cells at most) with a note saying how to see the rest; a saved page holds
them all. Every text from a person or the service is escaped.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from genlab._version import __version__
from genlab.display import BACKGROUND, BORDER, MUTED, SHADE, TEXT, escape
from genlab.experiments._prompt import DIFF_CSS, Prompt, PromptDiff, _slots_html
from genlab.report import ROW_SYNC

if TYPE_CHECKING:
    import pandas as pd

    from genlab.experiments._experiment import Experiment

PAGE_CELLS = 48
"""At most this many cells on a page of the grid (a row of variables is never cut: a row with
more cells is a page of its own)."""
SEED_LEAST, SEED_MOST, GAP = 120, 240, 6
"""A seed's result is shown from 120 to 240 px wide, 6 px apart."""

_CSS = (
    ".genlab-exp{color:" + TEXT + ";max-width:100%}"
    # Each row a grid of columns as wide as each other (the same model's results side by
    # side at one size), as many side by side as the output holds: a narrow output wraps
    # them under each other, never scrolls. The headers are a row of the same grid, so a
    # header sits above its column; each cell names its column as well, for when they wrap.
    ".genlab-exp .genlab-exp-cols{display:grid;gap:6px;"
    "grid-template-columns:repeat(auto-fit,minmax(min(100%,var(--genlab-col)),1fr))}"
    ".genlab-exp .genlab-exp-heads>div,.genlab-exp .genlab-exp-cell{border:1px solid "
    + BORDER + ";padding:6px;min-width:0;overflow-wrap:anywhere}"
    ".genlab-exp .genlab-exp-heads>div{background:" + SHADE + "}"
    ".genlab-exp .genlab-row{margin-top:8px}"
    ".genlab-exp .genlab-exp-vars{background:" + SHADE + ";padding:3px 6px;margin-bottom:4px;"
    "overflow-wrap:anywhere}"
    ".genlab-exp .genlab-exp-vars .genlab-exp-label{display:inline;margin-right:2px}"
    ".genlab-exp .genlab-exp-col{font-weight:600;font-size:90%}"
    ".genlab-exp .genlab-exp-label{color:" + MUTED + ";font-size:85%;margin:2px 0}"
    ".genlab-exp .genlab-exp-seeds{display:flex;flex-wrap:wrap;gap:6px}"
    f".genlab-exp .genlab-exp-seed{{flex:1 1 {SEED_LEAST}px;min-width:0;"
    f"max-width:{SEED_MOST}px}}"
    ".genlab-exp .genlab-exp-seed .genlab-media{max-width:100%}"
    ".genlab-exp .genlab-exp-seed video,.genlab-exp .genlab-exp-seed img{max-width:100%;"
    "height:auto}"
    ".genlab-exp .genlab-exp-seed .meta{color:" + MUTED + ";font-size:80%;"
    "overflow-wrap:anywhere}"
    ".genlab-exp .genlab-exp-seed .note{color:" + MUTED + ";font-size:80%;"
    "white-space:pre-wrap;max-width:20em;overflow-wrap:anywhere}"
    ".genlab-exp .genlab-exp-money{color:" + MUTED + "}"
    ".genlab-exp .genlab-exp-page{color:" + MUTED + ";font-size:85%;margin:4px 0;"
    "overflow-wrap:anywhere}"
    + DIFF_CSS
)


def _number(value: Any) -> str:
    if _missing(value):
        return "–"
    try:
        return f"{float(value):.3g}"
    except (TypeError, ValueError):
        return escape(value)


def _missing(value: Any) -> bool:
    import pandas as pd

    if value is None:
        return True
    try:
        found = pd.isna(value)
    except (TypeError, ValueError):
        return False
    return isinstance(found, bool | np.bool_) and bool(found)


def _variables_html(variables: Mapping[str, Any]) -> str:
    if not variables:
        return "<i>no variables</i>"
    return " · ".join(f"<span class='genlab-exp-label'>{escape(k)}</span> {escape(v)}"
                       for k, v in variables.items())


def _seed_html(exp: Experiment, row: Mapping[str, Any],
               page_folder: str | os.PathLike[str] | None) -> str:
    from genlab.media.card import media_html, run_tile_html  # loads only with a grid

    status = str(row["status"])
    task_id = None if _missing(row["task_id"]) else str(row["task_id"])
    facts = [f"seed {row['seed']}" if not _missing(row["seed"]) else "no seed"]
    if not _missing(row["seconds"]):
        facts.append(f"{float(row['seconds']):.1f} s")
    facts += [f"{name} {_number(row[name])}" for name in exp.scorers]
    shown = ""
    if status == "succeeded" and task_id is not None:
        # One play/pause/scrub for the row: the report's handlers on every video.
        shown = media_html(exp.paths(task_id), play="click", page_folder=page_folder,
                           frame="tile", extra=ROW_SYNC, style=False)
    notes = [] if _missing(row["error"]) else [str(row["error"])]
    return run_tile_html(shown, status=status, facts=facts, notes=notes, task_id=task_id,
                         within="genlab-exp-seed")


def _key(variables: Mapping[str, Any]) -> str:
    return json.dumps(dict(variables), sort_keys=True, default=str)


def _version_header(version: Prompt, before: Prompt | None) -> str:
    aliases = version.aliases
    named = f" <span class='genlab-exp-label'>({escape(', '.join(aliases))})</span>" \
        if aliases else ""
    if before is None:
        body = f"<div class='genlab-diff'>{_slots_html(version.template)}</div>"
    else:
        body = version.diff(before).html()
    return f"<b>{escape(version.ref)}</b>{named}{body}"


def pages(counts: list[int], per_page: int = PAGE_CELLS) -> list[range]:
    """Rows cut into pages of at most ``per_page`` cells (``counts``: each row's cells); a
    row is never cut, so a row with more cells is a page of its own.

    Example:
        >>> pages([20, 20, 20, 60, 5])
        [range(0, 2), range(2, 3), range(3, 4), range(4, 5)]
    """
    found: list[range] = []
    start, held = 0, 0
    for i, count in enumerate(counts):
        if i > start and held + count > per_page:
            found.append(range(start, i))
            start, held = i, 0
        held += count
    if counts:
        found.append(range(start, len(counts)))
    return found


def _page_note(exp: Experiment, page: int, cut: list[range], counts: list[int]) -> str:
    first = sum(counts[: cut[page - 1].start]) + 1
    last = first + sum(counts[i] for i in cut[page - 1]) - 1
    total = sum(counts)
    told = f"showing cells {first:,}–{last:,} of {total:,} (page {page} of {len(cut)})"
    how = []
    if page < len(cut):
        how.append(f"exp.show(page={page + 1}) for the next")
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in exp.name) or "experiment"
    how.append(f'exp.to_html("{slug}.html") for all')
    return f"<div class='genlab-exp-page'>{escape(told + '; ' + ', '.join(how))}</div>"


def grid_html(exp: Experiment, columns: Literal["prompt", "model"] = "prompt", *,
              page: int | None = 1,
              page_folder: str | os.PathLike[str] | None = None) -> str:
    """The experiment's grid as an HTML fragment (see :meth:`Experiment.show`): ``page`` of
    its rows (from 1; :data:`PAGE_CELLS` cells a page), with a note saying how to see the
    others, or every row (``page=None``); its links to kept files are relative to
    ``page_folder`` (a saved page's), by default the notebook's."""
    from genlab.media.card import MEDIA_CSS  # previews load only when a grid is drawn

    frame = exp.df
    rows: list[Mapping[str, Any]] = [{str(k): v for k, v in r.items()}
                                     for r in frame.to_dict("records")]
    versions = exp.versions
    header_cells: list[str] = []
    if columns == "model":
        column_keys: list[Any] = exp.models
        header_cells = [f"<b>{escape(m)}</b>" for m in exp.models]
        above = "".join(d.html() for d in exp.diffs())
    else:
        column_keys = versions
        header_cells = [_version_header(v, versions[i - 1] if i else None)
                        for i, v in enumerate(versions)]
        above = ""
    sets: dict[str, Mapping[str, Any]] = {}
    groups: dict[tuple[str, Any, Any], list[Mapping[str, Any]]] = {}
    for cell, row in zip(exp.cells, rows, strict=True):
        key = _key(cell.variables)
        sets.setdefault(key, cell.variables)
        column, inner = ((cell.model, cell.prompt) if columns == "model"
                         else (cell.prompt, cell.model))
        groups.setdefault((key, column, inner), []).append(row)
    inners: list[Any] = versions if columns == "model" else exp.models
    keys = list(sets)
    per_row: dict[str, list[Mapping[str, Any]]] = {}
    for (k, _, _), members in groups.items():
        per_row.setdefault(k, []).extend(members)
    counts = [len(per_row[key]) for key in keys]
    cut = pages(counts)
    note = ""
    if page is not None and len(cut) > 1:
        if not 1 <= page <= len(cut):
            raise ValueError(f"the grid of {exp.name!r} has pages 1 to {len(cut)} "
                             f"(got page={page}): exp.show(page=1) shows the first")
        keys = [keys[i] for i in cut[page - 1]]
        note = _page_note(exp, page, cut, counts)
    elif page is not None and page != 1:
        raise ValueError(f"the grid of {exp.name!r} has one page (got page={page}): "
                         "exp.show() shows it")
    from genlab.media.card import prepare_thumbnails

    prepare_thumbnails(path for key in keys for r in per_row[key]
                       if r["status"] == "succeeded" and not _missing(r["task_id"])
                       for path in exp.paths(str(r["task_id"])))
    label_of = {id(c): (c.ref if isinstance(c, Prompt) else str(c)) for c in column_keys}
    body = []
    for key in keys:
        cells = []
        for column in column_keys:
            parts = [f"<div class='genlab-exp-col'>{escape(label_of[id(column)])}</div>"]
            for inner in inners:
                found = groups.get((key, column, inner))
                if not found:
                    continue
                label = inner.ref if isinstance(inner, Prompt) else str(inner)
                seeds = "".join(_seed_html(exp, r, page_folder) for r in found)
                parts.append(f"<div class='genlab-exp-label'>{escape(label)}</div>"
                             f"<div class='genlab-exp-seeds'>{seeds}</div>")
            cells.append(f"<div class='genlab-exp-cell'>{''.join(parts)}</div>")
        body.append(f"<div class='genlab-row'><div class='genlab-exp-vars'>"
                    f"{_variables_html(sets[key])}</div>"
                    f"<div class='genlab-exp-cols'>{''.join(cells)}</div></div>")
    head = "".join(f"<div>{h}</div>" for h in header_cells)
    # A column is as wide as the seeds of its fullest cell side by side need at least (two
    # at most: more wrap), and the grid no wider than they would ever use.
    side = max((len(m) for m in groups.values()), default=1)
    least = min(side, 2) * SEED_LEAST + (min(side, 2) - 1) * GAP + 14
    most = side * SEED_MOST + (side - 1) * GAP + 14
    n = len(column_keys)
    size = f"--genlab-col:{least}px;max-width:{n * most + (n - 1) * GAP}px"
    # The money line is what the run said before sending; beside it, where the cells stand
    # now (a finished grid should not read "16 to send").
    standing = frame["status"].fillna("not sent").value_counts()
    now = " · ".join(f"{n:,} {status}" for status, n in standing.items())
    said = f"before the run: {exp.money_line}" if exp.money_line else ""
    money = (f"<div class='genlab-exp-money'>{escape(' — now: '.join(filter(None, [said, now])))}"
             "</div>" if said or now else "")
    return (
        f"<div class='genlab-exp'><style>{MEDIA_CSS}{_CSS}</style>"
        f"<div><b>{escape(exp.name)}</b></div>{money}{above}{note}"
        f"<div class='genlab-exp-grid' style='{size}'>"
        f"<div class='genlab-exp-heads genlab-exp-cols'>{head}</div>"
        f"{''.join(body)}</div>{note}</div>"
    )


def _mean(values: Iterable[Any]) -> float:
    kept = [float(v) for v in values if not _missing(v)]
    return sum(kept) / len(kept) if kept else math.nan


def compare_frame(exp: Experiment, baseline: Prompt, candidate: Prompt) -> pd.DataFrame:
    """The rows of :meth:`Experiment.compare`."""
    import pandas as pd

    by: dict[tuple[str, str, Prompt], dict[Any, Mapping[str, Any]]] = {}
    sets: dict[str, Mapping[str, Any]] = {}
    records: list[Mapping[str, Any]] = [{str(k): v for k, v in r.items()}
                                        for r in exp.df.to_dict("records")]
    for cell, record in zip(exp.cells, records, strict=True):
        key = _key(cell.variables)
        sets.setdefault(key, cell.variables)
        by.setdefault((cell.model, key, cell.prompt), {})[cell.seed] = record
    out = []
    for model in exp.models:
        for key, variables in sets.items():
            base = by.get((model, key, baseline), {})
            cand = by.get((model, key, candidate), {})
            if not base and not cand:
                continue
            seeds = [s for s in base if s in cand]
            first_b = next(iter(base.values()), None)
            first_c = next(iter(cand.values()), None)
            change = ""
            diff = None
            if first_b is not None and first_c is not None:
                diff = PromptDiff(str(first_b["prompt"]), str(first_c["prompt"]))
                change = str(diff)
            row: dict[str, Any] = {
                _DIFF: diff,
                "model": model, **dict(variables), "baseline": baseline.ref,
                "candidate": candidate.ref, "change": change,
                "succeeded": f"{sum(r['status'] == 'succeeded' for r in base.values())}/"
                             f"{len(base)} -> "
                             f"{sum(r['status'] == 'succeeded' for r in cand.values())}/"
                             f"{len(cand)}",
                "seconds_change": _mean(cand[s]["seconds"] for s in seeds)
                - _mean(base[s]["seconds"] for s in seeds),
            }
            spreads = []
            for name in exp.scorers:
                pairs = [(base[s][name], cand[s][name]) for s in seeds
                         if not _missing(base[s][name]) and not _missing(cand[s][name])]
                diffs = [float(c) - float(b) for b, c in pairs]
                row[f"{name}_baseline"] = _mean(r[name] for r in base.values())
                row[f"{name}_candidate"] = _mean(r[name] for r in cand.values())
                row[f"{name}_change"] = sum(diffs) / len(diffs) if diffs else math.nan
                spread = max(diffs) - min(diffs) if len(diffs) > 1 else math.nan
                row[f"{name}_seed_spread"] = spread
                if not math.isnan(spread):
                    spreads.append(spread)
            if exp.scorers:
                row["seed_spread"] = max(spreads) if spreads else math.nan
            out.append(row)
    frame = pd.DataFrame(out)
    if exp.scorers and not frame.empty:
        frame = frame.sort_values("seed_spread", ascending=False, na_position="last",
                                  kind="stable").reset_index(drop=True)
    changes: list[PromptDiff | None] = ([d if isinstance(d, PromptDiff) else None
                                         for d in frame.pop(_DIFF)] if _DIFF in frame else [])
    for column in frame.columns:
        if column.endswith(("_change", "_baseline", "_candidate", "_spread")):
            frame[column] = frame[column].astype("Float64")
    for column in ("model", "baseline", "candidate", "change", "succeeded"):
        if column in frame:
            frame[column] = frame[column].astype("string")
    return _compared(frame, changes, exp.scorers, list(sets.values()), baseline, candidate)


_DIFF = "__diff"
_COMPARE_CSS = (
    ".genlab-compare{color:" + TEXT + ";max-width:100%}"
    ".genlab-compare table.genlab-compare-table{border-collapse:collapse;width:100%;"
    "table-layout:fixed}"
    # Two classes and two elements: they outrank JupyterLab's right-aligned output tables.
    ".genlab-compare table.genlab-compare-table tr th,"
    ".genlab-compare table.genlab-compare-table tr td{border-bottom:1px solid " + BORDER
    + ";padding:4px 6px;vertical-align:top;text-align:left;white-space:normal;"
    "overflow-wrap:break-word}"
    ".genlab-compare table.genlab-compare-table tr th{background:" + SHADE + ";"
    "font-weight:600;font-size:90%;vertical-align:bottom;overflow-wrap:normal}"
    ".genlab-compare .genlab-exp-label{color:" + MUTED + ";font-size:85%}"
    ".genlab-compare .genlab-change{font-weight:600}"
    ".genlab-compare .genlab-compare-note{color:" + MUTED + ";font-size:85%}"
    + DIFF_CSS
)


def _signed(value: Any, unit: str = "", form: str = ".3g") -> str:
    if _missing(value) or math.isnan(float(value)):
        return "–"
    # Bold, not coloured: whether up is better depends on the scorer (seconds: down is).
    return f"<span class='genlab-change'>{escape(f'{float(value):+{form}}{unit}')}</span>"


def compare_html(frame: pd.DataFrame, diffs: list[PromptDiff | None], scorers: list[str],
                 variables: list[str], title: str) -> str:
    """:meth:`Experiment.compare` as a notebook shows it: one row per model and set of
    variables, the prompt's word diff highlighted, how many cells succeeded, and each
    score's baseline, candidate and change (with the seeds' spread), in a table that wraps
    to the width of the output.

    Example:
        >>> import pandas as pd
        >>> row = {"model": "image-b", "succeeded": "2/2 -> 2/2", "seconds_change": 0.5}
        >>> page = compare_html(pd.DataFrame([row]), [PromptDiff("a kite", "a red kite")],
        ...                     [], [], "kite@1 → kite@2")
        >>> "<ins class='genlab-ins'>red</ins>" in page, "+0.50 s" in page
        (True, True)
    """
    head = ["model, variables", "prompt change", "succeeded", "seconds"]
    widths = [19, 33, 15, 12] if scorers else [29, 44, 15, 12]
    if scorers:
        head.append("scores (change, ± seeds' spread)")
        widths.append(20)
    rows = []
    records = [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]
    for record, diff in zip(records, diffs, strict=False):
        where = f"<b>{escape(record.get('model', ''))}</b>" + "".join(
            f"<div class='genlab-exp-label'>{escape(v)} {escape(record.get(v))}</div>"
            for v in variables if v in record)
        change = diff.html() if diff is not None else "–"
        cells = [where, change, escape(str(record.get("succeeded", "")).replace("->", "→")),
                 _signed(record.get("seconds_change"), " s", ".2f")]
        if scorers:
            lines = []
            for name in scorers:
                base, cand = record.get(f"{name}_baseline"), record.get(f"{name}_candidate")
                spread = record.get(f"{name}_seed_spread")
                apart = ("" if spread is None or _missing(spread) or math.isnan(float(spread))
                         else f", ±{float(spread):.3g}")
                lines.append(f"<div class='genlab-score'>{escape(name)} {_number(base)} → "
                             f"{_number(cand)} ({_signed(record.get(f'{name}_change'))}"
                             f"{escape(apart)})</div>")
            cells.append("".join(lines))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    if not rows:
        rows.append(f"<tr><td colspan='{len(head)}'>no cells of these two versions"
                    "</td></tr>")
    note = ("rows where the seeds disagree most come first; .to_pandas() or the columns "
            "(exp.compare(...)[\"change\"]) give the numbers") if scorers else ""
    return (f"<div class='genlab-compare'><style>{_COMPARE_CSS}</style>"
            f"<div><b>{escape(title)}</b></div><table class='genlab-compare-table'><colgroup>"
            + "".join(f"<col style='width:{w}%'>" for w in widths)
            + "</colgroup><thead><tr>"
            + "".join(f"<th>{escape(h)}</th>" for h in head)
            + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + (f"<div class='genlab-compare-note'>{escape(note)}</div>" if note else "")
            + "</div>")


def _compared(frame: pd.DataFrame, diffs: list[PromptDiff | None], scorers: list[str],
              sets: list[Mapping[str, Any]], baseline: Prompt, candidate: Prompt
              ) -> pd.DataFrame:
    """``frame`` as a DataFrame (its values untouched) that a notebook shows as
    :func:`compare_html`."""
    variables = list(dict.fromkeys(k for each in sets for k in each))
    shown = _compared_class()(frame)
    # A name of the class's _metadata: pandas keeps it out of the columns.
    object.__setattr__(shown, "_genlab_page", compare_html(
        frame, diffs, scorers, variables, f"{baseline.ref} → {candidate.ref}"))
    return shown


@functools.cache
def _compared_class() -> type[pd.DataFrame]:
    import pandas as pd

    from genlab.history import DisplayFrame

    base = type(DisplayFrame(pd.DataFrame()))

    class ComparedVersions(base):  # type: ignore[valid-type,misc]
        """Two versions compared: a DataFrame of the numbers, shown as a table that fits."""

        _metadata = ["_genlab_page"]
        _genlab_page: str | None = None

        @property
        def _constructor(self) -> type[pd.DataFrame]:
            return base  # a slice or a copy is the numbers alone, shown as such

        def _repr_html_(self) -> str | None:
            if self._genlab_page is None:
                shown: str | None = super()._repr_html_()
                return shown
            return self._genlab_page

    return ComparedVersions


def _versions_table(exp: Experiment) -> str:
    frame = exp.df
    lines = ["<table class='summary'><tr><th>version</th><th>cells</th><th>succeeded</th>"
             "<th>mean seconds</th>" + "".join(f"<th>{escape(s)}</th>" for s in exp.scorers)
             + "</tr>"]
    for version in exp.versions:
        part = frame[(frame["prompt_name"] == version.name)
                     & (frame["prompt_version"] == version.version)]
        cells = [f"<td>{len(part)}</td>",
                 f"<td>{int((part['status'] == 'succeeded').sum())}</td>",
                 f"<td>{_number(_mean(part['seconds']))}</td>"]
        cells += [f"<td>{_number(_mean(part[s]))}</td>" for s in exp.scorers]
        lines.append(f"<tr><th>{escape(version.ref)}</th>{''.join(cells)}</tr>")
    lines.append("</table>")
    return "".join(lines)


def page_html(exp: Experiment, columns: Literal["prompt", "model"] = "prompt", *,
              page_folder: str | os.PathLike[str] | None = None) -> str:
    """The experiment as a whole HTML page that loads nothing from elsewhere."""
    frame = exp.df.drop(columns=["experiment"])
    table = frame.to_html(escape=True, na_rep="–", index=False, classes="summary")
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    style = (
        f"body{{font-family:system-ui,sans-serif;margin:2em;color:{TEXT};"
        f"background:{BACKGROUND}}}"
        f"table.summary{{border-collapse:collapse;margin:1em 0}}"
        f"table.summary th,table.summary td{{border:1px solid {BORDER};padding:4px 8px}}"
        f"table.summary th{{background:{SHADE};text-align:left}}"
        f".generated{{color:{MUTED}}}"
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{escape(exp.name)}</title><style>{style}</style></head><body>"
        f"<h1>{escape(exp.name)}</h1>"
        f"<p class='generated'>genlab {escape(__version__)}, {when}</p>"
        f"{grid_html(exp, columns, page=None, page_folder=page_folder)}"
        f"<h2>Versions</h2>{_versions_table(exp)}"
        f"<h2>Every cell</h2>{table}</body></html>"
    )
