"""Summaries of runs, written once: any run table (a History slice or a Comparison's ``df``).

``History.summary()``, ``Comparison.summary()`` and ``genlab.report.summarize`` are this
function; the report's charts and HTML read the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# What each canonical column is called in the tables genlab makes, first match wins.
_ALIASES: dict[str, tuple[str, ...]] = {
    "seconds": ("seconds", "total_seconds"),
    "error": ("error", "error_message"),
}
_TEXT = ("prompt", "model", "kind", "task_id", "result_url", "cover_url", "status", "error")
# A History row's submission state, shown as its status when no task status is known.
_STATES_AS_STATUS = ("refused", "uncertain", "sending")

SUMMARY_COLUMNS = (
    "runs",
    "succeeded",
    "failed",
    "invalid",
    "other",
    "success_rate",
    "p50_seconds",
    "p95_seconds",
    "credits",
    "unpriced",
    "as_asked",
)
"""The columns of :func:`summarize`, in order."""


def normalized(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with the columns reports read, whichever genlab table it came from.

    Canonical columns: prompt, model, kind, status, error, task_id, credits, seconds,
    result_url, cover_url, paths, as_asked (nullable boolean: NA where the media were not
    measured). Missing ones are filled with NA; History's
    ``total_seconds`` becomes ``seconds``, ``error_message`` (else ``reason``) becomes
    ``error``, and a submission that never became a task shows its state as its status.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": ["video-a"], "state": ["uncertain"], "status": [None]})
        >>> normalized(rows)["status"].tolist()
        ['uncertain']
    """
    import pandas as pd

    out = df.copy()
    for name, sources in _ALIASES.items():
        found = next((s for s in sources if s in df.columns), None)
        if found is not None and found != name:
            out[name] = df[found]
    for name in _TEXT:
        if name not in out.columns:
            out[name] = pd.NA
        out[name] = out[name].astype("string")
    if "reason" in df.columns:
        out["error"] = out["error"].fillna(df["reason"].astype("string"))
    if "state" in df.columns:
        state = df["state"].astype("string")
        stand_in = state.where(state.isin(_STATES_AS_STATUS))
        out["status"] = out["status"].fillna(stand_in)
    out["status"] = out["status"].fillna("unknown")
    if "seconds" not in out.columns:
        out["seconds"] = pd.NA
    out["seconds"] = pd.to_numeric(out["seconds"], errors="coerce").astype("Float64")
    if "credits" not in out.columns:
        out["credits"] = pd.NA
    out["credits"] = pd.to_numeric(out["credits"], errors="coerce").astype("Int64")
    if "as_asked" not in out.columns:
        out["as_asked"] = pd.NA
    out["as_asked"] = out["as_asked"].astype("boolean")
    if "paths" not in out.columns:
        out["paths"] = pd.Series([None] * len(out), index=out.index, dtype=object)
    return out


def summarize(df: pd.DataFrame, by: str | Sequence[str] = "model") -> pd.DataFrame:
    """Per group (model by default): how many runs, how they ended, latency and credits.

    Columns (:data:`SUMMARY_COLUMNS`): ``runs``; ``succeeded``, ``failed``, ``invalid``
    (refused by validation, never sent) and ``other`` (uncertain, timed out, refused by the
    service, still running); ``success_rate`` (succeeded / runs sent); ``p50_seconds`` and
    ``p95_seconds`` (creation to completion, succeeded runs); ``credits`` (the published price
    of runs the service accepted; NA where none has a price); ``unpriced`` (sent runs with no
    published price); ``as_asked`` (the share of results whose measured media are what was
    asked, over the results where that is known; NA where none is). Groups keep the order
    in which they first appear.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({
        ...     "model": ["video-a", "video-a", "image-d"],
        ...     "status": ["succeeded", "failed", "succeeded"],
        ...     "task_id": ["t1", "t2", "t3"],
        ...     "seconds": [40.0, None, 9.0],
        ...     "credits": [400, 400, None],
        ... })
        >>> table = summarize(runs)
        >>> list(table.index), table.loc["video-a", "success_rate"]
        (['video-a', 'image-d'], np.float64(0.5))
        >>> int(table.loc["video-a", "credits"]), int(table.loc["image-d", "unpriced"])
        (800, 1)

        On a history: ``summarize(history.df(tag="sweep-1"), by=["model", "resolution"])``.
    """
    import pandas as pd

    keys = [by] if isinstance(by, str) else list(by)
    n = normalized(df)
    missing = [k for k in keys if k not in n.columns]
    if missing:
        raise KeyError(f"cannot group by {missing}: the table has no such column")
    if n.empty:
        empty = pd.DataFrame(columns=[*keys, *SUMMARY_COLUMNS])
        return empty.set_index(keys)
    status = n["status"]
    sent = status.ne("invalid")
    billed = n["credits"].where(n["task_id"].notna())

    def count(mask: pd.Series) -> pd.Series:
        return mask.fillna(False).astype("int64")

    flags = pd.DataFrame(
        {
            "runs": pd.Series(1, index=n.index, dtype="int64"),
            "succeeded": count(status.eq("succeeded")),
            "failed": count(status.eq("failed")),
            "invalid": count(~sent),
            "unpriced": count(sent & n["credits"].isna()),
        },
        index=n.index,
    )
    group_keys = [n[k] for k in keys]
    out = flags.groupby(group_keys, sort=False, dropna=False).sum()
    out["other"] = out["runs"] - out["succeeded"] - out["failed"] - out["invalid"]
    sent_runs = out["runs"] - out["invalid"]
    out["success_rate"] = (out["succeeded"] / sent_runs.where(sent_runs > 0)).astype("Float64")
    done = n[status.eq("succeeded").fillna(False)]
    seconds = done["seconds"].groupby([done[k] for k in keys], sort=False, dropna=False)
    for name, q in (("p50_seconds", 0.5), ("p95_seconds", 0.95)):
        out[name] = seconds.quantile(q).reindex(out.index).astype("Float64")
    credits = billed.groupby(group_keys, sort=False, dropna=False).sum(min_count=1)
    out["credits"] = credits.reindex(out.index).astype("Int64")
    asked = n["as_asked"].astype("Float64").groupby(group_keys, sort=False, dropna=False)
    out["as_asked"] = asked.mean().reindex(out.index).astype("Float64")
    return out[list(SUMMARY_COLUMNS)]
