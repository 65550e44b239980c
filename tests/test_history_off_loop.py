"""The client never waits on the history on its event loop.

A result carries the request that made it. The client answers that from memory for the tasks
it submitted; for others it asks the history on a worker thread, briefly, and a history that
does not answer in time gives a result without its request (said in its note), never a stall.
On SQLite the history reads beside a write that waits for the file (WAL, and reads take no
lock of this process's writes), so another process holding the file stalls only the writes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
from genlab.client.journal import MemoryJournal
from genlab.emulator import EmulatorHandle

IMAGE = {"model": "image-d", "prompt": "a red kite over the dunes", "resolution": "512"}
OTHER = {"model": "image-d", "prompt": "an owl at dusk", "resolution": "512"}
HOLD = 10.0  # seconds another process holds the history's file

# Another process: takes the SQLite file exclusively, says so, holds it HOLD seconds, ends.
HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


def _hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    said = child.stdout.readline().strip()
    if said != "held":
        child.kill()
        _, err = child.communicate(timeout=30)
        pytest.fail(f"the holding process did not take the file: {err}")
    return child


def _end(child: subprocess.Popen[str]) -> None:
    try:
        child.wait(HOLD + 30)  # its own lifetime is bounded by HOLD
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()


def _timed_get(client: genlab.Client, task_id: str) -> tuple[float, genlab.Result]:
    began = time.monotonic()
    result = client.get(task_id)
    return time.monotonic() - began, result


def test_get_returns_at_once_while_another_process_holds_the_history(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
) -> None:
    """The issue's case: a submit waits for the file another process holds; meanwhile
    ``client.get()`` of a finished task answers, with its request, from the task's own client
    and from one that never saw it (a new kernel on the same history)."""
    path = tmp_path / "history.sqlite"
    history = genlab.History(path)
    base, key = client_server.base_url, client_server.api_key
    try:
        with genlab.Client(base, key, history=history, **client_options) as client, \
                genlab.Client(base, key, history=history, **client_options) as fresh, \
                ThreadPoolExecutor(1) as pool:
            done = client.generate(IMAGE)
            child = _hold(path, HOLD)
            try:
                waiting = pool.submit(client.submit, OTHER)  # its "sending" row waits
                time.sleep(0.5)  # for the file: the journal's write has begun to wait
                assert not waiting.done()
                own_took, own = _timed_get(client, done.task_id)
                fresh_took, seen = _timed_get(fresh, done.task_id)
                still_held = child.poll() is None
            finally:
                _end(child)
            sent = waiting.result(timeout=60)  # the file is free again: the submit goes on
        assert still_held  # both gets were answered while the file was held
        assert own_took < 1.0, f"client.get() took {own_took:.1f} s during a {HOLD:g} s lock"
        assert fresh_took < 1.0, f"a new client's get took {fresh_took:.1f} s"
        for result in (own, seen):
            assert result.succeeded and result.prompt == IMAGE["prompt"]
            assert result.request is not None and result.request["resolution"] == "512"
        assert history.record(sent.task_id) is not None  # recorded once the lock went
    finally:
        history.close()


class SlowJournal(MemoryJournal):
    """A journal whose ``request_of`` answers only when let (a history held elsewhere)."""

    def __init__(self) -> None:
        super().__init__()
        self.let = threading.Event()
        self.asked = 0

    def request_of(self, task_id: str) -> dict[str, Any] | None:
        self.asked += 1
        if not self.let.wait(60):
            raise TimeoutError("never let")
        return super().request_of(task_id)


async def test_a_history_that_does_not_answer_gives_the_result_without_its_request(
    client_app: Any, client_key: str, client_options: dict[str, Any],
) -> None:
    """A client that never saw the task asks the journal, which does not answer: the result
    comes anyway, its note says why its request is missing; once the journal answers, the
    next get shows the request."""
    journal = SlowJournal()
    transport = httpx.ASGITransport(app=client_app)
    async with genlab.AsyncClient("http://emulator", client_key, transport=transport,
                                  history=journal, **client_options) as client:
        done = await client.generate(IMAGE)
    assert journal.asked == 0  # its own client knew the request
    async with genlab.AsyncClient("http://emulator", client_key, transport=transport,
                                  history=journal, **client_options) as other:
        try:
            first = await other.get(done.task_id, kind="image")
            assert first.succeeded and first.request is None and first.prompt is None
            assert first.note is not None and "did not answer in time" in first.note
            assert "did not answer in time" in first._repr_html_()  # the card says so
        finally:
            journal.let.set()
        for _ in range(500):  # bounded: the journal's answer reaches the client
            again = await other.get(done.task_id, kind="image")
            if again.request is not None:
                break
            await asyncio.sleep(0.01)
        assert again.prompt == IMAGE["prompt"] and again.note is None


async def test_a_client_remembers_the_requests_of_the_tasks_it_waited_for(
    client_app: Any, client_key: str, client_options: dict[str, Any],
) -> None:
    """After a wait hands a task over, a get, a wait and a reroll of it still know its
    request without asking the history."""
    journal = SlowJournal()  # never let: asking it would leave the request out
    transport = httpx.ASGITransport(app=client_app)
    async with genlab.AsyncClient("http://emulator", client_key, transport=transport,
                                  history=journal, **client_options) as client:
        try:
            done = await client.generate(IMAGE)
            got = await client.get(done.task_id)
            waited = await client.wait(done.task_id)
            again = await client.reroll(done.task_id)
        finally:
            journal.let.set()
    assert journal.asked == 0
    assert got.prompt == waited.prompt == again.prompt == IMAGE["prompt"]
    assert again.task_id != done.task_id


def test_the_history_reads_beside_a_write_waiting_for_the_file(tmp_path: Path) -> None:
    """While another process holds the file and this history's write waits for it, reads of
    the same History object answer (they would wait for the write otherwise)."""
    path = tmp_path / "history.sqlite"
    history = genlab.History(path)
    history.append_many([{"entry_id": "e1", "task_id": "t1", "model": "image-d",
                          "kind": "image", "state": "accepted", "status": "succeeded",
                          "request": '{"model": "image-d", "prompt": "a kite"}',
                          "submitted_at": 1.8e9}])
    try:
        child = _hold(path, HOLD)
        with ThreadPoolExecutor(1) as pool:
            try:
                writing = pool.submit(history.save_prompt, "kite", "A kite at dusk")
                time.sleep(0.3)
                assert not writing.done()  # it waits for the file
                found = history.tasks(ids=["t1"], columns=["task_id", "status"])
                body = history.request_of("t1")
                held = child.poll() is None
            finally:
                _end(child)
            saved = writing.result(timeout=60)  # the file is free again: the write lands
    finally:
        history.close()
    assert held and saved.version == 1
    with closing(sqlite3.connect(path)) as db:  # what lets a read run beside a write
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert found["status"].tolist() == ["succeeded"] and body == {"model": "image-d",
                                                                 "prompt": "a kite"}
