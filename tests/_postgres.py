"""A throwaway PostgreSQL cluster on loopback, started by the tests and removed afterwards.

Debian's ``postgresql`` package provides the server (``make test`` installs it when missing).
``initdb`` makes a cluster in a temporary folder (as the ``postgres`` user when the tests run as
root, since the server refuses to run as root); ``pg_ctl`` starts it on a free loopback port
with no Unix socket and fsync off; each test that asks for ``postgres_url`` gets a database of
its own, dropped afterwards. No mocks: the real server.

A cluster never outlives its test run: it is stopped when the run ends, also on Ctrl-C,
SIGTERM or SIGHUP (the signal handlers and ``atexit`` below). A run killed outright (SIGKILL)
cannot clean up, so each cluster's folder names the run that started it (``owner``: its pid and
start time), and the next run stops and removes every cluster whose run is gone.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import psutil
import pytest

USER = "genlab"
PREFIX = "genlab-pg-"
OWNER = "owner"  # in a cluster's folder: "<pid> <start time>" of the run that started it


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
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        me = psutil.Process()
        (self.root / OWNER).write_text(f"{me.pid} {me.create_time()!r}")
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
        _RUNNING[str(self.root)] = self
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", USER, "-A", "trust",
                  "--no-sync", "--no-locale", "-E", "UTF8")
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                   "-c unix_socket_directories='' -c fsync=off -c full_page_writes=off "
                   "-c synchronous_commit=off -c max_connections=200")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.root / "server.log"), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                          "-w", "stop")
        finally:
            _stop_server(self.data)  # pg_ctl may have failed, or been interrupted
            shutil.rmtree(self.root, ignore_errors=True)
            _RUNNING.pop(str(self.root), None)

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


_RUNNING: dict[str, Cluster] = {}
"""The clusters this process started and has not stopped yet."""


def _server_of(data: Path) -> psutil.Process | None:
    """The running postmaster of the cluster in ``data``, if any."""
    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
        server = psutil.Process(pid)
        if str(data) in server.cmdline():
            return server
    except (OSError, ValueError, IndexError, psutil.Error):
        pass
    return None


def _stop_server(data: Path, timeout: float = 30) -> None:
    """Stop the postmaster of ``data`` (immediate shutdown: SIGQUIT), killing it if it lingers."""
    server = _server_of(data)
    if server is None:
        return
    for sig in (signal.SIGQUIT, signal.SIGKILL):
        try:
            server.send_signal(sig)
        except psutil.NoSuchProcess:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _runs(server):
                return
            time.sleep(0.05)


def _runs(server: psutil.Process) -> bool:
    """Whether ``server`` still runs (one that exited and was not reaped yet does not)."""
    try:
        return server.is_running() and server.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _owner_runs(root: Path) -> bool:
    """Whether the test run that made the cluster in ``root`` is still running."""
    try:
        pid_text, started = (root / OWNER).read_text().split()
    except FileNotFoundError:
        # Made a moment ago, its owner file not written yet; or not by these fixtures: left.
        return True
    except (OSError, ValueError):
        return False
    try:
        return psutil.Process(int(pid_text)).create_time() == float(started)
    except (ValueError, psutil.Error):
        return False


def remove_stale_clusters(folder: Path | None = None) -> list[Path]:
    """Stop and remove the clusters whose test run is gone (killed); the folders removed."""
    removed = []
    for root in sorted(Path(folder or tempfile.gettempdir()).glob(PREFIX + "*")):
        if not root.is_dir() or str(root) in _RUNNING or _owner_runs(root):
            continue
        _stop_server(root / "data")
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


def stop_all() -> None:
    """Stop every cluster this process started (the run ends, or was told to)."""
    for cluster in list(_RUNNING.values()):
        try:
            cluster.stop()
        except Exception:  # stopping the others matters more than this one's error
            pass


_HANDLED: dict[int, object] = {}


def _on_signal(signum: int, frame: FrameType | None) -> None:
    stop_all()
    previous = _HANDLED.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif previous != signal.SIG_IGN:
        # The default action (the run ends by this signal), as if it were not handled here.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install_cleanup() -> None:
    """Stop this process's clusters at exit, and on SIGTERM and SIGHUP (Ctrl-C raises
    KeyboardInterrupt, and the fixture's own ``finally`` stops its cluster)."""
    if _HANDLED or threading.current_thread() is not threading.main_thread():
        return
    atexit.register(stop_all)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.signal(signum, _on_signal)
        _HANDLED[signum] = previous


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A PostgreSQL cluster for the whole session (skipped, outside CI, when not installed)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        message = "PostgreSQL is not installed: `make test` installs Debian's postgresql"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    _install_cleanup()
    remove_stale_clusters()
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
