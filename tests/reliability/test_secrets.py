"""Secrets: the API key appears in nothing genlab writes or shows, and the emulator compares
keys in constant time.

Two runs produce artifacts: the demo (``python -m genlab demo``, with the key in
``GENLAB_API_KEY`` although the demo uses its own emulator), and a client session against
``genlab serve --api-key <key>`` that logs at DEBUG to a file, hits every kind of error and
prints it, keeps a History, downloads results with their sidecars, and writes a Comparison
report and a History report. Every file, log, database (and its -wal), notebook, HTML report
and exception text is then searched for the key.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx

import genlab.emulator._api.deps as emulator_auth
from genlab.emulator import create_app

from ._support import KEY, ROOT_NOTEBOOKS, closed_port, serve, stop_process
from .conftest import Scale
from .figures import Figures

SESSION = textwrap.dedent(
    """
    import logging, os, sys, traceback
    from pathlib import Path

    import httpx
    import genlab
    from genlab.history import History

    out = Path(os.environ["OUT"])
    logging.basicConfig(filename=out / "debug.log", level=logging.DEBUG,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    shown = open(out / "exceptions.txt", "w", encoding="utf-8")
    base_url = os.environ["GENLAB_BASE_URL"]
    key = os.environ["GENLAB_API_KEY"]

    def show(exc):
        # Everything a user may see of an error: str, repr, traceback, attached bodies.
        text = f"{type(exc).__name__}: {exc}\\n{exc!r}\\n"
        text += "".join(traceback.format_exception(exc))
        for name in ("body", "record", "message", "errors"):
            text += f"{name}: {getattr(exc, name, None)!r}\\n"
        shown.write(text)
        print(text)
        traceback.print_exception(exc)

    def faults(**changes):
        headers = {"Authorization": f"Bearer {key}"}
        answer = httpx.put(f"{base_url}/v1/emulator/faults", json=changes, headers=headers)
        assert answer.status_code == 200, answer.text

    history = History(out / "history.sqlite")
    options = dict(poll_scale=0.05, retry_wait_initial=0.01, retry_wait_max=0.05)
    client = genlab.connect(history=history, **options)
    print(repr(client), repr(client.config), str(client.config), repr(client.aio))
    for body in ({"model": "image-d", "prompt": "a kite", "resolution": "512"},
                 {"model": "video-a", "prompt": "a fox", "resolution": "480P", "duration": 2}):
        record = client.generate(body)
        print(record, record.model_dump_json())
        print(client.download(record, out / "downloads"))

    cases = [
        ("invalid", {}, lambda: client.submit(model="video-a", prompt="", duration=99)),
        ("failed", {"fail_rate": 1}, lambda: client.generate(model="image-d", prompt="x",
                                                             resolution="512")),
        ("uncertain", {"drop_rate": 1}, lambda: client.submit(model="image-d", prompt="y",
                                                              resolution="512")),
        ("rate limited", {"rate_limit_rate": 1, "retry_after": 0.01},
         lambda: client.submit(model="image-d", prompt="z", resolution="512")),
        ("server error", {"error_rate": 1},
         lambda: client.submit(model="image-d", prompt="w", resolution="512")),
        ("timeout", {}, lambda: client.wait(
            client.submit(model="video-a", prompt="slow", duration=30), timeout=0.01)),
        ("not found", {}, lambda: client.get("task_does_not_exist", kind="video")),
        ("wrong key", {}, lambda: genlab.Client(base_url, "sk-wrong-" + "x" * 20).submit(
            model="image-d", prompt="v", resolution="512")),
        ("unreachable", {}, lambda: genlab.Client(os.environ["CLOSED_URL"], key,
                                                  max_retries=1, **options).submit(
            model="image-d", prompt="u", resolution="512")),
        ("config", {}, lambda: genlab.Client(base_url, "")),
    ]
    for name, changes, action in cases:
        faults(**changes)
        try:
            action()
            print(f"{name}: no error")
        except Exception as exc:
            show(exc)
        faults(fail_rate=0, drop_rate=0, rate_limit_rate=0, error_rate=0)

    cmp = genlab.compare(client, prompts=["a red kite", "a paper boat"],
                         models=["image-d", "video-a"],
                         params={"resolution": ["512", "480P"], "duration": 2},
                         max_credits=10_000, progress=False, download_dir=out / "compare")
    print(cmp, cmp.summary().to_string())
    cmp.to_html(out / "comparison.html")
    (out / "gallery.html").write_text(cmp.gallery().data, encoding="utf-8")
    from genlab import report
    report.write_report(history.df(), out / "history-report.html")
    history.df().to_csv(out / "history.csv")
    print(history.df().to_string(), history.summary().to_string())
    print("session done")
    """
)


def scan(paths: list[Path], needle: bytes) -> tuple[int, int, list[str]]:
    """Files scanned, bytes scanned, and the files that contain ``needle``."""
    files = total = 0
    hits: list[str] = []
    for path in paths:
        for file in ([path] if path.is_file() else sorted(path.rglob("*"))):
            if not file.is_file():
                continue
            data = file.read_bytes()
            files += 1
            total += len(data)
            if needle in data:
                hits.append(str(file))
    return files, total, hits


def run_logged(command: list[str], log: Path, *, env: dict[str, str], cwd: Path,
               timeout: float) -> int | str:
    """The exit code, or ``"hung"`` when it did not end within ``timeout`` (then killed)."""
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True,
                                   env=env, cwd=cwd)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            return f"hung for more than {timeout:g} s"
        finally:
            stop_process(process)


def test_the_key_appears_in_no_artifact(tmp_path: Path, figures: Figures) -> None:
    section = figures.section("secrets", "Secrets: the API key in artifacts, constant-time check")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    demo_dir, session_dir = tmp_path / "demo", tmp_path / "session"
    demo_dir.mkdir()
    session_dir.mkdir()

    demo_log = tmp_path / "demo-output.txt"
    demo_rc = run_logged(
        [sys.executable, "-m", "genlab", "demo", "--output", str(demo_dir / "out"),
         "--time-scale", "0.01"],
        demo_log, env={**env, "GENLAB_API_KEY": KEY, "GENLAB_HISTORY": str(demo_dir / "h.db")},
        cwd=demo_dir, timeout=300,
    )

    session_log = tmp_path / "session-output.txt"
    with serve("--time-scale", "0.01") as server:
        session_rc = run_logged(
            [sys.executable, "-c", SESSION], session_log,
            env={**env, "GENLAB_BASE_URL": server.base_url, "GENLAB_API_KEY": KEY,
                 "OUT": str(session_dir), "CLOSED_URL": f"http://127.0.0.1:{closed_port()}"},
            cwd=session_dir, timeout=300,
        )
        server_output = tmp_path / "serve-output.txt"
        server_output.write_text("".join(server.output), encoding="utf-8")

    artifacts = [demo_log, demo_dir, session_log, session_dir, server_output,
                 *ROOT_NOTEBOOKS.glob("*.ipynb")]
    files, scanned, hits = scan(artifacts, KEY.encode())
    session_text = session_log.read_text(encoding="utf-8", errors="replace")
    produced = {
        "debug log": (session_dir / "debug.log").stat().st_size > 0,
        "history database": (session_dir / "history.sqlite").exists(),
        "comparison report": (session_dir / "comparison.html").exists(),
        "sidecars": any((session_dir / "downloads").glob("*.json")),
        "every error shown": all(word in session_text for word in (
            "InvalidParameterError", "TaskFailedError", "SubmissionUncertainError",
            "RateLimitError", "ServerError", "TaskTimeoutError", "NotFoundError",
            "AuthenticationError", "APIConnectionError", "ConfigurationError")),
    }
    section.goal("demo exit code", demo_rc, "0", demo_rc == 0)
    section.goal("session exit code", session_rc, "0",
                 session_rc == 0 and "session done" in session_text)
    section.goal("artifacts produced", ", ".join(k for k, v in produced.items() if v),
                 "all five", all(produced.values()))
    section.add("artifacts scanned", files)
    section.add("bytes scanned", scanned, "B")
    section.goal("files containing the key", len(hits), "0", not hits)
    for hit in hits:
        section.note(f"the key was found in {hit}")
    if demo_rc or session_rc:
        section.note("tail of the output: " + (demo_log if demo_rc else session_log).read_text(
            encoding="utf-8", errors="replace")[-1500:])
    section.assert_goals()


def test_the_emulator_compares_keys_in_constant_time(scale: Scale, figures: Figures) -> None:
    section = figures.section("secrets", "Secrets: the API key in artifacts, constant-time check")
    source = inspect.getsource(emulator_auth.require_key)
    uses_digest = re.search(r"hmac\.compare_digest\(\s*(token|given)", source) is not None
    plain = re.search(r"token[^\n]*==|==[^\n]*api_key", source) is not None
    section.goal("key compared with hmac.compare_digest", "yes" if uses_digest else "no",
                 "yes", uses_digest and not plain)

    wrong = {
        "all characters wrong": "x" * len(KEY),
        "first character wrong": ("A" if KEY[0] != "A" else "B") + KEY[1:],
        "last character wrong": KEY[:-1] + ("A" if KEY[-1] != "A" else "B"),
    }
    medians = asyncio.run(_rejection_medians(wrong, scale.timing_samples))
    for name, seconds in medians.items():
        section.add(f"median rejection, {name}", seconds * 1e6, "µs")
    section.note("rejection times are figures, not assertions: the machine is shared and noisy")
    section.assert_goals()


async def _rejection_medians(keys: dict[str, str], samples: int) -> dict[str, float]:
    app = create_app(api_key=KEY)
    times: dict[str, list[float]] = {name: [] for name in keys}
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://emulator") as http:
            for _ in range(samples):
                for name, key in keys.items():  # interleaved, so drift hits all alike
                    started = time.perf_counter()
                    answer = await http.get("/v1/videos/tasks/t",
                                            headers={"Authorization": f"Bearer {key}"})
                    times[name].append(time.perf_counter() - started)
                    assert answer.status_code == 401
    finally:
        app.emulator.close()
    return {name: statistics.median(values) for name, values in times.items()}
