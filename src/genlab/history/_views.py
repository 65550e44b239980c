"""pandas views of the journal: the task table and per-group summaries."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from genlab.history._store import Journal

if TYPE_CHECKING:
    import pandas as pd

_TIMES = ("submitted_at", "created_at", "started_at", "completed_at")
_INTS = ("credits", "result_count", "width", "height")
_FLOATS = ("duration", "media_seconds")
# The columns of history.df(), in order.
FRAME_COLUMNS = (
    "task_id",
    "model",
    "kind",
    "mode",
    "status",
    "state",
    "tag",
    "prompt",
    "resolution",
    "duration",
    "credits",
    "submitted_at",
    "created_at",
    "started_at",
    "completed_at",
    "queue_seconds",
    "processing_seconds",
    "total_seconds",
    "error_code",
    "error_message",
    "result_count",
    "result_url",
    "width",
    "height",
    "media_seconds",
    "paths",
    "request",
    "entry_id",
    "reason",
)


_DERIVED = ("queue_seconds", "processing_seconds", "total_seconds")
_FETCHED = tuple(c for c in FRAME_COLUMNS if c not in _DERIVED)


def _seconds(value: datetime | str | float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.timestamp()


def _listify(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def frame(
    journal: Journal,
    *,
    model: str | Sequence[str] | None = None,
    status: str | Sequence[str] | None = None,
    tag: str | Sequence[str] | None = None,
    since: datetime | str | float | None = None,
    until: datetime | str | float | None = None,
) -> pd.DataFrame:
    """The journal as a DataFrame, one row per submission, newest last (see History.df)."""
    import numpy as np
    import pandas as pd

    where: list[str] = []
    params: list[Any] = []
    for field, wanted in (("model", model), ("status", status), ("tag", tag)):
        values = _listify(wanted)
        if values is not None:
            where.append(f"{field} IN ({', '.join('?' for _ in values)})")
            params += values
    for op, bound in ((">=", since), ("<", until)):
        seconds = _seconds(bound)
        if seconds is not None:
            where.append(f"submitted_at {op} ?")
            params.append(seconds)
    sql = f"SELECT {', '.join(_FETCHED)} FROM tasks"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY submitted_at"
    with journal.lock:
        rows = journal.connection.execute(sql, params).fetchall()
    # Built column by column, already in the final order. One 2-D object array is cheaper than
    # zip(*rows), its column slices convert to typed arrays twice as fast as tuples do, and no
    # reindexing copy is needed at the end.
    table = (
        np.array(rows, dtype=object) if rows else np.empty((0, len(_FETCHED)), dtype=object)
    )
    data: dict[str, Any] = {}
    for i, name in enumerate(_FETCHED):
        column = table[:, i]
        if name in _TIMES:
            data[name] = pd.to_datetime(column.astype("float64"), unit="s", utc=True)
        elif name in _INTS:
            data[name] = pd.Series(column.astype("float64")).astype("Int64").array
        elif name in _FLOATS:
            data[name] = pd.Series(column.astype("float64")).astype("Float64").array
        else:
            data[name] = pd.array(column, dtype="string")
    spans = {
        "queue_seconds": ("created_at", "started_at"),
        "processing_seconds": ("started_at", "completed_at"),
        "total_seconds": ("created_at", "completed_at"),
    }
    ordered = {
        name: _between(data[spans[name][0]], data[spans[name][1]]) if name in spans else data[name]
        for name in FRAME_COLUMNS
    }
    return pd.DataFrame(ordered)


def _between(start: Any, end: Any) -> Any:
    import pandas as pd

    return pd.Series(end - start).dt.total_seconds().astype("Float64").array


def summarize(df: pd.DataFrame, by: str | Sequence[str] = "model") -> pd.DataFrame:
    """Count, success rate, p50/p95 latency and credits per group (see History.summary)."""
    import pandas as pd

    keys = [by] if isinstance(by, str) else list(by)
    if df.empty:
        columns = [
            "tasks",
            "succeeded",
            "failed",
            "uncertain",
            "success_rate",
            "p50_seconds",
            "p95_seconds",
            "credits",
            "unpriced",
        ]
        return pd.DataFrame(columns=keys + columns).set_index(keys)
    # Only accepted submissions were billed; refused ones cost nothing.
    df = df.assign(billed=df["credits"].where(df["state"] == "accepted"))
    groups = df.groupby(keys, dropna=False, sort=True)
    total = groups["total_seconds"]
    out = pd.DataFrame(
        {
            "tasks": groups.size(),
            "succeeded": groups["status"].apply(lambda s: int((s == "succeeded").sum())),
            "failed": groups["status"].apply(lambda s: int((s == "failed").sum())),
            "uncertain": groups["state"].apply(lambda s: int(s.isin(["uncertain"]).sum())),
            "p50_seconds": total.quantile(0.5),
            "p95_seconds": total.quantile(0.95),
            "credits": groups["billed"].sum(min_count=1),
            "unpriced": groups["credits"].apply(lambda s: int(s.isna().sum())),
        }
    )
    finished = out["succeeded"] + out["failed"]
    out.insert(
        4, "success_rate", (out["succeeded"] / finished.where(finished > 0)).astype("Float64")
    )
    out["credits"] = out["credits"].astype("Int64")
    for name in ("p50_seconds", "p95_seconds"):
        out[name] = out[name].astype("Float64")
    return out
