"""A throwaway PostgreSQL cluster on loopback, started by the tests and removed afterwards.

Debian's ``postgresql`` package provides the server (``make test`` installs it when missing).
``initdb`` makes a cluster in a temporary folder (as the ``postgres`` user when the tests run as
root, since the server refuses to run as root); ``pg_ctl`` starts it on a free loopback port
with no Unix socket and fsync off; each test that asks for ``postgres_url`` gets a database of
its own, dropped afterwards. No mocks: the real server.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

USER = "genlab"


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A running cluster: ``url(database)`` gives a URL to one of its databases."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="genlab-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:  # the server refuses root: run it as Debian's postgres user
            shutil.chown(self.root, "postgres", "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._as, *args], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}\n{done.stderr}")

    def start(self) -> None:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", USER, "-A", "trust",
                  "--no-sync", "--no-locale", "-E", "UTF8")
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                   "-c unix_socket_directories='' -c fsync=off -c full_page_writes=off "
                   "-c synchronous_commit=off -c max_connections=200")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.root / "server.log"), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                      "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A PostgreSQL cluster for the whole session (skipped, outside CI, when not installed)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        message = "PostgreSQL is not installed: `make test` installs Debian's postgresql"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    for attempt in range(3):  # the free port may be taken between the probe and the start
        cluster = Cluster(bin_dir)
        try:
            cluster.start()
            break
        except RuntimeError:
            cluster.stop()
            if attempt == 2:
                raise
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres: Cluster) -> Iterator[str]:
    """A URL to an empty database of this test's own."""
    name = postgres.create_database()
    try:
        yield postgres.url(name)
    finally:
        postgres.drop_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def history_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's history lives: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    url: str = request.getfixturevalue("postgres_url")
    return url
