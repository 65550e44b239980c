"""The test runs' PostgreSQL clusters never outlive them: stopped when a run is interrupted
(Ctrl-C) or terminated, and, when a run was killed outright, removed by the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from _postgres import OWNER, PREFIX, _bin_dir, _runs, _server_of, remove_stale_clusters

TESTS = Path(__file__).resolve().parent

_HOLD = textwrap.dedent("""
    import os, time
    from pathlib import Path

    def test_hold(postgres):
        Path(os.environ["PG_HOLD_FILE"]).write_text(str(postgres.root))
        time.sleep(600)
""")


@pytest.fixture
def held_cluster(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A test run (a subprocess) holding a cluster open; the run and its cluster's folder."""
    if _bin_dir() is None:
        pytest.skip("PostgreSQL is not installed: `make test` installs Debian's postgresql")
    # Ctrl-C raises KeyboardInterrupt in a run started from a terminal; a process started by
    # a pytest-xdist worker inherits SIGINT ignored (Python then installs no handler), so
    # the run puts the terminal's behaviour back first.
    (tmp_path / "conftest.py").write_text(
        "import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        f"sys.path.insert(0, {str(TESTS)!r})\nfrom _postgres import postgres\n")
    (tmp_path / "test_hold.py").write_text(_HOLD)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    told = tmp_path / "cluster"
    # The run needs the cluster's fixture alone; the installed plugins (nbval, hypothesis,
    # schemathesis, ...) would add seconds of start-up per run and nothing to what is tested.
    env = {**os.environ, "PG_HOLD_FILE": str(told), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    # Its output goes to a file, not a pipe nobody reads while it runs: a full pipe would
    # stall the run's own teardown, and a failure here shows what the run said.
    log = (tmp_path / "run.log").open("w")
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_hold.py"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    root = None
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and run.poll() is None and not told.exists():
            time.sleep(0.2)
        assert told.exists(), (tmp_path / "run.log").read_text()
        root = Path(told.read_text())
        yield run, root
    finally:
        if run.poll() is None:
            run.kill()
        run.wait(60)
        log.close()
        if root is not None:  # whatever the test found, nothing is left behind by it
            remove_stale_clusters(root.parent)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT],
                         ids=lambda s: signal.Signals(s).name)
def test_a_stopped_run_stops_its_cluster(held_cluster: tuple[subprocess.Popen[str], Path],
                                         signum: int) -> None:
    run, root = held_cluster
    server = _server_of(root / "data")
    assert server is not None and _runs(server)
    run.send_signal(signum)
    run.wait(300)  # its teardown stops the cluster: pg_ctl, then SIGQUIT, then SIGKILL, bounded
    assert not _runs(server)
    assert not root.exists()


def test_the_next_run_removes_the_cluster_of_a_killed_run(
    held_cluster: tuple[subprocess.Popen[str], Path]
) -> None:
    run, root = held_cluster
    server = _server_of(root / "data")
    assert server is not None
    run.kill()  # SIGKILL: no handler runs, the server stays
    run.wait(60)
    assert _runs(server) and root.exists()
    assert root in remove_stale_clusters(root.parent)  # what the next run's fixture does
    assert not _runs(server)
    assert not root.exists()


def _folder(parent: Path, owner: str | None) -> Path:
    root = parent / f"{PREFIX}{len(list(parent.iterdir()))}"
    (root / "data").mkdir(parents=True)
    if owner is not None:
        (root / OWNER).write_text(owner)
    return root


def test_only_clusters_of_runs_that_are_gone_are_removed(tmp_path: Path) -> None:
    me = psutil.Process()
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    gone = _folder(tmp_path, f"{finished.stdout.strip()} 1.0")
    reused_pid = _folder(tmp_path, f"{me.pid} {me.create_time() - 100!r}")  # pid reused
    running = _folder(tmp_path, f"{me.pid} {me.create_time()!r}")
    unknown = _folder(tmp_path, None)  # not these fixtures', or its owner not yet written
    assert sorted(remove_stale_clusters(tmp_path)) == sorted([gone, reused_pid])
    assert running.exists() and unknown.exists()
    assert not gone.exists() and not reused_pid.exists()
