"""A kernel leaves nothing in the temporary folder, and keeps what a person made.

A process (as a kernel would) connects to the embedded emulator, runs a Studio task, and exits;
its temporary folder (``TMPDIR``) is watched while it runs and after it ended.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import json, os, sys
import genlab

keep = sys.argv[1] == "keep"
client = genlab.connect(keep=keep, time_scale=0.02)  # the other tests' pace, not a person's
studio = genlab.studio(client)
studio.set(model="image-b", prompt="a paper kite over a long beach")
card = studio.submit()
assert card.wait_done(180), card.status
print(json.dumps({"status": card.status, "paths": [str(p) for p in card.paths],
                  "media": "<img" in card.media.value,
                  "tmp": sorted(os.listdir(os.environ["TMPDIR"]))}))
"""


def _run(tmp_path: Path, mode: str) -> tuple[dict[str, object], list[str]]:
    scratch = tmp_path / "tmp"
    work = tmp_path / "work"
    scratch.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    env.update(TMPDIR=str(scratch), PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    return seen, sorted(os.listdir(scratch))


def _genlab(names: object) -> list[str]:
    assert isinstance(names, list)
    return [n for n in names if str(n).startswith("genlab-")]


def test_kept_results_need_no_temporary_folder_and_the_emulators_goes_at_exit(
    tmp_path: Path,
) -> None:
    seen, after = _run(tmp_path, "keep")
    assert seen["status"] == "succeeded" and seen["media"]
    # While it ran: only the emulator's store (the service's side) was temporary.
    assert [n.split("-")[1] for n in _genlab(seen["tmp"])] == ["emulator"]
    # The result is kept in the working folder, in genlab-media/ (which Jupyter's server
    # serves, unlike the history's hidden .genlab/), and stays there.
    paths = seen["paths"]
    assert isinstance(paths, list) and paths
    kept = [tmp_path / "work" / p for p in paths]  # relative to the working folder, or not
    assert all(k.exists() and k.resolve().is_relative_to(tmp_path / "work" / "genlab-media")
               for k in kept), paths
    assert _genlab(after) == []


def test_results_shown_but_not_kept_live_in_a_temporary_folder_removed_at_exit(
    tmp_path: Path,
) -> None:
    seen, after = _run(tmp_path, "nokeep")
    assert seen["status"] == "succeeded" and seen["media"]  # the preview is in the card
    assert sorted(n.split("-")[1] for n in _genlab(seen["tmp"])) == ["emulator", "studio"]
    paths = seen["paths"]
    assert isinstance(paths, list) and paths
    assert all("/tmp/genlab-studio-" in p for p in paths)
    assert not any(Path(p).exists() for p in paths)
    assert _genlab(after) == []


def test_the_run_keeps_jupyter_ipython_and_matplotlib_files_out_of_home() -> None:
    """Jupyter's notary database, IPython's profile and Matplotlib's font cache, which tests and
    their kernels write, go to folders of the run (the checkout's build/test-home, or the
    notebooks' own temporary profile), not to their places under ``~``."""
    import matplotlib
    from IPython.paths import get_ipython_dir
    from jupyter_core.paths import jupyter_data_dir

    home = Path.home()
    usual = [home / ".local" / "share" / "jupyter", home / ".jupyter", home / ".ipython",
             home / ".config" / "matplotlib", home / ".cache" / "matplotlib"]
    said = subprocess.run(  # a kernel or a worker started by a test inherits it
        [sys.executable, "-c", "from jupyter_core.paths import jupyter_data_dir as d; print(d())"],
        capture_output=True, text=True, check=True).stdout.strip()
    for where in (jupyter_data_dir(), get_ipython_dir(), matplotlib.get_configdir(), said):
        assert not any(Path(where).resolve().is_relative_to(u) for u in usual), where
    assert Path(jupyter_data_dir()).resolve().is_relative_to(ROOT / "build" / "test-home")
