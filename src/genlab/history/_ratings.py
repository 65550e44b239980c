"""Ratings: blind pairwise votes between two results of the same prompt, kept in the history.

A rating says which of two results a person preferred (``left``, ``right``), or that neither
was better (``tie``) or both were bad (``both bad``). It records both task ids, which model was
on which side, the prompt's content address (:func:`genlab.catalog.prompt_address`), each
side's settings, who rated and where, and when. Ratings are only ever added: an undo marks its
row (``undone_at``), and :meth:`Ratings.frame` leaves marked rows out.

A gold vote (``gold="left"`` or ``"right"``: the side known to be better, a result against a
copy of itself that genlab degraded) is kept in the same table and read apart: ``frame`` leaves
gold votes out unless asked (``gold=True`` for only them, ``gold=None`` for every vote), so no
leaderboard counts one. Each vote is one INSERT
in a transaction of its own, so people rating into one PostgreSQL history at once lose none.

Rating never touches the service: nothing here sends anything or costs a credit.

Example:
    >>> import os, tempfile
    >>> from genlab.history import History, RatingEntry
    >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> vote = RatingEntry("task_1", "task_2", "left", left_model="image-b",
    ...                    right_model="image-d", prompt_address="ab12", prompt="a kite")
    >>> rating_id = history.add_rating(vote)
    >>> history.ratings()[["answer", "left_model", "winner"]].values.tolist()
    [['left', 'image-b', 'image-b']]
    >>> history.undo_rating(rating_id), len(history.ratings())
    (True, 0)
    >>> history.close()
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import sqlalchemy as sa

from genlab.history._schema import RATINGS, TASKS
from genlab.history._store import Store
from genlab.history._views import _FILTERS, Filters, _listify, _seconds
from genlab.history._who import Who

if TYPE_CHECKING:
    import pandas as pd

Answer = Literal["left", "right", "tie", "both bad"]
ANSWERS: tuple[Answer, ...] = get_args(Answer)
"""What a person may answer, in the order the rater's buttons show them."""

JUDGE_PREFIX = "judge:"
"""A judge's votes (``genlab.judge``) are recorded with the rater ``judge:NAME@VERSION``;
every other rater is a person."""

RATING_COLUMNS: tuple[str, ...] = (
    "rating_id", "rated_at", "rater", "answer", "left_model", "right_model", "winner",
    "left_task", "right_task", "prompt", "prompt_address", "left_settings", "right_settings",
    "tag", "host", "project", "notebook", "gold",
)
"""The columns of ``History.ratings()``, in order (``winner`` is derived: the preferred side's
model, missing for a tie or both bad; ``gold`` is a gold pair's better side, missing for a
real pair)."""

GoldSide = Literal["left", "right"]

_STORED = tuple(c for c in RATING_COLUMNS if c != "winner")


@dataclass(frozen=True, slots=True)
class RatingEntry:
    """One vote, before it is recorded.

    Attributes:
        left_task, right_task: the task ids shown on each side.
        answer: ``left``, ``right``, ``tie`` or ``both bad``.
        left_model, right_model: the model of each side (which side each model was on).
        prompt_address: :func:`genlab.catalog.prompt_address` of the prompt both answered.
        prompt: the prompt's text, for people reading the table.
        left_settings, right_settings: each side's settings as sent (duration, resolution,
            ...), for leaderboards per model and setting.
        tag: None records the history's current tag.
        rater: who rated; None records the history's user (``$GENLAB_USER`` or the login).
        rated_at: epoch seconds; None is now.
        gold: for a gold pair, the side known to be better (``"left"`` or ``"right"``);
            None for a real pair.

    Example:
        >>> vote = RatingEntry("t1", "t2", "left", "image-b", "image-d", prompt_address="a1",
        ...                    prompt="a kite")
        >>> vote.answer, vote.left_model
        ('left', 'image-b')
    """

    left_task: str
    right_task: str
    answer: Answer
    left_model: str
    right_model: str
    prompt_address: str
    prompt: str | None = None
    left_settings: Mapping[str, Any] = field(default_factory=dict)
    right_settings: Mapping[str, Any] = field(default_factory=dict)
    tag: str | None = None
    rater: str | None = None
    rated_at: float | None = None
    gold: GoldSide | None = None

    def __post_init__(self) -> None:
        if self.gold not in (None, "left", "right"):
            raise ValueError(f"gold must be None, 'left' or 'right', got {self.gold!r}")
        if self.answer not in ANSWERS:
            raise ValueError(f"answer must be one of {list(ANSWERS)}, got {self.answer!r}")
        if self.left_task == self.right_task:
            raise ValueError(f"a task cannot be rated against itself ({self.left_task})")


class Ratings:
    """The ``ratings`` table of ``store``: votes added, taken back, and read as a frame.

    Args:
        store: the history's store.
        who: recorded with every vote (the rater is ``who.user`` unless the entry names one).
        tag: returns the history's current tag, recorded with votes that name none.
    """

    def __init__(self, store: Store, who: Who, tag: Callable[[], str | None]) -> None:
        self._store = store
        self._who = who
        self._tag = tag

    def add(self, entry: RatingEntry) -> str:
        """Record ``entry`` in a transaction of its own; its rating id."""
        rating_id = uuid.uuid4().hex
        row = {
            "rating_id": rating_id,
            "rated_at": entry.rated_at if entry.rated_at is not None else time.time(),
            "answer": entry.answer,
            "left_task": entry.left_task,
            "right_task": entry.right_task,
            "left_model": entry.left_model,
            "right_model": entry.right_model,
            "prompt": entry.prompt,
            "prompt_address": entry.prompt_address,
            "left_settings": _json(entry.left_settings),
            "right_settings": _json(entry.right_settings),
            "tag": entry.tag if entry.tag is not None else self._tag(),
            "rater": entry.rater if entry.rater is not None else self._who.user,
            "host": self._who.host,
            "project": self._who.project,
            "notebook": self._who.notebook,
            "gold": entry.gold,
        }
        with self._store.write() as db:
            db.execute(sa.insert(RATINGS), row)
        return rating_id

    def undo(self, rating_id: str) -> bool:
        """Take a vote back (its row is marked, never deleted); False if there was none."""
        with self._store.write() as db:
            done = db.execute(
                sa.update(RATINGS)
                .where(RATINGS.c.rating_id == rating_id, RATINGS.c.undone_at.is_(None))
                .values(undone_at=time.time())
            )
        return bool(done.rowcount)

    def frame(
        self, filters: Filters, *, tasks: Sequence[str] | None = None,
        columns: Sequence[str] | None = None, gold: bool | None = False,
    ) -> pd.DataFrame:
        """The votes not taken back, oldest first, as a DataFrame (see ``History.ratings``).

        Args:
            filters: as ``History.df``'s, applied to the votes (see ``History.ratings``).
            tasks: keep only votes whose two tasks are both among these.
            columns: only these of :data:`RATING_COLUMNS` (reading fewer is faster).
            gold: False (the default) leaves gold votes out, True keeps only them, None keeps
                every vote.

        Raises:
            TypeError: a filter that does not exist.
            ValueError: a column that does not exist.
        """
        import numpy as np
        import pandas as pd

        unknown = sorted(set(filters) - _FILTERS)
        if unknown:
            raise TypeError(f"unknown filter(s) {unknown}; the filters are {sorted(_FILTERS)}")
        wanted = list(RATING_COLUMNS if columns is None else columns)
        strange = [c for c in wanted if c not in RATING_COLUMNS]
        if strange:
            raise ValueError(f"unknown column(s) {strange}; ratings have {list(RATING_COLUMNS)}")
        fetched = [c for c in _STORED if c in wanted or (c in _WINNER_NEEDS and "winner" in wanted)]
        query = sa.select(*(RATINGS.c[c] for c in fetched)).where(RATINGS.c.undone_at.is_(None))
        query = _filtered(query, filters)
        if gold is not None:
            query = query.where(RATINGS.c.gold.is_not(None) if gold else RATINGS.c.gold.is_(None))
        if tasks is not None:
            ids = sorted(set(tasks))
            query = query.where(RATINGS.c.left_task.in_(ids), RATINGS.c.right_task.in_(ids))
        rows = self._store.tuples(query.order_by(RATINGS.c.rated_at, RATINGS.c.rating_id))
        table = (
            np.array(rows, dtype=object) if rows else np.empty((0, len(fetched)), dtype=object)
        )
        data: dict[str, Any] = {}
        for i, name in enumerate(fetched):
            column = table[:, i]
            if name == "rated_at":
                moments = pd.to_datetime(column.astype("float64"), unit="s", utc=True)
                data[name] = moments.as_unit("ns")
            else:
                data[name] = pd.array(column, dtype="string")
        if "winner" in wanted:
            answer = pd.Series(data["answer"])
            left = pd.Series(data["left_model"])
            right = pd.Series(data["right_model"])
            winner = left.where(answer == "left", right.where(answer == "right"))
            data["winner"] = winner.astype("string").array
        return pd.DataFrame({name: data[name] for name in wanted})


_WINNER_NEEDS = ("answer", "left_model", "right_model")


def _json(settings: Mapping[str, Any]) -> str | None:
    if not settings:
        return None
    return json.dumps(dict(settings), sort_keys=True, separators=(",", ":"), default=str)


def _filtered(query: sa.Select[Any], filters: Filters) -> sa.Select[Any]:
    r = RATINGS.c
    models = _listify(filters.get("model"))
    if models is not None:  # a vote involves a model when either side is it
        query = query.where(sa.or_(r.left_model.in_(models), r.right_model.in_(models)))
    for name, column in (("tag", r.tag), ("user", r.rater), ("host", r.host),
                         ("project", r.project), ("notebook", r.notebook)):
        values = _listify(cast("str | Sequence[str] | None", filters.get(name)))
        if values is not None:
            query = query.where(column.in_(values))
    statuses = _listify(filters.get("status"))
    if statuses is not None:  # both rated tasks are (now) in one of these statuses
        for side in (r.left_task, r.right_task):
            query = query.where(sa.exists().where(
                TASKS.c.task_id == side, TASKS.c.status.in_(statuses)))
    since, until = _seconds(filters.get("since")), _seconds(filters.get("until"))
    if since is not None:
        query = query.where(r.rated_at >= since)
    if until is not None:
        query = query.where(r.rated_at < until)
    return query
