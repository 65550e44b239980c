"""The journal the client writes: every submission recorded before it is sent, then its task
id, status changes, saved results; and the money side (earlier results by content address,
reuses, the UTC day's credits under a cap). It implements :class:`genlab.client.journal.
TaskJournal` and :class:`~genlab.client.journal.SpendJournal` on a :class:`Store`.

A process killed at any point leaves a row that says what is known; resume
(:mod:`genlab.history._resume`) finishes what was submitted but not seen to the end.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from genlab._wire import Task, TaskRecord, VideoResult
from genlab.client.journal import (
    DurationSample,
    PastResult,
    Reused,
    SubmitEntry,
    Work,
)
from genlab.history._leases import Leases
from genlab.history._pending import Pending
from genlab.history._schema import EVENTS, EXPERIMENT_CELLS, REUSES, TASKS
from genlab.history._store import Store
from genlab.history._who import Who
from genlab.media import MediaInfo

logger = logging.getLogger("genlab")

_BUDGET_LOCK = 0x67656E6C6162 + 1  # the advisory lock a capped submission takes on PostgreSQL
_T = TASKS.c


def _ts(value: Any) -> float | None:
    return value.timestamp() if value is not None else None


def _iso(seconds: float | None) -> str | None:
    return datetime.fromtimestamp(seconds, UTC).isoformat() if seconds is not None else None


class Journal:
    """The client's journal on ``store``: who submits (recorded with every row), the tag of
    new submissions, the leases of tasks this process waits on, and the side file that keeps
    an accepted task id the store could not take.

    Example:
        >>> import os, tempfile
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> leases = Leases(store.write, "ana", "lab-3", 60.0)
        >>> journal = Journal(store, Who("ana", "lab-3", None, None), leases,
        ...                   Pending(store.where, store.write))
        >>> journal.day_spent(datetime.now(UTC)), journal.find_results("no-such-address")
        (0, [])
        >>> store.close()
    """

    def __init__(self, store: Store, who: Who, leases: Leases, pending: Pending) -> None:
        self._store = store
        self.who = who
        self._leases = leases
        self._pending = pending
        self._tag: str | None = None
        # The experiment cell each entry in flight fills (from its labels): its task id is
        # recorded against the cell in the same write as the task's own acceptance.
        self._cells: dict[str, tuple[str, str]] = {}

    # --- tags --------------------------------------------------------------------------

    @property
    def tag(self) -> str | None:
        """The tag given to submissions from now on that carry none of their own (a
        submission's :class:`~genlab.client.journal.Labels` win: they travel with it)."""
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
        labels = entry.labels
        tag = entry.tag if entry.tag is not None else self._tag
        row = {
            "entry_id": entry_id,
            "model": entry.model,
            "kind": entry.kind,
            "mode": entry.mode,
            "state": "sending",
            "tag": tag,
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
        with self._store.write() as db:  # no other writer between the check and the insert
            if entry.day_cap is not None:
                if self._store.backend == "postgresql":  # every machine's capped submits, in turn
                    db.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _BUDGET_LOCK})
                refusal = entry.over_the_day(self._day_spent(db, entry.submitted_at.timestamp()))
                if refusal is not None:
                    raise refusal.error()
            db.execute(sa.insert(TASKS).values(row))
        if labels is not None and labels.experiment is not None and labels.cell is not None:
            self._cells[entry_id] = (labels.experiment, labels.cell)
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
        with self._store.read() as db:
            return self._day_spent(db, moment.timestamp())

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        """The body submitted for ``task_id``, as it was sent; None for an unknown task."""
        found = self._store.rows(sa.select(_T.request).where(_T.task_id == task_id).limit(1))
        if not found or not found[0].request:
            return None
        body = json.loads(found[0].request)
        return body if isinstance(body, dict) else None

    def find_results(self, address: str, limit: int = 5) -> list[PastResult]:
        """Succeeded tasks of this content address, newest submission first (the index finds
        the address's succeeded rows; the few of them are sorted)."""
        found = []
        for r in self._store.rows(
            sa.select(_T.task_id, _T.model, _T.kind, _T.created_at, _T.completed_at, _T.results,
                      _T.paths, _T.submitted_at, _T.media_facts, _T.mismatches,
                      sa.func.coalesce(_T.credits, _T.assumed_credits).label("counted"))
            .where(_T.address == address, _T.status == "succeeded")
            .order_by(_T.submitted_at.desc(), _T.completed_at.desc()).limit(limit)
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
            found.append(PastResult(record, when, r.counted, paths,
                                    *stored_facts(r.media_facts, r.mismatches)))
        return found

    def reuse_recorded(self, address: str, model: str, note: Reused) -> None:
        with self._store.write() as db:
            db.execute(sa.insert(REUSES).values(
                at=time.time(), address=address, task_id=note.task_id, model=model,
                tag=note.tag if note.tag is not None else self._tag,
                credits_saved=note.credits_saved,
            ))

    def submit_accepted(self, entry_id: str, task: Task) -> None:
        """Record the task id (leased to this process while it waits); if the history cannot
        take it (locked past the busy timeout, disk error, database gone), keep it in
        the side file instead (see :class:`Pending`): a billed task never loses its id."""
        now = time.time()
        cell = self._cells.pop(entry_id, None)
        try:
            with self._store.write() as db:
                db.execute(
                    sa.update(TASKS).where(_T.entry_id == entry_id).values(
                        state="accepted", task_id=task.task_id,
                        status=sa.func.coalesce(_T.status, "queued"), accepted_at=now,
                        created_at=_ts(task.created_at) or now, updated_at=now,
                        **self._leases.taken(now),
                    )
                )
                if cell is not None:  # the experiment's cell -> task, in the same step
                    db.execute(
                        sa.update(EXPERIMENT_CELLS)
                        .where(EXPERIMENT_CELLS.c.experiment == cell[0],
                               EXPERIMENT_CELLS.c.cell == cell[1])
                        .values(task_id=task.task_id)
                    )
            self._leases.holding()
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            self._pending.keep({
                "entry_id": entry_id, "task_id": task.task_id, "model": task.model,
                "kind": task.kind, "created_at": _ts(task.created_at), "at": now,
            })
            logger.warning(
                "genlab: the history could not record task %s (%s); its id is kept in %s and "
                "merged when the history is next opened", task.task_id, exc, self._pending.file,
            )

    def submit_uncertain(self, entry_id: str, reason: str) -> None:
        self._cells.pop(entry_id, None)
        self._set_state(entry_id, "uncertain", reason)

    def submit_failed(self, entry_id: str, reason: str) -> None:
        self._cells.pop(entry_id, None)
        self._set_state(entry_id, "refused", reason)

    def _set_state(self, entry_id: str, state: str, reason: str) -> None:
        with self._store.write() as db:
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
        with self._store.write() as db:
            db.execute(sa.update(TASKS).where(_T.task_id == record.task_id).values(fields))
            db.execute(sa.insert(EVENTS).values(task_id=record.task_id, status=record.status,
                                                at=now))

    def results_saved(
        self,
        task_id: str,
        paths: Sequence[str | os.PathLike[str]],
        media: Sequence[MediaInfo] = (),
        mismatches: Sequence[str] = (),
    ) -> None:
        """The task's results were saved to ``paths`` (local files or storage URLs), with the
        measured facts of each kept media file and how they differ from the request (see
        :func:`fact_columns`); a call without facts keeps those already recorded."""
        with self._store.write() as db:
            known_text = db.execute(sa.select(_T.paths).where(_T.task_id == task_id)).scalar()
            known = json.loads(known_text) if known_text else []
            known += [os.fspath(p) for p in paths]
            facts = fact_columns(media, mismatches) if media else {}
            db.execute(sa.update(TASKS).where(_T.task_id == task_id).values(
                paths=json.dumps(known), updated_at=time.time(), **facts))

    def duration_samples(self, limit: int = 1000) -> list[DurationSample]:
        """The newest ``limit`` succeeded tasks: what each produced and how long it took.

        Every model, resolution and length is included, from every machine writing this
        history: the client's duration model learns across settings and across the team.
        """
        samples = []
        for r in self._store.rows(
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


MISMATCH_JOIN = "; "
"""How the ``mismatches`` column joins a result's phrases (none of them holds it)."""


def fact_columns(media: Sequence[MediaInfo], mismatches: Sequence[str]) -> dict[str, Any]:
    """The ``tasks`` columns of a result's measured media: the first file's facts, every
    file's as JSON, ``as_asked`` (1 or 0; NULL when nothing was measured) and the
    mismatches joined by :data:`MISMATCH_JOIN` (NULL when there are none).

    Example:
        >>> row = fact_columns([MediaInfo(kind="video", width=1280, height=720, duration=5.0,
        ...                               has_audio=True)], ["asked 10 s, got 5.0 s"])
        >>> row["media_width"], row["media_duration"], row["has_audio"], row["as_asked"]
        (1280, 5.0, 1, 0)
        >>> row["mismatches"]
        'asked 10 s, got 5.0 s'
    """
    first = media[0] if media else MediaInfo()
    measured = bool(media)
    return {
        "as_asked": int(not mismatches) if measured else None,
        "mismatches": MISMATCH_JOIN.join(mismatches) or None,
        "media_width": first.width,
        "media_height": first.height,
        "media_duration": first.duration,
        "media_fps": first.fps,
        "media_frames": first.frames,
        "video_codec": first.video_codec,
        "audio_codec": first.audio_codec,
        "has_audio": int(first.has_audio) if measured else None,
        "media_bytes": first.bytes,
        "media_facts": json.dumps([m.to_dict() for m in media]) if measured else None,
    }


def stored_facts(
    media_facts: str | None, mismatches: str | None
) -> tuple[tuple[MediaInfo, ...], tuple[str, ...]]:
    """The facts and mismatches :func:`fact_columns` stored, read back (nothing re-probed).

    Example:
        >>> media, phrases = stored_facts('[{"kind": "image", "width": 512}]', None)
        >>> media[0].kind, media[0].width, phrases
        ('image', 512, ())
    """
    found = json.loads(media_facts) if media_facts else []
    media = tuple(MediaInfo.from_dict(m) for m in found if isinstance(m, dict))
    phrases = tuple(mismatches.split(MISMATCH_JOIN)) if mismatches else ()
    return media, phrases


def _saved(location: str) -> Path | str:
    # A storage URL stays a string (Path would fold its "//"); a local file becomes a Path.
    return location if "://" in location else Path(location)
