"""The journal contract: what every journal the client can write to shows its user.

One set of tests over the three journals: :class:`genlab.client.journal.MemoryJournal`, and
:class:`genlab.History` on SQLite and on PostgreSQL. The calls are those of the
:class:`~genlab.client.journal.SpendJournal` protocol, in the order the client makes them, with
entries built as the client builds them; what is checked is what a user of each journal sees:
its entries (``MemoryJournal.entries()``, ``History.df()``), ``find_results``, ``day_spent``,
and the reuses (``MemoryJournal.reuses``, ``History.spend()``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import genlab
from genlab.catalog import content_address, validate
from genlab.client import Task, TaskRecord
from genlab.client._prepare import submit_entry
from genlab.client.journal import MemoryJournal, Reused, SpendJournal, SubmitEntry
from genlab.history import History
from genlab.media import MediaInfo

DAY = datetime(2027, 1, 15, tzinfo=UTC)  # the UTC day most entries are submitted on
PRICED = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}  # 160
UNPRICED = {"model": "image-b", "prompt": "a kite"}  # no published price


def entry(
    body: dict[str, Any], at: datetime = DAY, *, assumed: int | None = None,
    cap: int | None = None,
) -> SubmitEntry:
    """The entry the client journals for ``body``: its content address (as reuse adds it), the
    budget's assumed price where the model has none and the day's cap (as ``reserve`` adds
    them)."""
    request = validate(body)
    made = submit_entry(request)
    return replace(
        made, submitted_at=at, address=content_address(request),
        assumed_credits=assumed if made.credits is None else None, day_cap=cap,
    )


def record(task_id: str, status: str, *, model: str = "video-a", url: str | None = None,
           completed: datetime | None = None) -> TaskRecord:
    """A task record as the service sends it."""
    data: dict[str, Any] = {"task_id": task_id, "status": status, "model": model,
                            "created_at": (DAY + timedelta(minutes=1)).isoformat()}
    if completed is not None:
        data["completed_at"] = completed.isoformat()
    if url is not None:
        data["videos"] = [{"url": url, "width": 854, "height": 480, "duration": 2.0}]
    return TaskRecord.read(data, "video")


# --- the three journals, and what their users see ---------------------------------------


@dataclass(frozen=True)
class Seen:
    """One submission as its journal's user sees it."""

    state: str  # sending, accepted, uncertain or refused
    task_id: str | None
    status: str | None
    reason: str | None
    paths: list[str]


@dataclass
class Subject:
    journal: SpendJournal
    another: Callable[[], SpendJournal]  # another handle, as a second process would open it

    def seen(self) -> dict[str, Seen]:
        """Every entry by its id."""
        journal = self.journal
        if isinstance(journal, MemoryJournal):
            # A refused submission: "failed" in MemoryJournal.entries(), "refused" in df().
            return {e.entry_id: Seen("refused" if e.state == "failed" else e.state, e.task_id,
                                     e.status, e.reason, [os.fspath(p) for p in e.paths])
                    for e in journal.entries()}
        assert isinstance(journal, History)
        return {
            r["entry_id"]: Seen(r["state"], _text(r["task_id"]), _text(r["status"]),
                                _text(r["reason"]), json.loads(_text(r["paths"]) or "[]"))
            for r in journal.df().to_dict("records")
        }

    def reuses(self) -> tuple[int, int]:
        """(results reused, credits they saved)."""
        journal = self.journal
        if isinstance(journal, MemoryJournal):
            return len(journal.reuses), sum(n.credits_saved or 0 for n in journal.reuses)
        assert isinstance(journal, History)
        spent = journal.spend()
        return int(spent["reused"].sum()), int(spent["credits_saved"].sum())


def _text(value: Any) -> str | None:
    return None if value is None or value is pd.NA else str(value)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def subject(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Subject]:
    if request.param == "memory":
        memory = MemoryJournal()
        yield Subject(memory, lambda: memory)  # one object is the whole journal
        return
    location = (str(tmp_path / "history.sqlite") if request.param == "sqlite"
                else request.getfixturevalue("postgres_url"))
    opened: list[History] = []

    def another() -> History:
        opened.append(History(location))
        return opened[-1]

    yield Subject(another(), another)
    for history in opened:
        history.close()


# --- submitting ---------------------------------------------------------------------------


def test_submit_started_returns_an_entry_id_and_the_entry_is_visible(subject: Subject) -> None:
    first = subject.journal.submit_started(entry(PRICED))
    second = subject.journal.submit_started(entry(UNPRICED, assumed=50))
    assert isinstance(first, str) and isinstance(second, str) and first != second
    assert subject.seen() == {
        first: Seen("sending", None, None, None, []),
        second: Seen("sending", None, None, None, []),
    }


@pytest.mark.parametrize("outcome", ["accepted", "uncertain", "refused"])
def test_a_submission_ends_one_way(subject: Subject, outcome: str) -> None:
    journal = subject.journal
    entry_id = journal.submit_started(entry(PRICED))
    other = journal.submit_started(entry(PRICED))
    if outcome == "accepted":
        journal.submit_accepted(entry_id, Task(task_id="t-1", model="video-a", kind="video"))
        expected = Seen("accepted", "t-1", "queued", None, [])  # in the queue until polled
    elif outcome == "uncertain":
        journal.submit_uncertain(entry_id, "the connection dropped")
        expected = Seen("uncertain", None, None, "the connection dropped", [])
    else:
        journal.submit_failed(entry_id, "429 RATE_LIMITED")
        expected = Seen("refused", None, None, "429 RATE_LIMITED", [])
    seen = subject.seen()
    assert seen[entry_id] == expected
    assert seen[other] == Seen("sending", None, None, None, [])  # the other one untouched


def test_each_status_change_is_what_the_entry_shows(subject: Subject) -> None:
    journal = subject.journal
    entry_id = journal.submit_started(entry(PRICED))
    journal.submit_accepted(entry_id, Task(task_id="t-1", model="video-a", kind="video"))
    for status in ("queued", "processing", "succeeded"):
        url = "https://media.example/t-1.mp4" if status == "succeeded" else None
        journal.status_changed(record("t-1", status, url=url, completed=DAY
                                      if status == "succeeded" else None))
        assert subject.seen()[entry_id].status == status
    journal.status_changed(record("t-unknown", "failed"))  # a task it never accepted
    assert list(subject.seen().values()) == [Seen("accepted", "t-1", "succeeded", None, [])]


def test_the_request_of_a_task_is_the_body_as_sent(subject: Subject) -> None:
    journal = subject.journal
    made = entry({**PRICED, "prompt": "a kite \u2014 \u98a8\u7b5d", "aspect_ratio": "9:16"})
    entry_id = journal.submit_started(made)
    assert journal.request_of("t-1") is None  # no task has that id yet
    journal.submit_accepted(entry_id, Task(task_id="t-1", model="video-a", kind="video"))
    assert journal.request_of("t-1") == made.body
    assert journal.request_of("t-unknown") is None


def test_saved_results_are_kept_in_the_order_given(subject: Subject, tmp_path: Path) -> None:
    journal = subject.journal
    entry_id = journal.submit_started(entry(PRICED))
    journal.submit_accepted(entry_id, Task(task_id="t-1", model="video-a", kind="video"))
    journal.results_saved("t-1", [tmp_path / "t-1.mp4", tmp_path / "t-1.json"])
    journal.results_saved("t-1", ["s3://bucket/runs/t-1.mp4"])
    assert subject.seen()[entry_id].paths == [
        str(tmp_path / "t-1.mp4"), str(tmp_path / "t-1.json"), "s3://bucket/runs/t-1.mp4"]


# --- earlier results and reuses -----------------------------------------------------------


def _run(journal: SpendJournal, made: SubmitEntry, task_id: str, status: str | None,
         completed: datetime | None = None) -> None:
    """Submit ``made`` and take it as far as ``status`` (None: left uncertain)."""
    entry_id = journal.submit_started(made)
    if status is None:
        journal.submit_uncertain(entry_id, "no answer")
        return
    journal.submit_accepted(entry_id, Task(task_id=task_id, model=made.model, kind="video"))
    url = f"https://media.example/{task_id}.mp4" if status == "succeeded" else None
    journal.status_changed(record(task_id, status, model=made.model, url=url,
                                  completed=completed if status in ("succeeded", "failed")
                                  else None))


def test_find_results_gives_the_succeeded_tasks_of_an_address_newest_first(
    subject: Subject, tmp_path: Path
) -> None:
    journal = subject.journal
    kite, boat = entry(PRICED), entry({**PRICED, "prompt": "a boat"})
    assert kite.address and boat.address and kite.address != boat.address
    at = [DAY + timedelta(hours=h) for h in range(6)]
    # The newer submission finishes first: "newest" is the newest submission.
    _run(journal, replace(kite, submitted_at=at[0]), "t-old", "succeeded", at[3])
    _run(journal, replace(kite, submitted_at=at[1], credits=None, assumed_credits=300),
         "t-new", "succeeded", at[2])
    _run(journal, replace(kite, submitted_at=at[2]), "t-failed", "failed", at[4])
    _run(journal, replace(kite, submitted_at=at[3]), "t-running", "processing")
    _run(journal, replace(kite, submitted_at=at[4]), "", None)  # uncertain: no task id
    _run(journal, replace(boat, submitted_at=at[5]), "t-boat", "succeeded", at[5])
    journal.results_saved("t-old", [tmp_path / "t-old.mp4", "s3://bucket/t-old.mp4"])

    found = journal.find_results(kite.address)
    assert [p.record.task_id for p in found] == ["t-new", "t-old"]
    assert all(p.record.succeeded and p.record.model == "video-a" for p in found)
    assert [[r.url for r in p.record.results] for p in found] == [
        ["https://media.example/t-new.mp4"], ["https://media.example/t-old.mp4"]]
    assert [p.record.completed_at for p in found] == [at[2], at[3]]
    assert [p.submitted_at for p in found] == [at[1], at[0]]
    assert [p.credits for p in found] == [300, 160]  # the assumed price where unpriced
    assert [p.paths for p in found] == [(), (tmp_path / "t-old.mp4", "s3://bucket/t-old.mp4")]
    assert [p.record.task_id for p in journal.find_results(kite.address, limit=1)] == ["t-new"]
    assert [p.record.task_id for p in journal.find_results(boat.address)] == ["t-boat"]
    assert journal.find_results("0" * 64) == []


def test_an_earlier_result_carries_the_facts_measured_when_it_was_kept(
    subject: Subject, tmp_path: Path
) -> None:
    journal = subject.journal
    kite = entry(PRICED)
    assert kite.address is not None
    _run(journal, kite, "t-clamped", "succeeded", DAY)
    _run(journal, replace(kite, submitted_at=DAY - timedelta(hours=1)), "t-unmeasured",
         "succeeded", DAY)
    clamped = MediaInfo(kind="video", width=854, height=480, duration=1.0, fps=24.0,
                        frames=24, video_codec="h264")
    phrases = ("asked 2 s, got 1.0 s",)
    journal.results_saved("t-clamped", [tmp_path / "t-clamped.mp4"], [clamped], phrases)
    journal.results_saved("t-clamped", ["s3://bucket/t-clamped.mp4"])  # no facts: kept
    journal.results_saved("t-unmeasured", ["s3://bucket/t-unmeasured.mp4"])  # two-arg form
    found = {p.record.task_id: p for p in journal.find_results(kite.address)}
    assert (found["t-clamped"].media, found["t-clamped"].mismatches) == ((clamped,), phrases)
    assert found["t-clamped"].as_asked is False
    assert found["t-clamped"].paths == (tmp_path / "t-clamped.mp4", "s3://bucket/t-clamped.mp4")
    assert (found["t-unmeasured"].media, found["t-unmeasured"].as_asked) == ((), None)
    # A later reuse of the same result hands over the same facts, from another handle too.
    again = subject.another().find_results(kite.address)
    assert {p.record.task_id: p.as_asked for p in again} == {
        "t-clamped": False, "t-unmeasured": None}


def test_reuses_are_recorded(subject: Subject) -> None:
    address = entry(PRICED).address
    assert address is not None and subject.reuses() == (0, 0)
    subject.journal.reuse_recorded(address, "video-a", Reused("t-1", DAY, 160))
    subject.journal.reuse_recorded(address, "video-a", Reused("t-1", DAY, None))  # unpriced
    assert subject.reuses() == (2, 160)


# --- the day's credits and the cap --------------------------------------------------------


def test_day_spent_counts_the_utc_days_submissions_not_refused(subject: Subject) -> None:
    journal = subject.journal
    east = timezone(timedelta(hours=5))

    def started(made: SubmitEntry) -> str:
        return journal.submit_started(made)

    started(entry(PRICED, DAY))  # 160, still sending: counted
    accepted = started(entry({**PRICED, "resolution": "720P"}, DAY + timedelta(hours=1)))  # 320
    journal.submit_accepted(accepted, Task(task_id="t-1", model="video-a", kind="video"))
    uncertain = started(entry(UNPRICED, DAY + timedelta(hours=2), assumed=40))
    journal.submit_uncertain(uncertain, "no answer")  # may have been billed: counted
    refused = started(entry({**PRICED, "duration": 10}, DAY + timedelta(hours=3)))  # 800
    journal.submit_failed(refused, "429 RATE_LIMITED")  # nothing was created: not counted
    started(entry(UNPRICED, DAY + timedelta(hours=4)))  # no price, none assumed: 0
    # The last moment of the UTC day, written in another time zone (the next day there).
    started(entry({**PRICED, "duration": 3}, (DAY + timedelta(days=1, microseconds=-1))
                  .astimezone(east)))  # 240
    started(entry({**PRICED, "duration": 4}, DAY - timedelta(microseconds=1)))  # 320, day before
    started(entry({**PRICED, "duration": 5}, DAY + timedelta(days=1)))  # 400, the day after

    today = 160 + 320 + 40 + 240
    assert journal.day_spent(DAY) == today
    assert journal.day_spent(DAY + timedelta(hours=23, minutes=59)) == today
    assert journal.day_spent((DAY + timedelta(hours=12)).astimezone(east)) == today
    assert journal.day_spent(DAY - timedelta(hours=12)) == 320
    # 20:00 on the 15th at UTC-8 is already the 16th in UTC.
    assert journal.day_spent(datetime(2027, 1, 15, 20, tzinfo=timezone(-timedelta(hours=8)))) \
        == 400
    assert journal.day_spent(DAY + timedelta(days=2)) == 0


def test_a_submission_that_would_cross_the_cap_raises_and_records_nothing(
    subject: Subject,
) -> None:
    journal = subject.journal
    journal.submit_started(entry(PRICED, cap=480))  # 160
    journal.submit_started(entry(PRICED, cap=480))  # 320
    reaching = journal.submit_started(entry(PRICED, cap=480))  # 480: reaches, does not cross
    before = subject.seen()
    for crossing in (entry(PRICED, cap=480), entry(UNPRICED, assumed=1, cap=480)):
        with pytest.raises(genlab.CreditLimitError, match="Nothing was sent"):
            journal.submit_started(crossing)
    assert subject.seen() == before and journal.day_spent(DAY) == 480
    # An unpriced model without an assumed price counts 0: it passes while the day is not over.
    journal.submit_started(entry(UNPRICED, cap=480))
    # A refused submission gives its credits back; another day has a cap of its own.
    journal.submit_failed(reaching, "400 INVALID")
    journal.submit_started(entry(PRICED, cap=480))
    journal.submit_started(entry(PRICED, DAY + timedelta(days=1), cap=160))
    with pytest.raises(genlab.CreditLimitError):
        journal.submit_started(entry(PRICED, DAY + timedelta(days=1), cap=160))
    assert journal.day_spent(DAY) == 480 and journal.day_spent(DAY + timedelta(days=1)) == 160
    assert len(subject.seen()) == len(before) + 3


THREADS, TRIES = 8, 2
# Per round (a UTC day of its own), how many submissions of 160 credits its cap leaves room
# for: a race shows at a boundary crossed at once (1, 2) or after a run of interleaved ones.
SLOTS = (1, 12, 2, 8, 1, 12, 3, 13, 2, 6) * 2


def test_concurrent_submitters_never_cross_the_cap_together(subject: Subject) -> None:
    # 8 threads try 2 submissions each at once, every round: as many as the cap leaves room
    # for are recorded, the rest refused, never one more. Half the threads share the journal
    # object, half open a handle of their own (as other processes would).
    handles = [subject.journal if i % 2 == 0 else subject.another() for i in range(THREADS)]
    days = [DAY + timedelta(days=n) for n in range(len(SLOTS))]
    start = threading.Barrier(THREADS)
    accepted: list[str] = []
    refused: list[BaseException] = []
    unexpected: list[BaseException] = []

    def submitter(journal: SpendJournal) -> None:
        for day, slots in zip(days, SLOTS, strict=True):
            made = entry(PRICED, day, cap=slots * 160)  # made ahead: the calls race, no more
            start.wait()  # the threads start each round together
            for _ in range(TRIES):
                try:
                    accepted.append(journal.submit_started(made))
                except genlab.CreditLimitError as exc:
                    refused.append(exc)
                except Exception as exc:  # any other error fails the test
                    unexpected.append(exc)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: a check apart from its write shows
    try:
        threads = [threading.Thread(target=submitter, args=(h,)) for h in handles]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    assert unexpected == []
    assert [subject.journal.day_spent(day) for day in days] == [n * 160 for n in SLOTS]
    assert len(accepted) == sum(SLOTS)
    assert len(refused) == THREADS * TRIES * len(SLOTS) - sum(SLOTS)
    assert sorted(subject.seen()) == sorted(accepted)
