"""What people read of a history: the task table (``df``) and its filters, the summary, the
spend, and the newest rows as the panel shows them. pandas is imported on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict, cast

import sqlalchemy as sa

from genlab._wire import TaskRecord
from genlab.catalog import result_of
from genlab.display import EMPTY
from genlab.history._columns import COLUMN, COLUMNS, DISPLAY_COLUMNS, FRAME_COLUMNS
from genlab.history._journal import stored_facts
from genlab.history._schema import EXPERIMENT_CELLS, TASKS
from genlab.history._spend import SpendBy, spend
from genlab.history._store import Store
from genlab.history._summary import SUMMARY_COLUMNS, summarize
from genlab.media import Result

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler

PROMPT_SHOWN = 80
"""Prompts longer than this are cut (with an ellipsis) in :meth:`History.recent`."""

_FETCHED = tuple(c.name for c in COLUMNS if c.in_frame and c.stored)


class Filters(TypedDict, total=False):
    """What ``History.df()`` (and ``summary()``) can be narrowed to; every key is optional.

    Attributes:
        model: one model or several.
        status: one task status or several (``queued``, ``processing``, ``succeeded``, ...).
        tag: one tag or several.
        user: one user or several (who submitted; ``$GENLAB_USER`` or the login name).
        host: one machine or several.
        project: one project or several (``History(project=...)`` or ``$GENLAB_PROJECT``).
        notebook: one notebook (or script) file name or several.
        since: submitted at or after (a datetime, an ISO 8601 string or epoch seconds).
        until: submitted before (same forms).

    Example:
        >>> where: Filters = {"model": ["video-a", "image-b"], "status": "succeeded"}
        >>> sorted(where)
        ['model', 'status']
    """

    model: str | Sequence[str] | None
    status: str | Sequence[str] | None
    tag: str | Sequence[str] | None
    user: str | Sequence[str] | None
    host: str | Sequence[str] | None
    project: str | Sequence[str] | None
    notebook: str | Sequence[str] | None
    since: datetime | str | float | None
    until: datetime | str | float | None


_FILTERS = frozenset(Filters.__optional_keys__)


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


class Views:
    """The tables of ``store`` (see :meth:`genlab.History.df` and its siblings), as plain
    DataFrames and rows.

    Example:
        >>> import os, tempfile
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> views = Views(store)
        >>> views.df({}).empty, views.recent(5), list(views.spend("tag").columns)[:2]
        (True, [], ['tag', 'runs'])
        >>> store.close()
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    def df(self, filters: Filters) -> pd.DataFrame:
        """Every submission as a row, oldest first, narrowed by ``filters``."""
        return frame(self._store, filters)

    def tasks(
        self, ids: str | Iterable[str] | None, experiment: str | None,
        columns: Sequence[str] | None, distinct: bool, filters: Filters,
    ) -> pd.DataFrame:
        """The rows of :meth:`df` asked for (see :meth:`genlab.History.tasks`)."""
        return frame(self._store, filters, ids=ids, experiment=experiment, columns=columns,
                     distinct=distinct)

    def summary(self, by: str | Sequence[str], filters: Filters) -> pd.DataFrame:
        """:func:`genlab.history.summarize` of :meth:`df`."""
        return summarize(self.df(filters), by)

    def spend(self, by: SpendBy) -> pd.DataFrame:
        """:func:`genlab.history.spend` of the store."""
        return spend(self._store, by)

    def recent(
        self, limit: int, model: str | None = None, status: str | None = None, *,
        cut: bool = True,
    ) -> list[dict[str, str]]:
        """The newest ``limit`` submissions first, each as the text of :data:`DISPLAY_COLUMNS`
        (prompts cut to :data:`PROMPT_SHOWN` characters unless ``cut`` is False)."""
        table = frame(self._store, {"model": model, "status": status}, newest=limit)
        shown = {name: [display_text(name, v, cut=cut) for v in table[name]]
                 for name in DISPLAY_COLUMNS}
        return [{name: shown[name][i] for name in shown} for i in reversed(range(len(table)))]


    def record(self, task_id: str) -> Result | None:
        """The task as a :class:`genlab.Result` (see :meth:`genlab.History.record`); None for
        a task id the history does not know."""
        t = TASKS.c
        found = self._store.rows(
            sa.select(t.task_id, t.model, t.kind, t.status, t.created_at, t.completed_at,
                      t.results, t.paths, t.error_code, t.error_message, t.error_json,
                      t.request, t.credits, t.media_facts, t.mismatches)
            .where(t.task_id == task_id).limit(1)
        )
        if not found:
            return None
        r = found[0]
        data: dict[str, Any] = {
            "task_id": r.task_id, "status": r.status or "queued", "model": r.model,
            "created_at": _iso(r.created_at), "completed_at": _iso(r.completed_at),
        }
        if r.results:
            data["videos" if r.kind == "video" else "images"] = json.loads(r.results)
        if r.status == "failed":
            error = json.loads(r.error_json) if r.error_json else None
            data["error"] = error if isinstance(error, dict) else {
                "code": r.error_code or "FAILED", "message": r.error_message or "no reason given"}
        kept = tuple(str(p) for p in json.loads(r.paths)) if r.paths else ()
        media, mismatches = stored_facts(r.media_facts, r.mismatches)
        body = json.loads(r.request) if r.request else None
        # The stored facts and phrases ride on the record: result_of judges the facts again
        # against the request, and keeps the stored phrases when the catalog no longer takes it.
        stored = Result.model_construct(
            **dict(TaskRecord.read(data, r.kind)), media=media, mismatches=mismatches)
        return result_of(stored, body if isinstance(body, dict) else None, kept=kept,
                         credits=r.credits)


def _iso(seconds: float | None) -> str | None:
    return datetime.fromtimestamp(seconds, UTC).isoformat() if seconds is not None else None


def frame(
    store: Store, filters: Filters, *, newest: int | None = None,
    ids: str | Iterable[str] | None = None, experiment: str | None = None,
    columns: Sequence[str] | None = None, distinct: bool = False,
) -> pd.DataFrame:
    """The history as a DataFrame, one row per submission, oldest first (see History.df and
    History.tasks).

    Args:
        store: the history to read.
        filters: the rows wanted.
        newest: keep only this many of the most recently submitted rows.
        ids: only these task ids (any number of them).
        experiment: only the tasks answering this experiment's cells.
        columns: only these columns (any of :data:`COLUMNS`), in this order; default those
            of ``df()``.
        distinct: each row once (ordered by its values, not by submission).

    Raises:
        TypeError: a filter that does not exist.
        ValueError: a column that does not exist.
    """
    import numpy as np
    import pandas as pd

    unknown = sorted(set(filters) - _FILTERS)
    if unknown:
        raise TypeError(f"unknown filter(s) {unknown}; the filters are {sorted(_FILTERS)}")
    names = FRAME_COLUMNS if columns is None else _columns(columns)
    fetched = list(dict.fromkeys(
        part for name in names for part in (COLUMN[name].span or (name,))))
    ordered_here = ids is not None and not distinct and newest is None
    if ordered_here and "submitted_at" not in fetched:  # to sort the chunks' rows by
        fetched.append("submitted_at")
    query = sa.select(*(TASKS.c[name] for name in fetched))
    for field in ("model", "status", "tag", "user", "host", "project", "notebook"):
        values = _listify(cast("str | Sequence[str] | None", filters.get(field)))
        if values is not None:
            query = query.where(TASKS.c[field].in_(values))
    since, until = _seconds(filters.get("since")), _seconds(filters.get("until"))
    if since is not None:
        query = query.where(TASKS.c.submitted_at >= since)
    if until is not None:
        query = query.where(TASKS.c.submitted_at < until)
    if experiment is not None:
        cells = EXPERIMENT_CELLS.c
        query = query.where(TASKS.c.task_id.in_(
            sa.select(cells.task_id).where(cells.experiment == experiment,
                                           cells.task_id.is_not(None))))
    if distinct:
        query = query.distinct().order_by(*(TASKS.c[name] for name in fetched))
    elif newest is None:
        query = query.order_by(TASKS.c.submitted_at)
    else:
        query = query.order_by(TASKS.c.submitted_at.desc()).limit(max(0, newest))
    if ids is None:
        rows = store.tuples(query)
    else:
        rows = store.tuples_in(query, TASKS.c.task_id, [ids] if isinstance(ids, str) else ids)
        if ordered_here:
            at = fetched.index("submitted_at")
            rows.sort(key=lambda row: row[at])
        elif distinct:  # a row of values may come from two chunks
            rows = list(dict.fromkeys(rows))
    if newest is not None:
        rows.reverse()
    # Built column by column, already in the final order. One 2-D object array is cheaper than
    # zip(*rows), its column slices convert to typed arrays twice as fast as tuples do, and no
    # reindexing copy is needed at the end.
    table = (
        np.array(rows, dtype=object) if rows else np.empty((0, len(fetched)), dtype=object)
    )
    data: dict[str, Any] = {}
    for i, name in enumerate(fetched):
        column, kind = table[:, i], COLUMN[name].type
        dtype: Any = COLUMN[name].dtype
        if kind == "time":
            # pandas infers the unit from the values (whole seconds give "us"): pin the dtype.
            moments = pd.to_datetime(column.astype("float64"), unit="s", utc=True)
            data[name] = moments.as_unit("ns")
        elif kind in ("int", "float", "bool"):  # 0/1 -> True/False, NULL -> <NA>
            data[name] = pd.Series(column.astype("float64")).astype(dtype).array
        else:
            data[name] = pd.array(column, dtype=dtype)
    ordered: dict[str, Any] = {}
    for name in names:
        span = COLUMN[name].span
        ordered[name] = data[name] if span is None else _between(data[span[0]], data[span[1]])
    return pd.DataFrame(ordered)


def _columns(columns: Sequence[str]) -> tuple[str, ...]:
    """``columns`` checked against the history's column table."""
    asked = (columns,) if isinstance(columns, str) else tuple(columns)
    unknown = [c for c in asked if c not in COLUMN]
    if unknown or not asked:
        raise ValueError(
            f"unknown column(s) {unknown}; the history's columns are {', '.join(COLUMN)}"
            if unknown else "columns=[] asks for nothing: name one column at least, or leave "
            "it out for those of df()"
        )
    return tuple(dict.fromkeys(asked))


def _between(start: Any, end: Any) -> Any:
    import pandas as pd

    return pd.Series(end - start).dt.total_seconds().astype("Float64").array


def display_text(name: str, value: Any, *, cut: bool = True) -> str:
    """A ``History.df()`` value as the history panel shows it.

    Example:
        >>> display_text("total_seconds", 12.34), display_text("credits", None)
        ('12.3', '')
    """
    import pandas as pd

    if value is None or (not isinstance(value, str | Sequence) and bool(pd.isna(value))):
        return ""
    column = COLUMN.get(name)
    if column is not None and column.type == "time":
        return str(value.strftime("%Y-%m-%d %H:%M:%S"))
    if column is not None and column.type == "span":
        return f"{float(value):.1f}"
    text = str(value)
    if cut and name == "prompt" and len(text) > PROMPT_SHOWN:
        text = text[: PROMPT_SHOWN - 1] + "…"
    return text


def _plain(value: Any) -> str:
    """A float without trailing zeros: 2.0 -> "2", 2.5 -> "2.5", 1.333 -> "1.33"."""
    return f"{float(value):,.2f}".rstrip("0").rstrip(".")


def formats(data: pd.DataFrame) -> dict[Any, Callable[[Any], str]]:
    """How each column of ``data`` reads for people (missing values aside): seconds to 0.1,
    credits and counts whole, rates as percentages, times to the second, other numbers
    without trailing zeros. :func:`styled` (HTML) and :func:`as_text` (print) share them.

    Example:
        >>> import pandas as pd
        >>> shown = formats(pd.DataFrame({"duration": [2.0], "credits": [1600.0]}))
        >>> shown["duration"](2.0), shown["credits"](1600.0)
        ('2', '1,600')
    """
    shown: dict[Any, Callable[[Any], str]] = {}
    for name, column in data.items():
        key, kind = str(name), column.dtype.kind
        if key in ("success_rate", "as_asked") and kind == "f":  # shares; df's own as_asked
            shown[name] = "{:.0%}".format  # is True/False
        elif key.endswith("seconds"):
            shown[name] = "{:.1f}".format
        elif kind in "iu" or (kind == "f" and (key == "credits" or key in SUMMARY_COLUMNS)):
            shown[name] = "{:,.0f}".format
        elif kind == "f":
            shown[name] = _plain
        elif kind == "M":
            shown[name] = _moment
    return shown


def _moment(moment: Any) -> str:
    return str(moment.strftime("%Y-%m-%d %H:%M:%S"))


def styled(data: pd.DataFrame) -> Styler:
    """``data`` formatted for people (see :func:`formats`), missing values as a dash ("–").

    Example:
        >>> import pandas as pd
        >>> page = styled(pd.DataFrame({"total_seconds": [12.345], "credits": [800.0]})).to_html()
        >>> ">12.3<" in page, ">800<" in page
        (True, True)
    """
    shown: dict[Any, str | Callable[[object], str] | None] = dict(formats(data))
    return data.style.format(shown, na_rep=EMPTY)


def as_text(data: pd.DataFrame) -> pd.DataFrame:
    """``data`` as the text :func:`styled` shows, for printing: the same formats, and a dash
    ("–") where a value is missing (never ``<NA>``). The values of ``data`` are untouched.

    Example:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"model": pd.array(["video-a", None], "string"),
        ...                       "duration": [2.0, 4.5],
        ...                       "credits": pd.array([1600, None], "Int64")})
        >>> print(as_text(frame).to_string(index=False))
          model duration credits
        video-a        2   1,600
              –      4.5       –
    """
    import pandas as pd

    shown = formats(data)
    columns: dict[Any, list[str]] = {}
    for name, column in data.items():
        show = shown.get(name, str)
        columns[name] = [EMPTY if _missing(v) else show(v) for v in column]
    return pd.DataFrame(columns, index=data.index, columns=data.columns, dtype=object)


def _missing(value: Any) -> bool:
    import pandas as pd

    if value is None or isinstance(value, str | bytes | Sequence | Mapping):
        return value is None
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
