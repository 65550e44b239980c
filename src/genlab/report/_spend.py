"""The "Spend" section of a report: credits spent, estimated where unpriced, saved by reuse.

A report reads run rows, so :func:`spend_of` totals them per model in the columns of
``history.spend()`` (:data:`genlab.history.SPEND_COLUMNS`); a ``History.spend()`` frame can be
given to :func:`genlab.report.write_report` instead (``spend=``), since reuses are kept beside
the rows, not in them.

Example:
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"model": ["video-a", "video-a", "video-b"],
    ...                      "credits": [160, 160, None], "reused": [False, True, False]})
    >>> spend_of(runs)[["model", "runs", "credits", "unpriced", "reused", "credits_saved"]]
         model  runs  credits  unpriced  reused  credits_saved
    0  video-a     1      160         0       1            160
    1  video-b     1     <NA>         1       0              0
"""

from __future__ import annotations

import pandas as pd

from genlab.display import escape
from genlab.history import SPEND_COLUMNS


def spend_of(df: pd.DataFrame) -> pd.DataFrame:
    """Per model, from run rows: ``runs`` paid for, ``credits`` at published prices,
    ``estimated`` (an ``assumed_credits`` column), ``unpriced``, and the rows ``reused``
    (a boolean ``reused`` column) with the ``credits_saved`` by them (their credits).

    As in ``history.spend()``, ``credits`` and ``estimated`` are missing (shown "–") for a
    model none of whose runs had such a price.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> spend_of(history.df()).columns.tolist()[:4]
        ['model', 'runs', 'credits', 'estimated']
        >>> history.close()
    """
    if df.empty or "model" not in df.columns:
        return pd.DataFrame(columns=["model", *SPEND_COLUMNS])
    n = len(df)

    def column(name: str) -> pd.Series:
        if name in df.columns:
            return pd.to_numeric(df[name], errors="coerce").astype("Float64")
        return pd.Series([pd.NA] * n, index=df.index, dtype="Float64")

    credits, assumed = column("credits"), column("assumed_credits")
    reused = (
        df["reused"].fillna(False).astype(bool) if "reused" in df.columns
        else pd.Series(False, index=df.index)
    )
    paid = ~reused
    frame = pd.DataFrame({
        "model": df["model"].astype("string"),
        "runs": paid.astype("int64"),
        "credits": credits.where(paid),
        "estimated": assumed.where(paid & credits.isna()),
        "unpriced": (paid & credits.isna() & assumed.isna()).astype("int64"),
        "reused": reused.astype("int64"),
        "credits_saved": credits.where(reused).fillna(0),
    })
    groups = frame.groupby("model", sort=True)
    out = groups.sum().reset_index()
    for name in ("credits", "estimated"):  # no price in the group: missing, not 0
        out[name] = groups[name].sum(min_count=1).round().astype("Int64").array
    out["credits_saved"] = out["credits_saved"].round().astype("int64")
    out["model"] = out["model"].astype(object)
    return out


def has_money(spend: pd.DataFrame) -> bool:
    """True when any credits were spent, estimated or saved (the section is shown then)."""
    columns = [c for c in ("credits", "estimated", "credits_saved") if c in spend.columns]
    return bool(columns) and bool(spend[columns].fillna(0).to_numpy().sum() > 0)


def spend_table_html(spend: pd.DataFrame) -> str:
    """``spend`` as an escaped HTML table, with a total row."""
    key = spend.columns[0]
    head = "".join(f"<th>{escape(c)}</th>" for c in spend.columns)
    rows = []
    for values in spend.itertuples(index=False):
        cells = [f"<th>{escape(values[0])}</th>"]
        cells += [f"<td>{_number(v)}</td>" for v in values[1:]]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    totals = [f"<td>{_number(spend[c].sum(min_count=1))}</td>" for c in spend.columns[1:]]
    rows.append(f"<tr><th>all {escape(key)}s</th>{''.join(totals)}</tr>")
    return f'<table class="summary"><tr>{head}</tr>{"".join(rows)}</table>'


def _number(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "–"
    try:
        return f"{int(value):,}"  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return "–"
