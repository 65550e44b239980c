"""Copying one history into another: a laptop's SQLite file into the team's database.

``genlab history migrate SRC DST`` runs :func:`copy_history`. It is idempotent: a submission
already in the destination (the same ``entry_id``) is left as it is, with its events, so running
it twice, or after a colleague ran it, adds nothing twice. Ratings come along the same way (a
vote already there, the same ``rating_id``, is not copied again).

Example:
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> from genlab.history import History
    >>> History(os.path.join(folder, "a.sqlite")).close()
    >>> copy_history(os.path.join(folder, "a.sqlite"), os.path.join(folder, "b.sqlite"))
    Copied(tasks=0, skipped=0, events=0, reuses=0, ratings=0)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from genlab._errors import ConfigurationError
from genlab.history._location import locate
from genlab.history._pending import Pending
from genlab.history._schema import EVENTS, RATINGS, REUSES, TASKS
from genlab.history._store import Store

_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Copied:
    """What :func:`copy_history` did: submissions copied and skipped (already there), and the
    status events and reuse notes that came with the copied ones, and the votes copied."""

    tasks: int
    skipped: int
    events: int
    reuses: int
    ratings: int = 0


def copy_history(
    source: str | os.PathLike[str], destination: str | os.PathLike[str]
) -> Copied:
    """Copy every submission of ``source`` that ``destination`` lacks, with its events.

    Both are history locations (a path, ``sqlite:///...`` or ``postgresql://...``). The
    destination is created or upgraded as needed; the source must exist.

    Raises:
        ConfigurationError: the source does not exist, or both are the same history.
    """
    where = locate(source)
    if where.path is not None and not where.path.is_file():
        raise ConfigurationError(
            f"no history at {where.shown}: give the SQLite file to copy (by default "
            ".genlab/history.sqlite in the folder the notebooks ran in)"
        )
    if locate(destination).shown == where.shown:
        raise ConfigurationError(f"{where.shown} is both the source and the destination")
    src = _opened(source)
    try:
        dst = _opened(destination)
        try:
            return _copy(src, dst)
        finally:
            dst.close()
    finally:
        src.close()


def _opened(location: str | os.PathLike[str]) -> Store:
    # As a History opens it: task ids kept in its side file are merged first, so they come along.
    store = Store(location)
    Pending(store.where, store.write).merge()
    return store


def _copy(src: Store, dst: Store) -> Copied:
    tasks = skipped = events = reuses = 0
    names = [c.name for c in TASKS.columns]
    offset = 0
    while True:
        batch = [dict(r._mapping) for r in src.rows(
            sa.select(TASKS).order_by(TASKS.c.entry_id).offset(offset).limit(_BATCH))]
        if not batch:
            break
        offset += len(batch)
        wanted = [r["entry_id"] for r in batch]
        present = {r.entry_id for r in dst.rows(
            sa.select(TASKS.c.entry_id).where(TASKS.c.entry_id.in_(wanted)))}
        new = [r for r in batch if r["entry_id"] not in present]
        skipped += len(batch) - len(new)
        if not new:
            continue
        rows: list[dict[str, Any]] = [
            {c: (None if c in ("lease_owner", "lease_until") else r.get(c)) for c in names}
            for r in new
        ]
        with dst.write() as db:  # one transaction per batch
            # A task id may already be there under another entry (journaled on two machines):
            # the insert skips such a row instead of failing the batch.
            db.execute(_insert_ignoring(dst), rows)
            landed = [r.task_id for r in db.execute(
                sa.select(TASKS.c.entry_id, TASKS.c.task_id)
                .where(TASKS.c.entry_id.in_([r["entry_id"] for r in new]))
            )]
            ids = sorted(t for t in landed if t is not None)
            moved_events = [dict(r._mapping) for r in src.rows(
                sa.select(EVENTS).where(EVENTS.c.task_id.in_(ids)))] if ids else []
            moved_reuses = [dict(r._mapping) for r in src.rows(
                sa.select(REUSES).where(REUSES.c.task_id.in_(ids)))] if ids else []
            if moved_events:
                db.execute(sa.insert(EVENTS), moved_events)
            if moved_reuses:
                db.execute(sa.insert(REUSES), moved_reuses)
        tasks += len(landed)
        skipped += len(rows) - len(landed)
        events += len(moved_events)
        reuses += len(moved_reuses)
    return Copied(tasks, skipped, events, reuses, _copy_ratings(src, dst))


def _copy_ratings(src: Store, dst: Store) -> int:
    copied = offset = 0
    while True:
        batch = [dict(r._mapping) for r in src.rows(
            sa.select(RATINGS).order_by(RATINGS.c.rating_id).offset(offset).limit(_BATCH))]
        if not batch:
            return copied
        offset += len(batch)
        present = {r.rating_id for r in dst.rows(sa.select(RATINGS.c.rating_id).where(
            RATINGS.c.rating_id.in_([r["rating_id"] for r in batch])))}
        new = [r for r in batch if r["rating_id"] not in present]
        if new:
            with dst.write() as db:
                db.execute(sa.insert(RATINGS), new)
            copied += len(new)


def _insert_ignoring(store: Store) -> sa.Insert:
    if store.backend == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(TASKS).on_conflict_do_nothing()
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(TASKS).on_conflict_do_nothing()
