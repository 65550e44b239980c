"""Where a rating session's results come from, and where its votes go.

A source is a :class:`~genlab.Comparison` (its succeeded runs; votes go to the history its
client recorded into), a :class:`~genlab.History` (its succeeded tasks, narrowed by the
filters of ``df()``; votes go into it), or a DataFrame of finished tasks (a ``history.df()``
slice, a comparison's ``df``, or a table of your own with ``task_id``, ``model``, ``prompt``
and ``paths`` or ``result_url``; votes go to ``history=``, else the default history,
``$GENLAB_HISTORY`` or ``.genlab/history.sqlite``), or an :class:`~genlab.experiments.Experiment`
(its cells' succeeded tasks, compared as prompt versions; votes go to its history).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from genlab.comparison import Comparison
from genlab.experiments import Experiment
from genlab.history import Filters, History
from genlab.report import Fetch


@dataclass(slots=True)
class Source:
    """A source made plain: its run rows, their request parameters, the history votes go to,
    and how media not saved can be read; for an experiment, its name and its cells.

    Example:
        >>> import os, tempfile
        >>> import pandas as pd
        >>> from genlab.history import History
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2"], "model": ["video-a", "video-b"]})
        >>> plain = Source(runs, None, history, None, "sea")
        >>> plain.tag, plain.experiment, len(plain.runs)
        ('sea', None, 2)
    """

    runs: pd.DataFrame
    params: tuple[str, ...] | None
    history: History
    fetch: Fetch | None
    tag: str | None
    experiment: str | None = None
    cells: list[dict[str, Any]] | None = None


def source_of(
    source: Comparison | History | pd.DataFrame | Experiment,
    *,
    history: History | None = None,
    fetch: Fetch | None = None,
    filters: Filters | None = None,
) -> Source:
    """``source`` made plain (see the module's text).

    Raises:
        TypeError: ``source`` is none of the four, or filters were given for a table.

    Example:
        >>> import os, tempfile
        >>> import pandas as pd
        >>> from genlab.history import History
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2"], "model": ["video-a", "video-b"],
        ...                      "tag": ["sea", "sea"]})
        >>> plain = source_of(runs, history=history)
        >>> plain.tag, plain.history is history, len(plain.runs)
        ('sea', True, 2)
    """
    wanted: dict[str, Any] = dict(filters or {})
    if isinstance(source, Experiment):
        if wanted:
            raise TypeError("filters apply to a History; an experiment is rated whole")
        target = history or source.history
        cells = source.history.experiment_cells(source.name)
        tasks = {str(c["task_id"]) for c in cells if c.get("task_id")}
        # Its tasks carry its tag; one reused from elsewhere may not: then read them all.
        runs = source.history.df(tag=source.name)
        if not tasks <= set(runs["task_id"].astype(str)):
            runs = source.history.df()
        runs = runs[runs["task_id"].astype(str).isin(tasks)
                    & (runs["status"] == "succeeded")].reset_index(drop=True)
        return Source(runs, None, target, fetch, source.name, source.name, cells)
    if isinstance(source, Comparison):
        if wanted:
            raise TypeError("filters apply to a History; narrow a comparison's df instead")
        target = history or source.history or History()
        return Source(source.df, tuple(source.params), target, fetch or source.fetch,
                      source.tag)
    if isinstance(source, History):
        runs = source.df(status="succeeded", **wanted)
        tag = wanted.get("tag") if isinstance(wanted.get("tag"), str) else None
        return Source(runs, None, history or source, fetch, tag)
    if isinstance(source, pd.DataFrame):
        if wanted:
            raise TypeError("filters apply to a History; narrow the DataFrame instead")
        missing = [c for c in ("task_id", "model") if c not in source.columns]
        if missing:
            raise TypeError(
                f"the DataFrame has no {', '.join(missing)} column: rate a history.df() "
                "slice, a comparison's df, or a table of finished tasks with task_id, model, "
                "prompt and paths or result_url"
            )
        tags: list[Any] = (
            list(source["tag"].dropna().unique()) if "tag" in source.columns else [])
        return Source(source, None, history or History(), fetch,
                      str(tags[0]) if len(tags) == 1 else None)
    raise TypeError(
        f"cannot rate a {type(source).__name__}: give a genlab.Comparison, a genlab.History, "
        "a DataFrame of finished tasks or an experiment (genlab.experiment)"
    )
