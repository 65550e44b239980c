"""Experiments' cells and the scores of kept results, kept in the history.

A cell is one planned generation of an experiment: a prompt version filled with one set of
variables, on one model, with one seed. Its row is written before anything is sent, and its
task id as soon as the service accepted it, so a later process finds what was already paid for.
A score is the number a scorer gave one task's kept media (None where it could not judge).

Example:
    >>> import os, tempfile
    >>> from genlab.history import History
    >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> cell = {"cell": "c1", "prompt_name": "kite", "prompt_version": 1,
    ...         "variables": {"subject": "kite"}, "model": "image-b", "seed": 1,
    ...         "address": "ab12"}
    >>> history.plan_cells("kite-study", [cell])
    1
    >>> history.cell_task("kite-study", "c1", "task_1")
    >>> [c["task_id"] for c in history.experiment_cells("kite-study")]
    ['task_1']
    >>> history.save_scores("task_1", {"sharpness": 12.5, "motion": None})
    >>> history.scores(["task_1"])
    {'task_1': {'motion': None, 'sharpness': 12.5}}
    >>> history.close()
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from genlab.history._schema import EXPERIMENT_CELLS, SCORES
from genlab.history._store import Store


class Experiments:
    """The ``experiment_cells`` and ``scores`` tables of ``store``."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def plan(self, experiment: str, cells: Sequence[Mapping[str, Any]]) -> int:
        """Record the cells not recorded yet (by their ``cell`` key); how many were new."""
        known = {str(r[0]) for r in self._store.rows(  # the keys alone: no row is parsed
            sa.select(EXPERIMENT_CELLS.c.cell).where(EXPERIMENT_CELLS.c.experiment == experiment))}
        now = time.time()
        new = [
            {"experiment": experiment, "cell": c["cell"], "prompt_name": c["prompt_name"],
             "prompt_version": int(c["prompt_version"]),
             "variables": json.dumps(dict(c["variables"]), sort_keys=True),
             "model": c["model"], "seed": c.get("seed"), "address": c.get("address"),
             "task_id": c.get("task_id"), "created_at": now}
            for c in cells if c["cell"] not in known
        ]
        if new:
            with self._store.write() as db:
                db.execute(sa.insert(EXPERIMENT_CELLS), new)
        return len(new)

    def cells(self, experiment: str) -> list[dict[str, Any]]:
        """The recorded cells of ``experiment``, variables parsed, in the order recorded."""
        rows = self._store.tuples(
            sa.select(EXPERIMENT_CELLS).where(EXPERIMENT_CELLS.c.experiment == experiment)
            .order_by(EXPERIMENT_CELLS.c.created_at, EXPERIMENT_CELLS.c.cell)
        )
        names = list(EXPERIMENT_CELLS.c.keys())  # the driver's tuples: Row mappings are slower
        out = []
        for row in rows:
            cell = dict(zip(names, row, strict=True))
            cell["variables"] = json.loads(cell["variables"])
            out.append(cell)
        return out

    def cell_tasks(self, experiment: str) -> dict[str, str | None]:
        """Each recorded cell's task id (None until one was accepted), in the order recorded;
        no variables parsed (what a reopened experiment reads)."""
        c = EXPERIMENT_CELLS.c
        rows = self._store.tuples(sa.select(c.cell, c.task_id).where(c.experiment == experiment)
                                  .order_by(c.created_at, c.cell))
        return {str(cell): None if task is None else str(task) for cell, task in rows}

    def assign(self, experiment: str, cell: str, task_id: str | None) -> None:
        """Record which task answers ``cell`` (None forgets it: the cell is to be run again)."""
        with self._store.write() as db:
            db.execute(
                sa.update(EXPERIMENT_CELLS)
                .where(EXPERIMENT_CELLS.c.experiment == experiment,
                       EXPERIMENT_CELLS.c.cell == cell)
                .values(task_id=task_id)
            )

    def experiments(self) -> list[str]:
        """The names of every experiment with recorded cells."""
        rows = self._store.rows(sa.select(EXPERIMENT_CELLS.c.experiment).distinct())
        return sorted(str(r[0]) for r in rows)

    def save_scores(self, task_id: str, scores: Mapping[str, float | None]) -> None:
        """Record ``task_id``'s scores (replacing earlier ones by the same scorers)."""
        if not scores:
            return
        now = time.time()
        with self._store.write() as db:
            db.execute(sa.delete(SCORES).where(SCORES.c.task_id == task_id,
                                               SCORES.c.scorer.in_(list(scores))))
            db.execute(sa.insert(SCORES), [
                {"task_id": task_id, "scorer": name,
                 "value": None if value is None else float(value), "scored_at": now}
                for name, value in scores.items()
            ])

    def scores(self, task_ids: Iterable[str]) -> dict[str, dict[str, float | None]]:
        """Task id -> scorer -> value, for those of ``task_ids`` that have scores."""
        out: dict[str, dict[str, float | None]] = {}
        rows = self._store.tuples_in(
            sa.select(SCORES.c.task_id, SCORES.c.scorer, SCORES.c.value)
            .order_by(SCORES.c.task_id, SCORES.c.scorer),
            SCORES.c.task_id, task_ids,
        )
        for task_id, scorer, value in rows:
            out.setdefault(str(task_id), {})[str(scorer)] = (
                None if value is None else float(value))
        return out
