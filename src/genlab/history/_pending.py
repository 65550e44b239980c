"""The history's safety net for billed tasks, and its errors on opening.

When the service accepted a submission but the history cannot record the task id (the file is
locked by another process past the busy timeout, the disk is full, the file went read-only),
the id is appended to a small side file next to the history, ``<history>.accepted.jsonl``,
one JSON object per line, flushed and fsynced. :class:`~genlab.History` merges it on open and
``resume`` reads it, so a billed task is never left without its id in durable storage.

Example:
    >>> import tempfile, os
    >>> side = side_file(Path(tempfile.mkdtemp()) / "h.sqlite")
    >>> append(side, {"entry_id": "e1", "task_id": "t/1"})
    >>> [row["task_id"] for row in read(side)]
    ['t/1']
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from genlab._errors import GenlabError
from genlab.history._location import DEFAULT_PATH, Location

logger = logging.getLogger("genlab")


class Pending:
    """The side file of one history: where its accepted task ids go when the history cannot
    take them, merged back by :meth:`merge` and read by resume (:meth:`rows`)."""

    def __init__(
        self, where: Location, write: Callable[[], AbstractContextManager[sa.Connection]]
    ) -> None:
        if where.path is not None:
            self.file = side_file(where.path)
        else:  # a database server's history: a local file named after it
            digest = hashlib.sha256(where.shown.encode()).hexdigest()[:12]
            self.file = DEFAULT_PATH.parent / f"team-{digest}.accepted.jsonl"
        self._write = write

    def keep(self, row: dict[str, Any]) -> None:
        """Keep one accepted task id (``entry_id``, ``task_id``, ...), durably."""
        append(self.file, row)

    def merge(self) -> None:
        """Write the kept ids into the history, then remove the file; if the history cannot
        take them yet, the file stays (and resume still reads it)."""
        rows = read(self.file)
        if not rows:
            self.file.unlink(missing_ok=True)
            return
        try:
            with self._write() as db:
                merge(db, rows)
            self.file.unlink(missing_ok=True)  # only once the rows are committed
            logger.info("genlab: merged %d accepted task id(s) from %s", len(rows), self.file)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            logger.warning(
                "genlab: could not merge %s into the history yet (%s); resume still reads it",
                self.file, exc,
            )

    def rows(self, seen: set[str]) -> list[Mapping[str, Any]]:
        """The kept rows whose task ids are not in ``seen`` (which they are added to), as
        resumable rows."""
        extra: list[Mapping[str, Any]] = []
        for row in read(self.file):
            if row["task_id"] not in seen:
                seen.add(row["task_id"])
                extra.append({"model": "", "kind": None, "created_at": None, **row})
        return extra


def side_file(history: Path) -> Path:
    """Where accepted task ids go when ``history`` cannot take them."""
    return history.with_name(history.name + ".accepted.jsonl")


def append(side: Path, row: dict[str, Any]) -> None:
    """Append one row, durably (flushed and fsynced before returning)."""
    line = json.dumps(row, ensure_ascii=False) + "\n"
    with side.open("a", encoding="utf-8") as out:
        out.write(line)
        out.flush()
        os.fsync(out.fileno())


def read(side: Path) -> list[dict[str, Any]]:
    """Every readable row of the side file (a torn last line is skipped)."""
    try:
        text = side.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("task_id"), str):
            rows.append(row)
    return rows


def merge(db: sa.Connection, rows: list[dict[str, Any]]) -> int:
    """Write side-file rows' task ids into the history, inside ``db``'s transaction.

    Returns how many rows were given. A row already holding its task id is left alone. The
    caller removes the side file only once the transaction committed; until then resume
    still reads it.
    """
    statement = sa.text(
        "UPDATE tasks SET state='accepted', task_id=:task_id, status=COALESCE(status,'queued'),"
        " accepted_at=:at, created_at=COALESCE(created_at, :created), updated_at=:at "
        "WHERE entry_id=:entry_id AND task_id IS NULL"
    )
    for row in rows:
        db.execute(statement, {
            "task_id": row["task_id"], "at": row.get("at"),
            "created": row.get("created_at") or row.get("at"), "entry_id": row.get("entry_id"),
        })
    return len(rows)


def open_error(where: str, exc: BaseException, *, sqlite: bool = True) -> GenlabError:
    """A clear error for a history that cannot be opened: which one, why, what to do."""
    text = str(exc).lower()
    if not sqlite:
        return GenlabError(
            f"cannot open the task history {where}: {type(exc).__name__}: {_first_line(exc)}. "
            "Check that the database server is running and reachable, that the database "
            "exists and that the user may create tables in it, or use another location with "
            "genlab.History(url) / GENLAB_HISTORY"
        )
    path = where
    if "not a database" in text or "malformed" in text or "encrypted" in text:
        why = (
            "it is not a readable SQLite database (corrupt, or another kind of file). Move it "
            "aside (keep it: it may hold task ids) and open the history again to start a new "
            "one, or pass another path to genlab.History(...) / set GENLAB_HISTORY"
        )
    elif "locked" in text or "busy" in text:
        why = (
            "another process holds its lock (a second notebook, a database browser). Close "
            "that program, or use another file with genlab.History(path) / GENLAB_HISTORY"
        )
    elif "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        why = (
            "it (or its folder) cannot be written. Fix its permissions, or use a writable "
            "path with genlab.History(path) / GENLAB_HISTORY"
        )
    else:
        why = (
            f"{type(exc).__name__}: {exc}. Check that the folder exists and can be written, or "
            "use another path with genlab.History(path) / GENLAB_HISTORY"
        )
    return GenlabError(f"cannot open the task history {path}: {why}")


def _first_line(exc: BaseException) -> str:
    # A driver's message without SQLAlchemy's trailing SQL and help links.
    text = str(getattr(exc, "orig", None) or exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__
