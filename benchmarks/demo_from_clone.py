"""From ``git clone`` to the demo's last line, install included, as a new user meets it.

Each run clones this repository (its committed HEAD) into an empty temporary folder and runs
``make demo`` there, which makes a fresh ``.venv``. Before each run the installer's cache loses
what genlab itself built (``uv cache clean genlab``); the cache of the packages genlab depends
on stays as the machine has it (warm after the first install). Medians of ``--runs`` runs.

    python -m benchmarks.demo_from_clone                 # make demo (uv)
    python -m benchmarks.demo_from_clone --installer pip # the same install with pip

Not part of ``make bench`` (it takes minutes and reaches the package registry).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 60.0
FIRST_DEMO_LINE = "1. The catalog"


def _pip_demo(clone: Path) -> list[str]:
    """What make demo did before uv: pip installs the same extras."""
    return ["bash", "-c", "python3 -m venv .venv && .venv/bin/python -m pip install --quiet "
            "-e '.[emulator,notebook]' && .venv/bin/python -m genlab demo"]


def one_run(installer: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="genlab-clone-") as folder:
        clone = Path(folder) / "genlab"
        uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
        subprocess.run([uv, "cache", "clean", "genlab"], capture_output=True, check=False)
        started = time.perf_counter()
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        command = ["make", "demo"] if installer == "uv" else _pip_demo(clone)
        process = subprocess.Popen(command, cwd=clone, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        installed = None
        assert process.stdout is not None
        for line in process.stdout:
            if installed is None and line.startswith(FIRST_DEMO_LINE):
                installed = time.perf_counter()
        if process.wait() != 0:
            raise RuntimeError(f"the demo failed in {clone}")
        done = time.perf_counter()
        return {"total": done - started, "install": (installed or done) - started,
                "demo": done - (installed or done)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--installer", choices=["uv", "pip"], default="uv")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    runs = [one_run(args.installer) for _ in range(args.runs)]
    for name in ("install", "demo", "total"):
        values = [r[name] for r in runs]
        print(f"{args.installer:>3} {name:<8} median {statistics.median(values):6.1f} s   "
              f"runs: {', '.join(f'{v:.1f}' for v in values)}")
    total = statistics.median(r["total"] for r in runs)
    print(f"goal: clone to the demo's last line under {GOAL:.0f} s: "
          f"{'met' if total < GOAL else 'missed'} ({total:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
