"""Reusing a result already paid for: over a real emulator on loopback, checked against its
ledger (what the service billed)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from genlab import AsyncClient, Client, TaskRecord
from genlab.catalog import content_address, validate
from genlab.client import ReusedRecord
from genlab.client._reuse import ReusedTask
from genlab.client.journal import MemoryJournal, Reused
from genlab.emulator import EmulatorHandle
from genlab.history import History

# video-a at 480P: 80 credits per second, so 2 s = 160 credits.
PRICED = {"model": "video-a", "prompt": "a kite over the dunes", "duration": 2,
          "resolution": "480P"}
SEEDED = {"model": "video-b", "prompt": "a fox", "duration": 4, "resolution": "480P",
          "extra_params": {"seed": 42}}
UNSEEDED = {"model": "video-b", "prompt": "a fox", "duration": 4, "resolution": "480P"}


def _client(server: EmulatorHandle, options: dict[str, Any], **more: Any) -> Client:
    return Client(server.base_url, server.api_key, **options, **more)


def test_the_same_request_twice_with_reuse_is_billed_once(
    client_server: EmulatorHandle, client_options: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with _client(client_server, client_options) as client:
        first = client.generate(PRICED, reuse=True)
        with caplog.at_level(logging.INFO, logger="genlab"):
            second = client.generate(PRICED, reuse=True)
    assert len(client_server.ledger()) == 1
    assert isinstance(second, ReusedRecord) and not isinstance(first, ReusedRecord)
    assert second.task_id == first.task_id
    assert [r.url for r in second.results] == [r.url for r in first.results]
    assert second.reused.credits_saved == 160
    said = [r.getMessage() for r in caplog.records if "reused task" in r.getMessage()]
    assert len(said) == 1
    assert f"reused task {first.task_id}" in said[0]
    assert "160 credits saved; reuse=False for a fresh one" in said[0]
    assert "reused=True" in repr(second) and "160 credits saved" in second._repr_html_()


def test_auto_reuses_a_seeded_request_and_samples_an_unseeded_one_again(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options) as client:
        seeded = [client.generate(SEEDED), client.generate(SEEDED)]
        unseeded = [client.generate(UNSEEDED), client.generate(UNSEEDED)]
    assert seeded[0].task_id == seeded[1].task_id
    assert unseeded[0].task_id != unseeded[1].task_id
    assert len(client_server.ledger()) == 3


def test_reuse_false_and_reroll_pay_for_a_fresh_one(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options) as client:
        first = client.generate(SEEDED)
        fresh = client.generate(SEEDED, reuse=False)
        reused = client.generate(SEEDED)
        rerolled = client.reroll(reused)
    assert len({first.task_id, fresh.task_id, rerolled.task_id}) == 3
    assert isinstance(reused, ReusedRecord)
    assert len(client_server.ledger()) == 3


def test_identical_requests_without_reuse_are_separate_samples(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options) as client:
        outcomes = client.map([UNSEEDED] * 4, concurrency=4)
    assert all(o.ok for o in outcomes)
    assert len({o.task_id for o in outcomes}) == 4
    assert len(client_server.ledger()) == 4


def test_identical_submits_in_flight_become_one_submission(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with _client(client_server, client_options) as client:
        outcomes = client.map([SEEDED] * 5, concurrency=5)
        journal = client.history
    assert all(o.ok for o in outcomes), outcomes
    assert len({o.task_id for o in outcomes}) == 1
    assert len(client_server.ledger()) == 1
    joined = [o.task for o in outcomes if isinstance(o.task, ReusedTask)]
    assert len(joined) == 4 and all(t.reused.in_flight for t in joined)
    assert isinstance(journal, MemoryJournal) and len(journal.reuses) == 4


async def test_concurrent_generates_of_one_seeded_request_pay_once(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    async with AsyncClient(client_server.base_url, client_server.api_key,
                           **client_options) as client:
        records = await asyncio.gather(*(client.generate(SEEDED) for _ in range(3)))
    assert len({r.task_id for r in records}) == 1
    assert len(client_server.ledger()) == 1


def _expire_links(history: History, task_id: str) -> None:
    # What a signed URL does after its lifetime: the host answers 4xx.
    row = history.query("SELECT results FROM tasks WHERE task_id=?", (task_id,))[0]
    results = json.loads(row["results"])
    for result in results:
        result["url"] = result["url"] + "-expired"
    history.query(
        "UPDATE tasks SET results=? WHERE task_id=?", (json.dumps(results), task_id)
    )


def test_a_result_whose_links_expired_and_was_never_saved_is_not_reused(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
    history_location: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    history = History(history_location)
    # keep=False: this client never saves what succeeds (the default keeps it)
    with _client(client_server, client_options, history=history, keep=False) as client:
        first = client.generate(PRICED, reuse=True)
        _expire_links(history, first.task_id)
        with caplog.at_level(logging.INFO, logger="genlab"):
            second = client.generate(PRICED, reuse=True)
    assert second.task_id != first.task_id and not isinstance(second, ReusedRecord)
    assert len(client_server.ledger()) == 2
    assert any("expired and it was never saved; generating again" in r.getMessage()
               for r in caplog.records)
    history.close()


def test_a_saved_result_is_reused_from_disk_even_when_its_links_expired(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
    history_location: str,
) -> None:
    history = History(history_location)
    with _client(client_server, client_options, history=history) as client:
        first = client.generate(PRICED)
        saved = client.download(first, tmp_path / "first")
        _expire_links(history, first.task_id)
        again = client.generate(PRICED, reuse=True)
        copies = client.download(again, tmp_path / "again")
    assert isinstance(again, ReusedRecord) and again.task_id == first.task_id
    assert [p.name for p in copies] == [p.name for p in saved]
    assert [p.read_bytes() for p in copies] == [p.read_bytes() for p in saved]
    assert len(client_server.ledger()) == 1
    spent = history.query("SELECT task_id, credits_saved FROM reuses")
    assert [(r["task_id"], r["credits_saved"]) for r in spent] == [(first.task_id, 160)]
    history.close()


def test_a_durable_history_reuses_across_clients(
    client_server: EmulatorHandle, client_options: dict[str, Any], history_location: str
) -> None:
    path = history_location
    with _client(client_server, client_options, history=History(path)) as client:
        first = client.generate(SEEDED)
    client.history.close()
    with _client(client_server, client_options, history=History(path)) as client:
        second = client.generate(SEEDED)  # a re-opened notebook: the seed says reuse
    client.history.close()
    assert isinstance(second, ReusedRecord) and second.task_id == first.task_id
    assert len(client_server.ledger()) == 1


def test_an_uploaded_reference_is_identified_by_its_bytes(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 320), (200, 40, 40)).save(buffer, "PNG")
    png = buffer.getvalue()
    body = {"model": "image-d", "prompt": "a kite in this style"}
    with _client(client_server, client_options) as client:
        client.supports_uploads = True
        first_url = client.upload(png, "ref.png")
        first = client.generate({**body, "reference_images": [{"url": first_url}]}, reuse=True)
        again_url = client.upload(png, "ref.png")  # the same bytes: a new URL
        again = client.generate({**body, "reference_images": [{"url": again_url}]}, reuse=True)
        other_url = client.upload(png + b"\0", "ref.png")  # one byte more
        digests = dict(client.aio._life.reuse.media_digests)
    assert again_url != first_url
    assert isinstance(again, ReusedRecord) and again.task_id == first.task_id
    assert len(client_server.ledger()) == 1
    other = content_address(validate({**body, "reference_images": [{"url": other_url}]}),
                            media_digests=digests)
    same = content_address(validate({**body, "reference_images": [{"url": first_url}]}),
                           media_digests=digests)
    assert other != same


def test_a_reused_note_reads_plainly() -> None:
    note = Reused("task-9", None, None)
    assert note.message == "reused task task-9, its price is unknown, nothing paid; " \
        "reuse=False for a fresh one"
    record = TaskRecord(task_id="task-9", status="succeeded")
    assert not isinstance(record, ReusedRecord)
