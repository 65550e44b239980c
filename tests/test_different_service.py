"""genlab's promises against a service that is not our emulator: the emulator's profiles
(genlab.emulator.start_profile) play one over real HTTP on loopback. Each test is one row of
the "different service" table in docs/reliability.md."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import genlab
from genlab import (
    AsyncClient,
    InvalidParameterError,
    MediaError,
    NotFoundError,
    SubmissionUncertainError,
    TaskFailedError,
    UnreadableResponseError,
)
from genlab.emulator import PROFILES, ProfileHandle, start_profile
from genlab.emulator._profiles import ERROR_SHAPES

KEY = "sk-different-9d2e71c4"
FAST: dict[str, Any] = {
    "poll_scale": 0.02, "retry_wait_initial": 0.01, "retry_wait_max": 0.05, "wait_timeout": 60.0,
}
IMAGE = {"model": "image-b", "prompt": "a red kite"}
# Everything the "different" profile changes, with its random proxy failures left to the tests
# (forced one at a time through its controls) so that each test is deterministic.
DIFFERENT = replace(PROFILES["different"], html_errors=0.0, lost_answers=0.0, not_found_for=0.3)


@pytest.fixture
def service() -> Iterator[ProfileHandle]:
    with start_profile(DIFFERENT, api_key=KEY, time_scale=0.02, link_ttl=30) as handle:
        yield handle


@pytest.fixture
def history(tmp_path: Path) -> Iterator[genlab.History]:
    journal = genlab.History(tmp_path / "history.sqlite")
    yield journal
    journal.close()


@pytest.fixture
async def client(service: ProfileHandle, history: genlab.History) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(service.base_url, KEY, history=history, **FAST) as c:
        yield c


def row_of(history: genlab.History, task_id: str) -> dict[str, Any]:
    (row,) = history.query("SELECT * FROM tasks WHERE task_id=?", (task_id,))
    return dict(row)


# --- task records ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["type-detail", "numeric-code", "string", "reason-only"])
async def test_a_failed_task_of_any_error_shape_gives_its_reason(
    service: ProfileHandle, client: AsyncClient, history: genlab.History, shape: str,
) -> None:
    service.app.emulator.faults.update(fail_rate=1.0)
    service.controls.error_shape = shape
    with pytest.raises(TaskFailedError) as caught:
        await client.generate(IMAGE)
    assert "could not generate" in str(caught.value)  # the service's reason text
    assert "UNKNOWN" not in str(caught.value)
    row = row_of(history, caught.value.task_id)
    assert row["status"] == "failed" and row["state"] == "accepted"  # not stuck
    assert "could not generate" in row["error_message"]
    reason = "the model could not generate this request; try again or change the prompt"
    assert json.loads(row["error_json"]) == ERROR_SHAPES[shape](reason)  # as the service sent it
    assert history.unfinished() == []  # resume has nothing left to fail on
    if shape == "numeric-code":
        assert row["error_code"] == "5003"


def test_the_studio_card_shows_a_failed_tasks_reason(service: ProfileHandle) -> None:
    from genlab.widgets import TaskCard
    from genlab.widgets._background import Background

    service.app.emulator.faults.update(fail_rate=1.0)
    service.controls.error_shape = "string"
    try:
        with genlab.Client(service.base_url, KEY, **FAST) as sync_client:
            card = TaskCard(sync_client, dict(IMAGE))
            card.start()
            assert card.wait_done(60)
        assert card.status == "failed" and "could not generate" in card.message.value
    finally:
        Background.shared().shutdown()


async def test_an_unparseable_record_is_transient_then_reported_never_stuck(
    service: ProfileHandle, client: AsyncClient, history: genlab.History,
) -> None:
    service.controls.next_unreadable = 3
    task = await client.submit(IMAGE)
    assert (await client.wait(task)).succeeded  # three pages were polled through

    task = await client.submit(IMAGE)
    service.controls.next_unreadable = 10**6
    with pytest.raises(UnreadableResponseError, match="deadline") as caught:
        await client.wait(task, timeout=1.0)
    assert "sign in" in caught.value.excerpt and len(caught.value.excerpt) <= 500
    assert task.task_id in str(caught.value)
    assert [r["task_id"] for r in history.unfinished()] == [task.task_id]
    service.controls.next_unreadable = 0
    (outcome,) = await history.aresume(client)  # the row is resumable, not stuck
    assert outcome.record is not None and outcome.record.succeeded


async def test_a_task_not_visible_yet_is_waited_for_then_not_found(
    service: ProfileHandle, history: genlab.History,
) -> None:
    async with AsyncClient(service.base_url, KEY, history=history, **FAST) as client:
        record = await client.generate(IMAGE)  # its first polls answered 404
    assert record.succeeded
    service.app.profile = replace(DIFFERENT, not_found_for=60)
    async with AsyncClient(
        service.base_url, KEY, history=history, not_found_grace=0.2, **FAST
    ) as client:
        task = await client.submit(IMAGE)
        with pytest.raises(NotFoundError):
            await client.wait(task)
    async with AsyncClient(service.base_url, KEY, **FAST) as stranger:
        with pytest.raises(NotFoundError):  # not ours: no grace
            await stranger.wait(task.task_id)


async def test_odd_task_ids_reach_their_own_task_and_stay_in_their_folder(
    client: AsyncClient, tmp_path: Path,
) -> None:
    first, second = await client.submit(IMAGE), await client.submit(IMAGE)
    assert all(c in first.task_id for c in "/?# %")
    records = [await client.wait(first), await client.wait(second)]
    assert [r.task_id for r in records] == [first.task_id, second.task_id]
    assert records[0].images[0].url != records[1].images[0].url
    folder = tmp_path / "out"
    paths = await client.download(records[0], folder)
    assert all(p.parent == folder for p in paths)
    assert json.loads(paths[-1].read_text())["task_id"] == first.task_id
    for bad in ("", ".", ".."):
        with pytest.raises(ValueError, match="task id"):
            await client.get(bad, kind="image")


# --- media from somewhere else -----------------------------------------------------------


async def test_media_on_another_host_with_redirects_and_generic_types(
    service: ProfileHandle, client: AsyncClient, tmp_path: Path,
) -> None:
    video = await client.generate(model="video-a", prompt="waves", duration=2,
                                  resolution="480P")
    image = await client.generate(IMAGE)
    paths = await client.download(video, tmp_path) + await client.download(image, tmp_path)
    suffixes = sorted(p.suffix for p in paths)
    # Typed application/octet-stream at URLs without an extension: the bytes decide.
    assert suffixes == [".json", ".json", ".mp4", ".png", ".png"]
    assert service.controls.media_requests >= 3
    assert service.controls.media_with_key == 0  # the key never left the API's origin
    png = await client.fetch_media(image.images[0].url)
    assert png.startswith(b"\x89PNG")


async def test_expired_links_are_reported_and_download_fetches_fresh_ones(
    service: ProfileHandle, client: AsyncClient, tmp_path: Path,
) -> None:
    service.controls.link_ttl = 0.2
    record = await client.generate(IMAGE)
    record = record.model_copy(update={"kept": ()})  # as a client that keeps nothing has it
    await asyncio.sleep(0.4)
    with pytest.raises(MediaError) as caught:
        await client.fetch_media(record.images[0].url)
    error = caught.value
    assert error.status == 403 and error.may_have_expired
    assert "may have expired" in str(error) and "API key" not in str(error)
    assert "signature" not in str(error) and "signature" not in repr(error)
    service.controls.link_ttl = 30
    reads = service.controls.record_reads
    paths = await client.download(record, tmp_path)  # the stale record: fetched again once
    assert service.controls.record_reads == reads + 1
    assert paths[0].read_bytes().startswith(b"\x89PNG")


# --- money and retries -------------------------------------------------------------------


async def test_a_submit_answered_by_a_proxy_page_is_uncertain_and_never_resent(
    service: ProfileHandle, client: AsyncClient, history: genlab.History,
) -> None:
    for control in ("next_lost_answers", "next_html_errors"):
        billed = len(service.ledger())
        setattr(service.controls, control, 1)
        with pytest.raises(SubmissionUncertainError) as caught:
            await client.submit(IMAGE)
        assert caught.value.status in (502, 504) and "NOT resent" in str(caught.value)
        # 504: processed, billed once; 502: never reached the service. Never resent either way.
        assert len(service.ledger()) == billed + (control == "next_lost_answers")
    states = [r["state"] for r in history.query("SELECT state FROM tasks")]
    assert states == ["uncertain", "uncertain"]  # never "refused": it may have been billed
    task = await client.submit(IMAGE)
    service.controls.next_html_errors = 2  # a GET meeting a proxy page is simply retried
    assert (await client.wait(task)).succeeded


async def test_extra_body_and_a_model_the_catalog_does_not_know(
    service: ProfileHandle, client: AsyncClient, history: genlab.History,
    caplog: pytest.LogCaptureFixture,
) -> None:
    task = await client.submit(model="video-next", kind="video", prompt="waves", duration=2,
                               extra_body={"camera_motion": "dolly"})
    record = await client.wait(task)
    assert record.succeeded and record.model == "video-next"
    row = row_of(history, task.task_id)
    assert row["credits"] is None and row["mode"] == "unchecked"
    assert json.loads(row["request"])["camera_motion"] == "dolly"
    assert "not in genlab's catalog" in caplog.text

    known = await client.submit(model="video-a", prompt="waves", duration=2,
                                extra_body={"camera_motion": "dolly"})
    assert (await client.wait(known)).succeeded
    assert row_of(history, known.task_id)["credits"] == 320  # a known model keeps its price
    assert "camera_motion not declared for video-a" in caplog.text

    with pytest.raises(InvalidParameterError, match="duration"):  # known fields still checked
        await client.submit(model="video-a", prompt="x", extra_body={"duration": 99})
    with pytest.raises(InvalidParameterError, match="kind='video'"):
        await client.submit(model="video-next", prompt="x")


# --- the journal -------------------------------------------------------------------------


async def test_a_locked_history_does_not_freeze_polling(
    service: ProfileHandle, client: AsyncClient, history: genlab.History,
) -> None:
    task = await client.submit(IMAGE)
    other = sqlite3.connect(history.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # a second notebook holding the lock
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    beat = asyncio.create_task(ticker())
    try:
        record = await client.wait(task)  # its history writes wait on their own thread
    finally:
        beat.cancel()
        other.execute("ROLLBACK")
        other.close()
    assert record.succeeded and ticks > 20  # the loop kept running meanwhile
    for _ in range(500):  # bounded: the queued writes land once the lock is gone
        if row_of(history, task.task_id)["status"] == "succeeded":
            break
        await asyncio.sleep(0.01)
    assert row_of(history, task.task_id)["status"] == "succeeded"


async def test_an_accepted_task_id_survives_a_history_that_cannot_take_it(
    service: ProfileHandle, tmp_path: Path,
) -> None:
    path = tmp_path / "locked.sqlite"
    holder: list[sqlite3.Connection] = []

    class LockedAfterStart(genlab.History):
        def submit_started(self, entry: Any) -> str:
            entry_id = super().submit_started(entry)
            sa.event.listen(  # new connections give up on a lock after 0.1 s
                self.engine, "connect", lambda db, _: db.execute("PRAGMA busy_timeout=100")
            )
            self.engine.dispose()
            lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            lock.execute("BEGIN IMMEDIATE")  # held past the busy timeout from now on
            holder.append(lock)
            return entry_id

    history = LockedAfterStart(path)
    try:
        async with AsyncClient(service.base_url, KEY, history=history, **FAST) as client:
            task = await client.submit(IMAGE)
        side = history.pending_file
        assert side.exists() and task.task_id in side.read_text()
        assert [r["task_id"] for r in history.unfinished()] == [task.task_id]  # resume sees it
    finally:
        for lock in holder:
            lock.execute("ROLLBACK")
            lock.close()
        history.close()
    reopened = genlab.History(path)  # merged on open
    try:
        assert not reopened.pending_file.exists()
        assert row_of(reopened, task.task_id)["state"] == "accepted"
        await asyncio.sleep(DIFFERENT.not_found_for)  # a restart takes longer than that
        async with AsyncClient(service.base_url, KEY, **FAST) as client:
            (outcome,) = await reopened.aresume(client)
        assert outcome.record is not None and outcome.record.succeeded
    finally:
        reopened.close()


@pytest.mark.parametrize("problem", ["corrupt", "directory"])
def test_a_history_that_cannot_be_opened_names_the_file(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "history.sqlite"
    if problem == "corrupt":
        path.write_bytes(b"this is not a database" * 100)
        advice = "Move it aside"
    else:
        path.mkdir()
        advice = "GENLAB_HISTORY"
    with pytest.raises(genlab.GenlabError) as caught:
        genlab.History(path)
    assert str(path) in str(caught.value) and advice in str(caught.value)


# --- keys --------------------------------------------------------------------------------


async def test_a_pasted_key_with_whitespace_is_cleaned_with_a_warning(
    service: ProfileHandle,
) -> None:
    with pytest.warns(UserWarning, match="spaces or line breaks"):
        client = AsyncClient(service.base_url, f"  {KEY}\n", **FAST)
    async with client:
        assert (await client.generate(IMAGE)).succeeded
