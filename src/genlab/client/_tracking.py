"""What the client tracks of each task (one bounded table), and how it judges what a task's
record says: the lifecycle's "track" and "verify" steps.

A record is taken as the asked task's result only when it is one:

* **identity**: a record naming another task id (a cache or routing fault) is never returned
  for the task asked; a wait treats it as transient until its deadline, then says so. A record
  naming another model than the one submitted gets a warning, once.
* **final but unreadable**: a ``succeeded``/``failed`` record with a field that cannot be read
  (width ``"auto"``, duration ``"5s"``) will not read better later: after ``FINAL_READS``
  reads the wait ends with an error quoting the field, not at its 30-minute deadline.
* **succeeded without media**: ``videos``/``images`` empty or null on a ``succeeded`` record
  is taken as not ready for ``MEDIA_GRACE`` seconds, then a clear error; never a success
  without its media.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from genlab._errors import TaskTimeoutError, UnreadableResponseError
from genlab._wire import KNOWN_STATUSES, TERMINAL_STATUSES, TaskStatus
from genlab.catalog import RequestBase
from genlab.client._config import Kind, TaskRecord
from genlab.client._hold import TaskHold
from genlab.client._pacing import Work

logger = logging.getLogger("genlab")

FINAL_READS = 3
"""Reads of a final record that cannot be read before the wait ends with the error."""
MEDIA_GRACE = 10.0
"""Seconds a ``succeeded`` record without media is taken as not ready yet."""
RUNNING = frozenset({TaskStatus.QUEUED.value, TaskStatus.PROCESSING.value})


@dataclass(slots=True)
class Tracked:
    """What the client holds of one task between its submit and its hand-over."""

    task_id: str
    kind: Kind | None  # None: a bare id, until its first record says
    work: Work | RequestBase  # what it asks of the service (made a Work when first paced)
    started: float | None = None  # time.monotonic() when the request left (None: not ours)
    body: dict[str, Any] | None = None  # the request as sent, for a reroll while it runs
    reused: TaskRecord | None = None  # an earlier result answering the submit
    request: RequestBase | None = None  # the validated request: what kept files carry
    content: str | None = None  # its content address (genlab.catalog.content_address)
    hold: TaskHold | None = None  # its concurrency slot and reuse claim, until it ends
    unreadable: UnreadableResponseError | None = None  # the last answer that could not be read
    final_reads: int = 0  # reads of a final record that could not be read
    empty_since: float | None = None  # first seen 'succeeded' without media
    model_warned: bool = False

    @property
    def model(self) -> str:
        work = self.work
        return work.model_name if isinstance(work, RequestBase) else work.model


class TaskTable:
    """The tasks a client tracks: bounded, and each entry goes when its task is handed over.

    Only tasks submitted and not yet waited to the end are here (at most ``limit``; beyond
    it the oldest is forgotten with a warning: its id is in the history). The kinds of
    tasks seen are remembered apart, in a bounded table of their own, so a bare id can still
    be asked about at its endpoint.
    """

    def __init__(self, limit: int = 10_000, kinds: int = 100_000) -> None:
        self._tasks: OrderedDict[str, Tracked] = OrderedDict()
        self._kinds: OrderedDict[str, Kind] = OrderedDict()
        self._limit, self._kind_limit = limit, kinds

    def __len__(self) -> int:
        return len(self._tasks)

    def track(self, entry: Tracked) -> Tracked | None:
        """Track ``entry``; return the oldest entry forgotten to keep the bound, if any."""
        self._tasks[entry.task_id] = entry
        if entry.kind is not None:
            self.learn_kind(entry.task_id, entry.kind)
        if len(self._tasks) <= self._limit:
            return None
        _, old = self._tasks.popitem(last=False)
        logger.warning("genlab: no longer tracking task %s (its id is in the history)",
                       old.task_id)
        return old

    def get(self, task_id: str) -> Tracked | None:
        return self._tasks.get(task_id)

    def hand_over(self, task_id: str) -> Tracked | None:
        return self._tasks.pop(task_id, None)

    def kind_of(self, task_id: str) -> Kind | None:
        return self._kinds.get(task_id)

    def learn_kind(self, task_id: str, kind: Kind) -> None:
        self._kinds[task_id] = kind
        self._kinds.move_to_end(task_id)
        if len(self._kinds) > self._kind_limit:
            self._kinds.popitem(last=False)


class FinalButUnreadable(ValueError):
    """A final record (succeeded or failed) with a field that cannot be read."""


def read_record(data: Mapping[str, Any], kind: Kind, task_id: str) -> TaskRecord:
    """The record in a task query's answer, when it is ``task_id``'s and can be read.

    Raises:
        FinalButUnreadable: a final record with a field that cannot be read; the message
            quotes the fields.
        ValueError: another task's record, or a record that cannot be read (yet).

    Example:
        >>> read_record({"task_id": "t1", "status": "Succeeded", "images": [{"url": "u"}]},
        ...             "image", "t1").status
        'succeeded'
        >>> read_record({"task_id": "t1", "status": "succeeded",
        ...              "images": [{"url": "u", "width": "auto"}]}, "image", "t1")
        Traceback (most recent call last):
        ...
        genlab.client._tracking.FinalButUnreadable: the record says succeeded, but images[0].width is 'auto' (Input should be a valid integer, unable to parse string as an integer)
    """  # noqa: E501
    try:
        record = TaskRecord.read(data, kind)
    except ValidationError as exc:
        status = data.get("status")
        said = status.strip().lower() if isinstance(status, str) else None
        if said not in TERMINAL_STATUSES:
            raise
        fields = "; ".join(
            f"{_where(e['loc'])} is {e.get('input')!r} ({e['msg']})" for e in exc.errors()[:3]
        )
        raise FinalButUnreadable(f"the record says {said}, but {fields}") from None
    if record.task_id != task_id:
        raise ValueError(
            f"it is the record of another task, {record.task_id!r} (a cache or routing "
            f"fault?), so it is not taken as task {task_id}'s"
        )
    return record


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def ready_record(here: Tracked, record: TaskRecord) -> TaskRecord | None:
    """The record to act on, or None when it is not ready to be taken (succeeded without
    media, within the grace). Warns once about a record naming another model.

    Raises:
        UnreadableResponseError: a succeeded record still without media after the grace.
    """
    if here.model and record.model and record.model != here.model and not here.model_warned:
        here.model_warned = True
        logger.warning("genlab: task %s was submitted to %s, but its record names %s",
                       here.task_id, here.model, record.model)
    if not record.succeeded or record.results:
        here.empty_since = None
        return record
    now = time.monotonic()
    here.empty_since = here.empty_since or now
    if now - here.empty_since < MEDIA_GRACE:
        return None
    media = "videos" if record.kind == "video" else "images"
    raise UnreadableResponseError(
        f"task {here.task_id} says it succeeded, but its record has listed no {media} for "
        f"{MEDIA_GRACE:g} s; genlab does not take a success without its media. Its id is in "
        f"the history: ask the service about it, or client.wait({here.task_id!r}) later.",
        status=200,
        excerpt=f"status {record.status!r}, {media} {getattr(record, media)!r}",
    )


def final_unreadable(here: Tracked, error: UnreadableResponseError) -> UnreadableResponseError:
    """The error that ends a wait whose final record cannot be read (see the module doc)."""
    return UnreadableResponseError(
        f"task {here.task_id} has ended, but its record cannot be read: "
        f"{error.__cause__ or error}. Reading it again will not help; the task id is in the "
        "history. Report the service's answer (see .excerpt).",
        status=error.status,
        excerpt=error.excerpt,
    )


def unreadable_at_deadline(
    task_id: str, limit: float, last: UnreadableResponseError
) -> UnreadableResponseError:
    """The error of a wait whose deadline passed while the task's record could not be read
    (unreadable records are transient until then): what came back, bounded, and what to do."""
    return UnreadableResponseError(
        f"the service's record for task {task_id} could not be read until the wait's deadline "
        f"({limit:g} s): {last}. The task may still be running and its id is in the history; "
        f"see the answer's start in .excerpt, then client.wait({task_id!r}) again.",
        status=last.status,
        excerpt=last.excerpt,
    )


def timed_out(here: Tracked, limit: float, status: str | None) -> TaskTimeoutError:
    """The error of a wait whose deadline passed: what the task last said, and what to do.
    Only a status that means running is said to keep running; a success still without media
    (within its grace, so never handed over) is said as the service said it."""
    task_id = here.task_id
    if here.empty_since is not None:
        media = {"video": "videos", "image": "images"}.get(here.kind or "", "media")
        status = TaskStatus.SUCCEEDED.value
        said = (f"after waiting {limit:g} s, the service says task {task_id} succeeded but has "
                f"listed no {media} yet; genlab does not take a success without its media.")
    elif status in RUNNING:
        said = (f"task {task_id} is still {status} after waiting {limit:g} s; it keeps running "
                "on the service.")
    elif status is None:
        said = f"no readable record of task {task_id} came in {limit:g} s."
    elif status not in KNOWN_STATUSES:
        said = (f"task {task_id} still says {status!r} after {limit:g} s, a status genlab does "
                "not know (not queued, processing, succeeded or failed); it may or may not be "
                "running.")
    else:
        said = f"task {task_id} said {status!r} after {limit:g} s."
    return TaskTimeoutError(
        f"{said} Resume with client.wait({task_id!r}).", task_id=task_id, last_status=status
    )
