"""Where the credits went: spent, estimated where unpriced, and saved by reuse.

:func:`spend` reads the journal with two grouped queries (no row is parsed), so it stays quick
on a long history.

Columns of the frame, per group:

- ``runs``: submissions the service accepted, or may have (uncertain);
- ``credits``: their published prices (failed tasks included: the interface promises no
  refunds); missing (shown "–", as in ``History.summary()``) where no run has a price;
- ``estimated``: the assumed prices of unpriced runs, where the budget set one
  (``Budget(unpriced={model: price})``); missing where none was assumed;
- ``unpriced``: runs with neither a price nor an assumed one;
- ``reused`` and ``credits_saved``: results reused instead of paid for again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import pandas as pd

SpendBy = Literal["model", "day", "tag"]

SPEND_COLUMNS = ("runs", "credits", "estimated", "unpriced", "reused", "credits_saved")
"""The columns of :func:`spend`, after the group's."""

_PRICES = frozenset({"credits", "estimated"})
"""Sums of prices: missing (not 0) in a group where no run had one."""


class Queried(Protocol):
    """What :func:`spend` reads: a :class:`genlab.History` (or its store)."""

    @property
    def backend(self) -> Literal["sqlite", "postgresql"]: ...

    def query(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[Mapping[str, Any]]: ...


# The UTC day of epoch seconds, in each backend's SQL.
_DAY = {
    "sqlite": "date({}, 'unixepoch')",
    "postgresql": "to_char(to_timestamp({}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
}


def spend(journal: Queried, by: SpendBy = "model") -> pd.DataFrame:
    """Credits spent, estimated and saved per model, per UTC day or per tag.

    Example:
        >>> import os, tempfile
        >>> from genlab.history import History
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> list(spend(history, by="day").columns)
        ['day', 'runs', 'credits', 'estimated', 'unpriced', 'reused', 'credits_saved']
        >>> history.close()
    """
    import pandas as pd

    if by not in ("model", "day", "tag"):
        raise ValueError(f"by must be 'model', 'day' or 'tag', got {by!r}")
    if by == "day":
        task_key, reuse_key = (_DAY[journal.backend].format(c) for c in ("submitted_at", "at"))
    else:
        task_key = reuse_key = by
    paid = journal.query(
        f"SELECT {task_key} AS k, COUNT(*) AS runs, SUM(credits) AS credits, "
        "SUM(CASE WHEN credits IS NULL THEN assumed_credits END) AS estimated, "
        "SUM(CASE WHEN credits IS NULL AND assumed_credits IS NULL THEN 1 ELSE 0 END) "
        "AS unpriced FROM tasks WHERE state IN ('accepted', 'uncertain') GROUP BY 1"
    )
    saved = journal.query(
        f"SELECT {reuse_key} AS k, COUNT(*) AS reused, SUM(credits_saved) AS credits_saved "
        "FROM reuses GROUP BY 1"
    )
    rows: dict[object, dict[str, object]] = {}
    for r in paid:
        rows.setdefault(r["k"], {}).update(
            runs=r["runs"], credits=r["credits"], estimated=r["estimated"], unpriced=r["unpriced"]
        )
    for r in saved:
        rows.setdefault(r["k"], {}).update(reused=r["reused"], credits_saved=r["credits_saved"])
    frame = pd.DataFrame(
        [{by: key, **{c: values.get(c) for c in SPEND_COLUMNS}} for key, values in rows.items()],
        columns=[by, *SPEND_COLUMNS],
    )
    for name in SPEND_COLUMNS:
        frame[name] = frame[name].astype("Int64")
        if name not in _PRICES:  # counts: none is 0; a price nobody published stays missing
            frame[name] = frame[name].fillna(0)
    frame[by] = frame[by].astype("string")
    return frame.sort_values(by, na_position="last").reset_index(drop=True)


__all__ = ["SPEND_COLUMNS", "SpendBy", "spend"]
