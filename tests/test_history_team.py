"""A team's history: PostgreSQL beside SQLite, leases, who and where, migrations, copying."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

import genlab
from _children import kill_after_first_line
from genlab import emulator
from genlab.cli import main
from genlab.history import History, copy_history
from genlab.history._schema import HEAD

KEY = "team-history-key-3b7d"
IMAGE = {"model": "image-d", "prompt": "a kite", "resolution": "512"}
SLOW = {"model": "video-a", "prompt": "a slow fox", "duration": 10, "resolution": "1080P"}


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


# --- where a history lives ---------------------------------------------------------------


@pytest.mark.parametrize("location", [
    "mysql://db.example/genlab",
    "postgresql+asyncpg://db.example/genlab",
    "postgresql:/db.example/genlab",
    "s3://bucket/history.sqlite",
    "sqlite://",
])
def test_a_location_that_is_no_path_nor_supported_url_is_refused(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(genlab.ConfigurationError) as caught:
        History(location)
    message = str(caught.value)
    assert "unsupported history location" in message
    assert "sqlite:///" in message and "postgresql://user@host" in message
    assert list(tmp_path.iterdir()) == []  # no local copy made by mistake


def test_genlab_history_from_the_environment_is_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GENLAB_HISTORY", "postgress://db/genlab")
    with pytest.raises(genlab.ConfigurationError, match="unsupported history location"):
        History()
    assert list(tmp_path.iterdir()) == []


def test_a_database_password_is_never_shown(postgres_url: str) -> None:
    secret = "pw-9c3e51d0"
    with_password = postgres_url.replace("genlab@", f"genlab:{secret}@")
    history = History(with_password)  # trust auth: the password is not needed to connect
    try:
        assert secret not in repr(history) and secret not in history._repr_html_()
        assert "***" in history.location
    finally:
        history.close()
    unreachable = f"postgresql://genlab:{secret}@127.0.0.1:1/nothing"
    with pytest.raises(genlab.GenlabError) as caught:
        History(unreachable)
    assert secret not in str(caught.value) and "database server is running" in str(caught.value)


def test_sqlite_urls_and_paths_are_the_same_history(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    History(path).close()
    history = History(f"sqlite:///{path}")
    assert history.path == path and history.backend == "sqlite"
    history.close()


# --- who and where ----------------------------------------------------------------------


def test_rows_carry_who_and_where_and_filter_by_them(
    server: emulator.EmulatorHandle, history_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GENLAB_USER", "ana")
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/ana/work/compare.ipynb")
    history = History(history_location, project="sweeps")
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.05) as client:
        client.generate(IMAGE)
    monkeypatch.setenv("GENLAB_USER", "bo")
    other = History(history_location)  # another person on the same history
    with genlab.Client(server.base_url, KEY, history=other, poll_scale=0.05) as client:
        client.generate(IMAGE)
    other.close()
    df = history.df()
    assert df["user"].tolist() == ["ana", "bo"]
    assert df["project"].tolist()[0] == "sweeps" and df["notebook"].tolist()[0] == "compare.ipynb"
    assert df["host"].notna().all()
    assert history.df(user="bo")["user"].tolist() == ["bo"]
    assert len(history.df(project="sweeps")) == 1
    assert history.summary(by="user").index.tolist() == ["ana", "bo"]
    history.close()


# --- leases -----------------------------------------------------------------------------

RESUMER = textwrap.dedent("""
    import json, sys, genlab
    from genlab.history import History
    location, base_url, key = sys.argv[1:4]
    history = History(location)
    with genlab.Client(base_url, key, history=history, poll_scale=0.05) as client:
        outcomes = history.resume(client, timeout=60)
    history.close()
    print(json.dumps({"waited": [o.task_id for o in outcomes if o.record is not None],
                      "left": [o.task_id for o in outcomes if o.leased_by is not None]}))
""")


SUBMITTER = textwrap.dedent("""
    import sys, genlab
    from genlab.history import History
    location, base_url, key = sys.argv[1:4]
    history = History(location)
    client = genlab.Client(base_url, key, history=history)
    ids = [client.submit(model="video-a", prompt=f"fox {i}", duration=10,
                         resolution="1080P").task_id for i in range(6)]
    print(" ".join(ids), flush=True)
    client.wait(ids[0])  # killed while waiting, its leases held
""")


def test_two_processes_resuming_a_crashed_run_at_once_wait_on_each_task_once(
    history_location: str,
) -> None:
    import json

    with emulator.start(api_key=KEY, time_scale=0.02, max_processing=2) as server:
        line = kill_after_first_line(SUBMITTER, history_location, server.base_url, KEY, pause=0)
        ids = line.split()
        assert len(ids) == 6
        workers = [
            subprocess.Popen([sys.executable, "-c", RESUMER, history_location, server.base_url,
                              KEY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        results = []
        for worker in workers:
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
        ledger = server.ledger()
    waited = [t for r in results for t in r["waited"]]
    assert sorted(waited) == sorted(ids)  # every task waited on, by exactly one process
    assert len(set(waited)) == len(waited)
    for r, other in zip(results, reversed(results), strict=True):
        assert set(r["left"]) <= set(other["waited"])  # what one left, the other did
    reopened = History(history_location)
    finals = reopened.query("SELECT task_id, COUNT(*) AS n FROM events "
                            "WHERE status='succeeded' GROUP BY task_id")
    assert sorted(r["task_id"] for r in finals) == sorted(ids)
    assert all(r["n"] == 1 for r in finals)  # each completion recorded once
    assert reopened.unfinished() == []
    reopened.close()
    assert len(ledger) == 6  # nothing submitted again


def test_a_live_lease_elsewhere_is_left_alone_and_an_expired_one_taken_over(
    server: emulator.EmulatorHandle, history_location: str
) -> None:
    history = History(history_location)
    with genlab.Client(server.base_url, KEY, history=history) as client:
        task = client.submit(IMAGE)
    history.close()
    history = History(history_location)
    far = "ana@another-machine/4121/9f2c01ab"  # a process this machine cannot see
    history.query("UPDATE tasks SET lease_owner=?, lease_until=?",
                  (far, time.time() + 3600))
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.05) as client:
        (left,) = history.resume(client, timeout=30)
        assert left.leased_by == far and left.record is None
        assert left.status == f"waited on by {far}"
        history.query("UPDATE tasks SET lease_until=?", (time.time() - 1,))  # it crashed
        (taken,) = history.resume(client, timeout=30)
    assert taken.task_id == task.task_id and taken.status == "succeeded"
    history.close()


def test_leases_are_renewed_while_waiting_and_handed_back_on_close(
    history_location: str,
) -> None:
    with emulator.start(api_key=KEY, time_scale=0.05, max_processing=1) as server:
        history = History(history_location, lease_seconds=0.6)
        with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.05) as client:
            task = client.submit(SLOW)
            first = history.query("SELECT lease_until FROM tasks")[0]["lease_until"]
            for _ in range(100):  # bounded: renewed every 0.2 s
                time.sleep(0.05)
                later = history.query("SELECT lease_until FROM tasks")[0]["lease_until"]
                if later > first:
                    break
            assert later > first
            history.close()
        reopened = History(history_location)
        (row,) = reopened.unfinished()
        assert row["task_id"] == task.task_id and row["lease_until"] is None
        reopened.close()


# --- schema migrations ------------------------------------------------------------------

# The table as an early genlab wrote it, before migrations (no address, assumed price or
# error_json columns, no reuses table).
OLD_SCHEMA = """
CREATE TABLE tasks (
    task_id TEXT UNIQUE, model TEXT NOT NULL, kind TEXT NOT NULL, mode TEXT, status TEXT,
    state TEXT NOT NULL, tag TEXT, prompt TEXT, resolution TEXT, duration REAL, credits INTEGER,
    submitted_at REAL NOT NULL, accepted_at REAL, created_at REAL, started_at REAL,
    completed_at REAL, error_code TEXT, error_message TEXT, result_count INTEGER,
    result_url TEXT, width INTEGER, height INTEGER, media_seconds REAL, results TEXT,
    paths TEXT, request TEXT NOT NULL, entry_id TEXT PRIMARY KEY, reason TEXT,
    updated_at REAL NOT NULL
);
CREATE TABLE events (task_id TEXT NOT NULL, status TEXT NOT NULL, at REAL NOT NULL);
INSERT INTO tasks (task_id, model, kind, status, state, prompt, credits, submitted_at,
                   created_at, completed_at, request, entry_id, updated_at)
VALUES ('t-old', 'video-a', 'video', 'succeeded', 'accepted', 'kept', 160, 1700000000,
        1700000001, 1700000013, '{}', 'e-old', 1700000013);
"""


def test_an_old_history_file_is_upgraded_without_losing_a_row(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    for _ in range(2):  # upgraded once; opening it again changes nothing
        history = History(path)
        df = history.df()
        assert df["task_id"].tolist() == ["t-old"] and df["prompt"].tolist() == ["kept"]
        assert df["total_seconds"].tolist() == [12.0] and df["user"].isna().all()
        assert history.query("SELECT version_num FROM alembic_version") == [
            {"version_num": HEAD}]
        assert history.spend()["credits"].tolist() == [160]  # the reuses table was added
        history.close()


def test_head_names_the_newest_migration() -> None:
    from alembic.script import ScriptDirectory

    from genlab.history._migrate import SCRIPTS
    from genlab.history._schema import HEAD

    assert ScriptDirectory(str(SCRIPTS)).get_current_head() == HEAD


def test_the_migrations_build_what_the_column_table_says(history_location: str) -> None:
    from genlab.history._schema import METADATA

    history = History(history_location)
    found = sa.inspect(history.engine)
    for table in METADATA.sorted_tables:
        built = {c["name"]: c["nullable"] for c in found.get_columns(table.name)}
        assert built == {c.name: c.nullable for c in table.columns}, table.name
    history.close()


# --- copying a laptop's history into the team's database ---------------------------------


def test_history_migrate_copies_into_the_team_database_once(
    server: emulator.EmulatorHandle, tmp_path: Path, postgres_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local = tmp_path / "laptop.sqlite"
    history = History(local)
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.05) as client:
        client.generate(IMAGE)
        client.generate({**IMAGE, "prompt": "a boat"}, reuse=False)
    history.close()
    assert main(["history", "migrate", str(local), postgres_url]) == 0
    assert "copied 2 submission(s)" in capsys.readouterr().out
    assert main(["history", "migrate", str(local), postgres_url]) == 0  # idempotent
    assert "copied 0 submission(s)" in capsys.readouterr().out
    team = History(postgres_url)
    df = team.df()
    assert sorted(df["prompt"]) == ["a boat", "a kite"] and (df["status"] == "succeeded").all()
    assert len(team.query("SELECT * FROM events")) >= 4  # each task's status changes came along
    assert team.duration_samples()  # the team learns from the laptop's timings
    team.close()
    again = copy_history(local, postgres_url)
    assert (again.tasks, again.skipped) == (0, 2)


def test_history_migrate_refuses_a_missing_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "migrate", str(tmp_path / "nope.sqlite"),
                 str(tmp_path / "b.sqlite")]) == 2
    assert "no history at" in capsys.readouterr().err
    assert not (tmp_path / "nope.sqlite").exists()


def test_a_history_in_use_is_not_closed_under_another_reader(history_location: str) -> None:
    # Two History objects on one location in one process, as two notebooks' kernels would.
    a, b = History(history_location), History(history_location)
    assert a.df().empty and b.df().empty
    a.close()
    assert b.df().empty
    b.close()


def test_a_downgrade_is_refused_and_keeps_every_row(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from genlab.history._migrate import SCRIPTS

    path = tmp_path / "h.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    History(path).close()  # upgraded to the newest revision
    history = History(path)
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    with history.engine.begin() as connection:
        config.attributes["connection"] = connection
        with pytest.raises(RuntimeError, match="never downgraded"):
            command.downgrade(config, "base")
    assert history.df()["task_id"].tolist() == ["t-old"]
    assert history.query("SELECT version_num FROM alembic_version") == [{"version_num": HEAD}]
    history.close()
