"""The durable task journal, written ahead of the network, in SQLite or PostgreSQL.

Every submission is recorded *before* it is sent; the task id, each status change, results,
errors and timings follow. A process killed at any point leaves a row that says what is known,
and :meth:`History.resume` finishes what was submitted but not seen to the end. One
implementation (SQLAlchemy Core) serves a local SQLite file and a team's PostgreSQL database.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from genlab._wire import TERMINAL_STATUSES, Task, TaskRecord, VideoResult
from genlab.client.journal import (
    DurationSample,
    PastResult,
    Reused,
    SubmitEntry,
    Work,
    day_limit_error,
)
from genlab.history._database import Database
from genlab.history._leases import Leases
from genlab.history._location import DEFAULT_PATH, locate
from genlab.history._pending import append, merge, read, side_file
from genlab.history._schema import EVENTS, REUSES, TASKS
from genlab.history._who import Who

logger = logging.getLogger("genlab")

_FINAL = sorted(TERMINAL_STATUSES)
_BUDGET_LOCK = 0x67656E6C6162 + 1  # the advisory lock a capped submission takes on PostgreSQL
_T = TASKS.c


def _ts(value: Any) -> float | None:
    return value.timestamp() if value is not None else None


def _iso(seconds: float | None) -> str | None:
    return datetime.fromtimestamp(seconds, UTC).isoformat() if seconds is not None else None


def default_path() -> Path:
    """``$GENLAB_HISTORY`` when it is a path, else ``.genlab/history.sqlite``."""
    where = locate(None)
    return where.path if where.path is not None else DEFAULT_PATH


def _unfinished() -> sa.ColumnElement[bool]:
    return sa.and_(
        _T.state == "accepted", _T.task_id.is_not(None),
        sa.or_(_T.status.is_(None), _T.status.not_in(_FINAL)),
    )


class Journal(Database):
    """The storage side of :class:`genlab.History`: the journal protocol, tags and leases.

    Args:
        location: a path, ``sqlite:///path`` or ``postgresql://user@host/db``; None reads
            ``$GENLAB_HISTORY``, else ``.genlab/history.sqlite``.
        project: recorded with every submission (``$GENLAB_PROJECT`` when not given).
        lease_seconds: how long a task waited on by this process stays its own without a
            renewal; a crashed process's tasks are taken over by ``resume`` after this.
    """

    def __init__(
        self,
        location: str | os.PathLike[str] | None = None,
        *,
        project: str | None = None,
        lease_seconds: float = 60.0,
    ) -> None:
        super().__init__(location)
        self.who = Who.here(project)
        self._tag: str | None = None
        self._leases = Leases(self._write, self.who.user, self.who.host, lease_seconds)
        self._merge_pending()

    @property
    def path(self) -> Path:
        """The SQLite file (for a PostgreSQL history: its local side file's folder)."""
        return self.where.path if self.where.path is not None else self.pending_file.parent

    @property
    def pending_file(self) -> Path:
        """The local side file holding accepted task ids the history could not record in time."""
        if self.where.path is not None:
            return side_file(self.where.path)
        digest = hashlib.sha256(self.where.shown.encode()).hexdigest()[:12]
        return DEFAULT_PATH.parent / f"team-{digest}.accepted.jsonl"

    def _merge_pending(self) -> None:
        rows = read(self.pending_file)
        if not rows:
            self.pending_file.unlink(missing_ok=True)
            return
        try:
            with self._write() as db:
                merge(db, rows)
            self.pending_file.unlink(missing_ok=True)  # only once the rows are committed
            logger.info("genlab: merged %d accepted task id(s) from %s", len(rows),
                        self.pending_file)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            logger.warning(
                "genlab: could not merge %s into the history yet (%s); resume still reads it",
                self.pending_file, exc,
            )

    def close(self) -> None:
        """Hand this process's leases back (another may resume its tasks at once), then close."""
        self._leases.release()
        super().close()

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
        prompt = entry.body.get("prompt")
        row = {
            "entry_id": entry_id,
            "model": entry.model,
            "kind": entry.kind,
            "mode": entry.mode,
            "state": "sending",
            "tag": self._tag,
            **self.who.columns(),
            "prompt": prompt if isinstance(prompt, str) else None,
            "resolution": entry.resolution,
            "duration": entry.duration,
            "credits": entry.credits,
            "assumed_credits": entry.assumed_credits,
            "address": entry.address,
            "request": json.dumps(entry.body, ensure_ascii=False),
            "submitted_at": entry.submitted_at.timestamp(),
            "updated_at": time.time(),
        }
        with self._write() as db:  # no other writer between the check and the insert
            if entry.day_cap is not None:
                if self.backend == "postgresql":  # every machine's capped submits, in turn
                    db.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _BUDGET_LOCK})
                spent = self._day_spent(db, entry.submitted_at.timestamp())
                wanted = entry.counted_credits or 0
                if spent + wanted > entry.day_cap:
                    raise day_limit_error(f"{entry.model}: this task", wanted, spent, entry.day_cap)
            db.execute(sa.insert(TASKS).values(row))
        return entry_id

    # --- money (the SpendJournal side) ---------------------------------------------------

    @staticmethod
    def _day_spent(db: sa.Connection, moment: float) -> int:
        start = moment - moment % 86400  # the UTC day: epoch seconds have no leap seconds
        total = db.execute(
            sa.select(sa.func.coalesce(sa.func.sum(
                sa.func.coalesce(_T.credits, _T.assumed_credits, 0)), 0))
            .where(_T.submitted_at >= start, _T.submitted_at < start + 86400,
                   _T.state != "refused")
        ).scalar()
        return int(total or 0)

    def day_spent(self, moment: datetime) -> int:
        """Credits counted on ``moment``'s UTC day by every process writing this history:
        submissions not refused, at their published price, else their assumed one."""
        with self._read() as db:
            return self._day_spent(db, moment.timestamp())

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        """The body submitted for ``task_id``, as it was sent; None for an unknown task."""
        found = self.rows(sa.select(_T.request).where(_T.task_id == task_id).limit(1))
        if not found or not found[0].request:
            return None
        body = json.loads(found[0].request)
        return body if isinstance(body, dict) else None

    def find_results(self, address: str, limit: int = 5) -> list[PastResult]:
        """Succeeded tasks of this content address, newest first (an index lookup)."""
        found = []
        for r in self.rows(
            sa.select(_T.task_id, _T.model, _T.kind, _T.created_at, _T.completed_at, _T.results,
                      _T.paths, _T.submitted_at,
                      sa.func.coalesce(_T.credits, _T.assumed_credits).label("counted"))
            .where(_T.address == address, _T.status == "succeeded")
            .order_by(_T.completed_at.desc()).limit(limit)
        ):
            results = json.loads(r.results) if r.results else []
            media = "videos" if r.kind == "video" else "images"
            record = TaskRecord.read({
                "task_id": r.task_id, "status": "succeeded", "model": r.model,
                "created_at": _iso(r.created_at), "completed_at": _iso(r.completed_at),
                media: results,
            }, r.kind)
            paths = tuple(_saved(p) for p in json.loads(r.paths)) if r.paths else ()
            when = datetime.fromtimestamp(r.submitted_at, UTC)
            found.append(PastResult(record, when, r.counted, paths))
        return found

    def reuse_recorded(self, address: str, model: str, note: Reused) -> None:
        with self._write() as db:
            db.execute(sa.insert(REUSES).values(
                at=time.time(), address=address, task_id=note.task_id, model=model,
                tag=self._tag, credits_saved=note.credits_saved,
            ))

    def submit_accepted(self, entry_id: str, task: Task) -> None:
        """Record the task id (leased to this process while it waits); if the history cannot
        take it (locked past the busy timeout, disk error, database gone), keep it in
        :attr:`pending_file` instead: a billed task never loses its id."""
        now = time.time()
        try:
            with self._write() as db:
                db.execute(
                    sa.update(TASKS).where(_T.entry_id == entry_id).values(
                        state="accepted", task_id=task.task_id,
                        status=sa.func.coalesce(_T.status, "queued"), accepted_at=now,
                        created_at=_ts(task.created_at) or now, updated_at=now,
                        **self._leases.taken(now),
                    )
                )
            self._leases.holding()
        except (sa.exc.SQLAlchemyError, OSError) as exc:
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
            db.execute(sa.update(TASKS).where(_T.entry_id == entry_id).values(
                state=state, reason=reason, updated_at=time.time()))

    def status_changed(self, record: TaskRecord) -> None:
        now = time.time()
        results = record.results
        first = results[0] if results else None
        fields: dict[str, Any] = {"status": record.status, "updated_at": now}
        if record.created_at is not None:
            fields["created_at"] = _ts(record.created_at)
        if record.status == "processing":
            fields["started_at"] = sa.func.coalesce(_T.started_at, now)
        if record.done:
            fields["completed_at"] = _ts(record.completed_at) or now
            fields["lease_until"] = None  # nobody needs to wait on it any more
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
        with self._write() as db:
            db.execute(sa.update(TASKS).where(_T.task_id == record.task_id).values(fields))
            db.execute(sa.insert(EVENTS).values(task_id=record.task_id, status=record.status,
                                                at=now))

    def results_saved(self, task_id: str, paths: Sequence[str | os.PathLike[str]]) -> None:
        """The task's results were saved to ``paths`` (local files or storage URLs)."""
        with self._write() as db:
            known_text = db.execute(sa.select(_T.paths).where(_T.task_id == task_id)).scalar()
            known = json.loads(known_text) if known_text else []
            known += [os.fspath(p) for p in paths]
            db.execute(sa.update(TASKS).where(_T.task_id == task_id).values(
                paths=json.dumps(known), updated_at=time.time()))

    def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
        """The newest ``limit`` succeeded tasks: what each produced and how long it took.

        Every model, resolution and length is included, from every machine writing this
        history: the client's duration model learns across settings and across the team.
        """
        samples = []
        for r in self.rows(
            sa.select(_T.task_id, _T.model, _T.kind, _T.width, _T.height, _T.media_seconds,
                      _T.result_count, (_T.completed_at - _T.created_at).label("s"))
            .where(_T.status == "succeeded", _T.completed_at.is_not(None),
                   _T.created_at.is_not(None))
            .order_by(_T.completed_at.desc()).limit(limit)
        ):
            if r.s is None or r.s <= 0:
                continue
            pixels = r.width * r.height if r.width and r.height else None
            work = Work(r.model, r.kind, pixels, r.media_seconds, r.result_count or 1)
            samples.append(DurationSample(work, float(r.s), r.task_id))
        return samples

    # --- bulk and queries --------------------------------------------------------------

    def append_many(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert finished rows in one transaction (imports, tests, benchmarks)."""
        now = time.time()
        names = [c.name for c in TASKS.columns]
        values = [tuple(row.get(c, now if c == "updated_at" else None) for c in names)
                  for row in rows]
        if values:
            with self._write() as db:
                quote = db.dialect.identifier_preparer.quote
                columns = ", ".join(quote(c) for c in names)
                driver = db.connection.driver_connection
                if self.backend == "sqlite":  # the driver's executemany on plain tuples: ~2x
                    # the rows per second of SQLAlchemy's per-row parameter processing
                    cursor = driver.cursor()  # type: ignore[union-attr]
                    cursor.executemany(
                        f"INSERT INTO tasks ({columns}) VALUES ({', '.join('?' * len(names))})",
                        values,
                    )
                elif db.dialect.driver == "psycopg":
                    # COPY streams the rows as one statement. An INSERT per row (psycopg's
                    # executemany, which SQLAlchemy uses when nothing is returned) sends them
                    # pipelined and stalls ~200 ms whenever the socket's buffers fill; multi-row
                    # INSERTs of ~860 rows x 38 parameters are slower still to parse and plan.
                    with driver.cursor().copy(  # type: ignore[union-attr]
                        f"COPY tasks ({columns}) FROM STDIN"
                    ) as copy:
                        for value in values:
                            copy.write_row(value)
                else:  # psycopg2: SQLAlchemy's batched INSERTs
                    db.execute(sa.insert(TASKS), [dict(zip(names, v, strict=True))
                                                  for v in values])
        return len(values)

    def unfinished(self) -> list[Mapping[str, Any]]:
        """Accepted tasks not seen to the end (resumable), oldest first; then task ids kept
        in :attr:`pending_file` that could not be merged into the history yet."""
        self._merge_pending()
        found = [dict(r._mapping) for r in self.rows(
            sa.select(TASKS).where(_unfinished()).order_by(_T.submitted_at))]
        return found + self._pending_rows({r["task_id"] for r in found})

    def claim_unfinished(self) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """Lease the unfinished tasks no live process is waiting on; (claimed, held elsewhere).

        Two processes resuming at once never claim the same task: on PostgreSQL the rows are
        locked (``FOR UPDATE SKIP LOCKED``), on SQLite the file's write lock is held.
        """
        self._merge_pending()
        now = time.time()
        query = sa.select(TASKS).where(_unfinished()).order_by(_T.submitted_at)
        if self.backend == "postgresql":
            query = query.with_for_update(skip_locked=True)
        with self._write() as db:
            rows: list[Mapping[str, Any]] = [dict(r._mapping) for r in db.execute(query)]
            mine = [r for r in rows if self._leases.free(r, now)]
            if mine:
                db.execute(sa.update(TASKS).where(
                    _T.entry_id.in_([r["entry_id"] for r in mine])
                ).values(self._leases.taken(now)))
        if mine:
            self._leases.holding()
        taken = {r["task_id"] for r in rows}
        elsewhere: list[Mapping[str, Any]] = [r for r in rows if r not in mine]
        return mine + self._pending_rows(taken), elsewhere

    def _pending_rows(self, seen: set[str]) -> list[Mapping[str, Any]]:
        extra: list[Mapping[str, Any]] = []
        for row in read(self.pending_file):
            if row["task_id"] not in seen:
                seen.add(row["task_id"])
                extra.append({"model": "", "kind": None, "created_at": None, **row})
        return extra

    def uncertain(self) -> list[Mapping[str, Any]]:
        """Submissions that may have been billed without a task id."""
        return [dict(r._mapping) for r in self.rows(
            sa.select(TASKS).where(_T.state.in_(["uncertain", "sending"]))
            .order_by(_T.submitted_at))]


def _saved(location: str) -> Path | str:
    # A storage URL stays a string (Path would fold its "//"); a local file becomes a Path.
    return location if "://" in location else Path(location)
