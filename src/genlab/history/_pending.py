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

import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

from genlab._errors import GenlabError

logger = logging.getLogger("genlab")


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


def merge(db: sqlite3.Connection, side: Path) -> int:
    """Write the side file's task ids into the history, then remove the file.

    Returns how many rows were merged. A row already holding its task id is left alone. If
    the history cannot be written the file stays, to be merged (and read by resume) later.
    """
    rows = read(side)
    if not rows:
        side.unlink(missing_ok=True)
        return 0
    db.execute("BEGIN IMMEDIATE")
    try:
        for row in rows:
            db.execute(
                "UPDATE tasks SET state='accepted', task_id=?, status=COALESCE(status,'queued'),"
                " accepted_at=?, created_at=COALESCE(created_at, ?), updated_at=? "
                "WHERE entry_id=? AND task_id IS NULL",
                (row["task_id"], row.get("at"), row.get("created_at") or row.get("at"),
                 row.get("at"), row.get("entry_id")),
            )
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    side.unlink(missing_ok=True)
    logger.info("genlab: merged %d accepted task id(s) from %s", len(rows), side)
    return len(rows)


def open_error(path: Path, exc: BaseException) -> GenlabError:
    """A clear error for a history file that cannot be opened: which file, why, what to do."""
    text = str(exc).lower()
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
