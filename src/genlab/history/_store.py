"""The durable task journal: one SQLite file in WAL mode, written ahead of the network.

Every submission is recorded *before* it is sent; the task id, each status change, results,
errors and timings follow. A process killed at any point leaves a row that says what is known,
and :meth:`History.resume` finishes what was submitted but not seen to the end.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from genlab._wire import TERMINAL_STATUSES, Task, TaskRecord, VideoResult
from genlab.client import DurationSample, PastResult, Reused, SubmitEntry, Work, day_limit_error
from genlab.history._columns import COLUMN, INDEXES, SCHEMA, STORED
from genlab.history._pending import append, merge, open_error, read, side_file

logger = logging.getLogger("genlab")

DEFAULT_PATH = Path(".genlab") / "history.sqlite"

_FINAL = ", ".join(f"'{s}'" for s in sorted(TERMINAL_STATUSES))


def _ts(value: Any) -> float | None:
    return value.timestamp() if value is not None else None


def _iso(seconds: float | None) -> str | None:
    return datetime.fromtimestamp(seconds, UTC).isoformat() if seconds is not None else None


def default_path() -> Path:
    """``$GENLAB_HISTORY``, else ``.genlab/history.sqlite`` in the working directory."""
    return Path(os.environ.get("GENLAB_HISTORY") or DEFAULT_PATH)


class Journal:
    """The SQLite side of :class:`genlab.History`: the journal protocol and raw queries.

    One connection per instance, guarded by a lock (the client writes from its runner thread
    while a notebook reads from the main thread); other processes write through their own
    connections, which WAL mode and a busy timeout let proceed side by side.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=30, check_same_thread=False, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.executescript(SCHEMA)
            self._add_missing_columns()
            self._db.executescript(INDEXES)
        except (sqlite3.Error, OSError) as exc:
            raise open_error(self.path, exc) from exc
        self._tag: str | None = None
        self._merge_pending()

    def _add_missing_columns(self) -> None:
        # A file written by an older genlab lacks newer columns; add them (all nullable).
        present = {row[1] for row in self._db.execute("PRAGMA table_info(tasks)")}
        for name in STORED:
            if name not in present:
                self._db.execute(f"ALTER TABLE tasks ADD COLUMN {name} {COLUMN[name].sql}")

    @property
    def pending_file(self) -> Path:
        """The side file holding accepted task ids the history could not record in time."""
        return side_file(self.path)

    def _merge_pending(self) -> None:
        if not self.pending_file.exists():
            return
        try:
            with self._lock:
                merge(self._db, self.pending_file)
        except (sqlite3.Error, OSError) as exc:
            logger.warning(
                "genlab: could not merge %s into the history yet (%s); resume still reads it",
                self.pending_file, exc,
            )

    # --- plumbing ----------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            self._db.row_factory = sqlite3.Row
            try:
                return list(self._db.execute(sql, params))
            finally:
                self._db.row_factory = None

    @property
    def connection(self) -> sqlite3.Connection:
        return self._db

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- tags --------------------------------------------------------------------------

    @property
    def tag(self) -> str | None:
        """The tag given to submissions from now on (e.g. an experiment's name)."""
        return self._tag

    @tag.setter
    def tag(self, value: str | None) -> None:
        self._tag = value

    @contextmanager
    def tagging(self, tag: str) -> Iterator[None]:
        """Tag every submission made inside the ``with`` block."""
        previous, self._tag = self._tag, tag
        try:
            yield
        finally:
            self._tag = previous

    # --- the journal protocol (called by the client) -----------------------------------

    def submit_started(self, entry: SubmitEntry) -> str:
        entry_id = uuid.uuid4().hex
        now = time.time()
        prompt = entry.body.get("prompt")
        row = {
            "entry_id": entry_id,
            "model": entry.model,
            "kind": entry.kind,
            "mode": entry.mode,
            "state": "sending",
            "tag": self._tag,
            "prompt": prompt if isinstance(prompt, str) else None,
            "resolution": entry.resolution,
            "duration": entry.duration,
            "credits": entry.credits,
            "assumed_credits": entry.assumed_credits,
            "address": entry.address,
            "request": json.dumps(entry.body, ensure_ascii=False),
            "submitted_at": entry.submitted_at.timestamp(),
            "updated_at": now,
        }
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self._write() as db:  # BEGIN IMMEDIATE: no other writer between check and insert
            if entry.day_cap is not None:
                spent = self._day_spent(db, entry.submitted_at.timestamp())
                wanted = entry.counted_credits or 0
                if spent + wanted > entry.day_cap:
                    raise day_limit_error(f"{entry.model}: this task", wanted, spent, entry.day_cap)
            db.execute(f"INSERT INTO tasks ({names}) VALUES ({marks})", list(row.values()))
        return entry_id

    # --- money (the SpendJournal side) ---------------------------------------------------

    @staticmethod
    def _day_spent(db: sqlite3.Connection, moment: float) -> int:
        start = moment - moment % 86400  # the UTC day: epoch seconds have no leap seconds
        row = db.execute(
            "SELECT COALESCE(SUM(COALESCE(credits, assumed_credits, 0)), 0) FROM tasks "
            "WHERE submitted_at >= ? AND submitted_at < ? AND state != 'refused'",
            (start, start + 86400),
        ).fetchone()
        return int(row[0])

    def day_spent(self, moment: datetime) -> int:
        """Credits counted on ``moment``'s UTC day by every process writing this file:
        submissions not refused, at their published price, else their assumed one."""
        with self._lock:
            return self._day_spent(self._db, moment.timestamp())

    def find_results(self, address: str, limit: int = 5) -> list[PastResult]:
        """Succeeded tasks of this content address, newest first (an index lookup)."""
        rows = self.query(
            "SELECT task_id, model, kind, created_at, completed_at, results, paths, "
            "submitted_at, COALESCE(credits, assumed_credits) AS counted FROM tasks "
            "WHERE address=? AND status='succeeded' ORDER BY completed_at DESC LIMIT ?",
            (address, limit),
        )
        found = []
        for r in rows:
            results = json.loads(r["results"]) if r["results"] else []
            media = "videos" if r["kind"] == "video" else "images"
            record = TaskRecord.read({
                "task_id": r["task_id"], "status": "succeeded", "model": r["model"],
                "created_at": _iso(r["created_at"]), "completed_at": _iso(r["completed_at"]),
                media: results,
            }, r["kind"])
            paths = tuple(Path(p) for p in json.loads(r["paths"])) if r["paths"] else ()
            when = datetime.fromtimestamp(r["submitted_at"], UTC)
            found.append(PastResult(record, when, r["counted"], paths))
        return found

    def reuse_recorded(self, address: str, model: str, note: Reused) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO reuses (at, address, task_id, model, tag, credits_saved) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), address, note.task_id, model, self._tag, note.credits_saved),
            )

    def submit_accepted(self, entry_id: str, task: Task) -> None:
        """Record the task id; if the file cannot take it (locked past the busy timeout, disk
        error), keep it in :attr:`pending_file` instead: a billed task never loses its id."""
        now = time.time()
        try:
            with self._write() as db:
                db.execute(
                    "UPDATE tasks SET state='accepted', task_id=?, "
                    "status=COALESCE(status,'queued'), accepted_at=?, created_at=?, updated_at=? "
                    "WHERE entry_id=?",
                    (task.task_id, now, _ts(task.created_at) or now, now, entry_id),
                )
        except (sqlite3.Error, OSError) as exc:
            append(self.pending_file, {
                "entry_id": entry_id, "task_id": task.task_id, "model": task.model,
                "kind": task.kind, "created_at": _ts(task.created_at), "at": now,
            })
            logger.warning(
                "genlab: the history could not record task %s (%s); its id is kept in %s and "
                "merged when the history is next opened", task.task_id, exc, self.pending_file,
            )

    def submit_uncertain(self, entry_id: str, reason: str) -> None:
        self._set_state(entry_id, "uncertain", reason)

    def submit_failed(self, entry_id: str, reason: str) -> None:
        self._set_state(entry_id, "refused", reason)

    def _set_state(self, entry_id: str, state: str, reason: str) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE tasks SET state=?, reason=?, updated_at=? WHERE entry_id=?",
                (state, reason, time.time(), entry_id),
            )

    def status_changed(self, record: TaskRecord) -> None:
        now = time.time()
        results = record.results
        first = results[0] if results else None
        fields: dict[str, Any] = {"status": record.status, "updated_at": now}
        if record.created_at is not None:
            fields["created_at"] = _ts(record.created_at)
        if record.status == "processing":
            fields["started_at"] = now
        if record.done:
            fields["completed_at"] = _ts(record.completed_at) or now
        if record.error is not None:
            fields["error_code"] = record.error.code
            fields["error_message"] = record.error.reason
            fields["error_json"] = record.error.raw_json
        if results:
            fields |= {
                "result_count": len(results),
                "result_url": first.url if first else None,
                "width": first.width if first else None,
                "height": first.height if first else None,
                "media_seconds": first.duration if isinstance(first, VideoResult) else None,
                "results": json.dumps([r.model_dump(mode="json") for r in results]),
            }
        assigns = ", ".join(
            f"{k}=COALESCE({k}, ?)" if k == "started_at" else f"{k}=?" for k in fields
        )
        with self._write() as db:
            db.execute(
                f"UPDATE tasks SET {assigns} WHERE task_id=?", [*fields.values(), record.task_id]
            )
            db.execute(
                "INSERT INTO events (task_id, status, at) VALUES (?, ?, ?)",
                (record.task_id, record.status, now),
            )

    def results_saved(self, task_id: str, paths: Sequence[Path]) -> None:
        with self._write() as db:
            row = db.execute("SELECT paths FROM tasks WHERE task_id=?", (task_id,)).fetchone()
            known = json.loads(row[0]) if row and row[0] else []
            known += [str(p) for p in paths]
            db.execute(
                "UPDATE tasks SET paths=?, updated_at=? WHERE task_id=?",
                (json.dumps(known), time.time(), task_id),
            )

    def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
        """The newest ``limit`` succeeded tasks: what each produced and how long it took.

        Every model, resolution and length is included: the client's duration model learns
        across settings, so a 720P run also informs a 1080P one.
        """
        rows = self.query(
            "SELECT task_id, model, kind, width, height, media_seconds, result_count, "
            "completed_at - created_at AS s FROM tasks WHERE status='succeeded' AND "
            "completed_at IS NOT NULL AND created_at IS NOT NULL "
            "ORDER BY completed_at DESC LIMIT ?",
            (limit,),
        )
        samples = []
        for r in rows:
            if r["s"] is None or r["s"] <= 0:
                continue
            pixels = r["width"] * r["height"] if r["width"] and r["height"] else None
            work = Work(r["model"], r["kind"], pixels, r["media_seconds"], r["result_count"] or 1)
            samples.append(DurationSample(work, float(r["s"]), r["task_id"]))
        return samples

    # --- bulk and queries --------------------------------------------------------------

    def append_many(self, rows: Sequence[dict[str, Any]]) -> int:
        """Insert finished rows in one transaction (imports, tests, benchmarks)."""
        names = ", ".join(STORED)
        marks = ", ".join("?" for _ in STORED)
        now = time.time()
        values = [[row.get(c, now if c == "updated_at" else None) for c in STORED] for row in rows]
        with self._write() as db:
            db.executemany(f"INSERT INTO tasks ({names}) VALUES ({marks})", values)
        return len(values)

    def unfinished(self) -> list[Mapping[str, Any]]:
        """Accepted tasks not seen to the end (resumable), oldest first; then task ids kept
        in :attr:`pending_file` that could not be merged into the file yet."""
        self._merge_pending()
        rows: list[Mapping[str, Any]] = [dict(row) for row in self.query(
            "SELECT * FROM tasks WHERE state='accepted' AND task_id IS NOT NULL AND "
            f"(status IS NULL OR status NOT IN ({_FINAL})) ORDER BY submitted_at"
        )]
        seen = {row["task_id"] for row in rows}
        for row in read(self.pending_file):
            if row["task_id"] not in seen:
                seen.add(row["task_id"])
                rows.append({"model": "", "kind": None, "created_at": None, **row})
        return rows

    def uncertain(self) -> list[sqlite3.Row]:
        """Submissions that may have been billed without a task id."""
        return self.query(
            "SELECT * FROM tasks WHERE state IN ('uncertain','sending') ORDER BY submitted_at"
        )
