"""The history journal: durable, written ahead of the network, viewable, resumable."""

from __future__ import annotations

import multiprocessing
import os
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

import genlab
from _children import kill_after_first_line
from genlab import emulator
from genlab.client.journal import SubmitEntry
from genlab.history import History

KEY = "history-test-key-5c1e"


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture
def history(history_location: str) -> Iterator[History]:
    # Every test of this file runs on SQLite and on PostgreSQL (see tests/_postgres.py).
    h = History(history_location)
    yield h
    h.close()


@pytest.fixture
def client(server: emulator.EmulatorHandle, history: History) -> Iterator[genlab.Client]:
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.05) as c:
        yield c


def test_df_has_proper_dtypes_and_timings(client: genlab.Client, history: History) -> None:
    client.generate(model="video-a", prompt="a fox", duration=3, resolution="480P")
    client.generate(model="image-d", prompt="a kite", resolution="512")
    df = history.df()
    assert list(df["model"]) == ["video-a", "image-d"]
    assert str(df["credits"].dtype) == "Int64"
    assert df["credits"].tolist()[0] == 240 and pd.isna(df["credits"].tolist()[1])
    for column in ("submitted_at", "created_at", "completed_at"):
        assert str(df[column].dtype) == "datetime64[ns, UTC]"
    assert (df["status"] == "succeeded").all() and (df["state"] == "accepted").all()
    assert (df["total_seconds"] > 0).all()
    assert df["width"].tolist() == [854, 512]
    assert df["media_seconds"].tolist()[0] == 3


def test_the_key_is_never_recorded(client: genlab.Client, history: History) -> None:
    client.generate(model="image-b", prompt="a kite")
    if history.backend != "sqlite":
        assert not any(KEY in str(v) for row in history.query("SELECT * FROM tasks")
                       for v in row.values())
        return
    assert KEY.encode() not in history.path.read_bytes()
    wal = history.path.with_name(history.path.name + "-wal")
    if wal.exists():
        assert KEY.encode() not in wal.read_bytes()


def test_uncertain_submissions_stay_visible(
    server: emulator.EmulatorHandle, client: genlab.Client, history: History
) -> None:
    server.faults.drop_rate = 1.0
    try:
        with pytest.raises(genlab.SubmissionUncertainError):
            client.submit(model="video-a", prompt="dropped", duration=2)
    finally:
        server.faults.drop_rate = 0.0
    row = history.df().iloc[-1]
    assert row["state"] == "uncertain" and row["prompt"] == "dropped"
    assert pd.isna(row["task_id"]) and row["reason"]
    assert len(history.uncertain()) == 1
    # An uncertain submission is a run that ended neither way: "other" in the summary.
    summary = history.summary()
    assert (summary.loc["video-a", "runs"], summary.loc["video-a", "other"]) == (1, 1)


def test_summary_counts_rates_latency_and_billed_credits(
    server: emulator.EmulatorHandle, client: genlab.Client, history: History
) -> None:
    for _ in range(2):
        client.generate(model="video-a", prompt="a fox", duration=2, resolution="480P")
    server.faults.fail_rate = 1.0
    try:
        record = client.generate(model="video-a", prompt="fails", duration=2, resolution="480P",
                                 raise_on_failure=False)
    finally:
        server.faults.fail_rate = 0.0
    assert record.failed
    summary = history.summary(by="model")
    row = summary.loc["video-a"]
    assert (row["runs"], row["succeeded"], row["failed"]) == (3, 2, 1)
    assert row["success_rate"] == pytest.approx(2 / 3)
    assert row["credits"] == 3 * 160  # 480P, 2 s each: every accepted task is billed
    assert row["p50_seconds"] <= row["p95_seconds"]
    failed = history.df(status="failed").iloc[0]
    assert failed["error_code"] == "GENERATION_FAILED" and failed["error_message"]


def test_filters_by_model_status_tag_and_time(client: genlab.Client, history: History) -> None:
    client.generate(model="image-d", prompt="one", resolution="512")
    with history.tagging("sweep-1"):
        client.generate(model="image-b", prompt="two")
    assert history.df(model="image-b")["prompt"].tolist() == ["two"]
    assert history.df(tag="sweep-1")["prompt"].tolist() == ["two"]
    assert len(history.df(model=["image-b", "image-d"], status="succeeded")) == 2
    future = datetime.now(UTC) + timedelta(hours=1)
    assert history.df(since=future).empty
    assert len(history.df(until=future.isoformat())) == 2


def test_learned_durations_come_from_succeeded_tasks(
    client: genlab.Client, history: History
) -> None:
    assert history.duration_samples() == []
    record = client.generate(model="image-d", prompt="learn", resolution="512")
    learned = history.duration_samples()
    assert [x.task_id for x in learned] == [record.task_id]
    assert learned[0].seconds == pytest.approx(record.seconds, abs=1e-3)  # milliseconds
    assert learned[0].work.model == "image-d" and learned[0].work.pixels == 512 * 512


def _writer(path: str, worker: int, count: int) -> None:
    h = History(path)
    for i in range(count):
        entry = SubmitEntry(body={"model": "image-b", "prompt": f"{worker}-{i}"}, model="image-b",
                            kind="image", mode="text-to-image", credits=None,
                            submitted_at=datetime.now(UTC))
        h.submit_started(entry)
    h.close()


def test_several_processes_write_at_once(history_location: str) -> None:
    path = history_location
    History(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(path, w, 150)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    shared = History(path)
    df = shared.df()
    shared.close()
    assert len(df) == 600 and df["prompt"].nunique() == 600


CHILD = textwrap.dedent(
    """
    import os, sys, time, genlab
    from genlab.history import History
    history = History(os.environ["GENLAB_HISTORY"])
    client = genlab.Client(os.environ["BASE_URL"], os.environ["KEY"], history=history)
    for i in range(3):
        client.submit(model="video-a", prompt=f"crash {i}", duration=10, resolution="1080P")
    print("submitted", flush=True)
    client.wait(history.unfinished()[0]["task_id"])  # killed while waiting
    """
)


def test_a_process_killed_mid_wait_is_resumed_without_resubmitting(
    history_location: str,
) -> None:
    path = history_location
    # Slow tasks (~1.6 s each at this scale), so the child is surely killed mid-wait.
    with emulator.start(api_key=KEY, time_scale=0.02, max_processing=1) as server:
        env = {**os.environ, "GENLAB_HISTORY": str(path), "BASE_URL": server.base_url,
               "KEY": KEY}
        assert kill_after_first_line(CHILD, env=env) == "submitted"

        history = History(path)
        assert len(history.unfinished()) == 3  # the journal survived the kill
        with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.05) as client:
            outcomes = history.resume(client, timeout=60)
        assert [o.status for o in outcomes] == ["succeeded"] * 3
        df = history.df()
        assert (df["status"] == "succeeded").all() and df["result_url"].notna().all()
        assert history.unfinished() == []
        assert len(server.ledger()) == 3  # nothing was submitted again
        history.close()


async def test_aresume_with_the_async_client(
    server: emulator.EmulatorHandle, history_location: str
) -> None:
    history = History(history_location)
    async with genlab.AsyncClient(server.base_url, KEY, history=history) as client:
        await client.submit(model="image-d", prompt="later", resolution="512")
    assert len(history.unfinished()) == 1
    async with genlab.AsyncClient(server.base_url, KEY, poll_scale=0.05) as other:
        outcomes = await history.aresume(other, timeout=30)
    assert outcomes[0].status == "succeeded"
    assert history.df()["status"].tolist() == ["succeeded"]  # recorded though not its journal
    with pytest.raises(TypeError, match="aresume"):
        history.resume(other)  # type: ignore[arg-type]
    history.close()
