"""JupyterLab or Notebook 7 on a loopback port for the browser tests, serving a copy of the
notebooks, with everything it and its kernels write kept under one build folder (never the
user's home).

Both front ends share JupyterLab's settings folder, so :func:`set_theme` works for either;
:func:`notebook_url` is where a notebook opens in each."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import httpx

Frontend = Literal["lab", "notebook"]
FRONTENDS: tuple[Frontend, ...] = ("lab", "notebook")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("GENLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-gpu"]


THEMES = ("JupyterLab Light", "JupyterLab Dark")
"""The two themes every look is checked in."""


def notebook_text(*cells: Any) -> str:
    """A notebook on the python3 kernel, as text: each cell a code string or an nbformat cell."""
    import nbformat

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}},
    )
    return str(nbformat.writes(notebook))


CLOSE_WAIT = 60.0
"""Seconds a browser's close may take before its processes are killed."""


def chromium(playwright: Any, build: Path) -> GuardedBrowser:
    """Debian's Chromium, headless, asking nothing of the network; its files under ``build``.

    Its ``close()`` cannot hang the run: see :class:`GuardedBrowser`."""
    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} is missing: run `make test-browser`, which "
                                "installs it")
    before = _descendants()
    browser = playwright.chromium.launch(executable_path=str(_without_realtime(build)),
                                         headless=True, env=browser_env(build),
                                         args=CHROMIUM_ARGS)
    return GuardedBrowser(browser, *_launched(before))


def _without_realtime(build: Path) -> Path:
    """A launcher that starts Chromium unable to take a real-time scheduling class.

    Run as root, Chromium may move a thread (its audio output, when a page plays sound) to a
    real-time class; a spinning real-time thread then starves both cores of a small machine,
    and the process ignores even SIGKILL until it is scheduled. Without CAP_SYS_NICE and with
    RLIMIT_RTPRIO at 0 the request fails and Chromium runs on at normal priority; a real-time
    class inherited from the Playwright driver is reset to the normal one first. Where
    ``setpriv`` or ``prlimit`` is missing, Chromium is started as it is."""
    setpriv, prlimit = shutil.which("setpriv"), shutil.which("prlimit")
    if setpriv is None or prlimit is None:
        return Path(CHROMIUM)
    chrt = shutil.which("chrt")
    # A class inherited from the driver (moved to real time from outside) is dropped first.
    normal = f"{chrt} --other 0 " if chrt else ""
    build.mkdir(parents=True, exist_ok=True)
    launcher = build / "chromium-no-realtime"
    launcher.write_text(
        "#!/bin/sh\n"
        f'exec {normal}{setpriv} --bounding-set -sys_nice --inh-caps -sys_nice -- '
        f'{prlimit} --rtprio=0 -- {CHROMIUM} "$@"\n'
    )
    launcher.chmod(0o755)
    return launcher


class GuardedBrowser:
    """A Playwright browser whose ``close()`` returns within :data:`CLOSE_WAIT` seconds and
    a little more, whatever Chromium does.

    A renderer that dies can leave Chromium spinning in the kernel, ignoring even SIGKILL, and
    Playwright's close then waits for ever. Past the wait, the watchdog kills this browser's
    process group (Playwright starts Chromium as its own group), then, if close still has not
    returned, the Playwright driver that launched it, which ends the pending close with an error
    that is reported and swallowed. Everything else is the browser's own."""

    def __init__(self, browser: Any, group: int | None, driver: int | None) -> None:
        self._browser = browser
        self._group = group
        self._driver = driver
        self.killed: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)

    def close(self, wait: float = CLOSE_WAIT) -> None:
        closed = threading.Event()

        def watchdog() -> None:
            if closed.wait(wait):
                return
            if self._group is not None:
                self._kill(self._group, group=True)
            if not closed.wait(5) and self._driver is not None:
                self._kill(self._driver, group=False)

        guard = threading.Thread(target=watchdog, name="browser-close-watchdog", daemon=True)
        guard.start()
        try:
            self._browser.close()
        except Exception as exc:
            if not self.killed:
                raise
            print(f"browser close ended by killing {', '.join(self.killed)}: {exc}",
                  file=sys.stderr)
        finally:
            closed.set()
            guard.join()

    def _kill(self, pid: int, *, group: bool) -> None:
        if pid <= 1 or pid == os.getpid() or (group and pid == os.getpgrp()):
            return  # never this process or its own group
        what = f"Chromium's process group {pid}" if group else f"the Playwright driver {pid}"
        try:
            (os.killpg if group else os.kill)(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        self.killed.append(what)
        print(f"browser close did not return: killed {what}", file=sys.stderr)


def _descendants() -> dict[int, Any]:
    import psutil

    return {p.pid: p for p in psutil.Process().children(recursive=True)}


def _launched(before: dict[int, Any]) -> tuple[int | None, int | None]:
    """The process group of the Chromium just launched and the driver that launched it."""
    import psutil

    for pid, process in _descendants().items():
        if pid in before:
            continue
        try:
            if os.getpgid(pid) != pid:
                continue
            parent = process.parent()
            if parent is not None and "playwright" in " ".join(parent.cmdline()):
                return pid, parent.pid
        except (psutil.Error, ProcessLookupError):
            continue
    return None, None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def browser_env(build: Path) -> dict[str, str | float | bool]:
    """Chromium's environment: its crash reports and caches go under ``build``/home."""
    home = build / "home"
    env: dict[str, str | float | bool] = dict(os.environ)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "xdg-config"),
               XDG_CACHE_HOME=str(home / "cache"))
    return env


def set_theme(build: Path, theme: str) -> None:
    """The theme JupyterLab opens in (``JupyterLab Light`` or ``JupyterLab Dark``)."""
    folder = build / "user-settings" / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "themes.jupyterlab-settings").write_text(f'{{"theme": "{theme}"}}')


def notebook_url(base: str, name: str, frontend: Frontend = "lab") -> str:
    """Where notebook ``name`` opens: JupyterLab's ``/lab/tree/``, Notebook 7's ``/notebooks/``."""
    return f"{base}/lab/tree/{name}" if frontend == "lab" else f"{base}/notebooks/{name}"


@contextmanager
def jupyterlab(build: Path, frontend: Frontend = "lab", *, autosave: int | None = None,
               base_url: str = "/") -> Iterator[str]:
    """JupyterLab (or Notebook 7, ``frontend="notebook"``) serving a copy of notebooks/ in
    ``build``/notebooks; its base URL. It is set up only by installing genlab, as for a
    ``make lab``, Binder or ``pip install 'genlab[lab]'`` user: the server extension and
    JupyterLab's settings come from this environment's own folders (genlab.jupyter), nothing
    is copied here; the person's folders (home, config, settings) start empty.

    ``autosave``: seconds between autosaves (JupyterLab's default is 120).
    ``base_url``: where the server answers, e.g. ``/user/ana/`` as under JupyterHub or
    Binder."""
    if build.exists():
        shutil.rmtree(build)
    work = build / "notebooks"
    shutil.copytree(ROOT / "notebooks", work,
                    ignore=shutil.ignore_patterns(".genlab", "genlab-output", "genlab-media"))
    settings = build / "user-settings" / "@jupyterlab"
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}'  # render every cell, not only those in view
    )
    if autosave is not None:
        (settings / "docmanager-extension").mkdir(parents=True)
        (settings / "docmanager-extension" / "plugin.jupyterlab-settings").write_text(
            f'{{"autosaveInterval": {int(autosave)}}}'
        )
    (settings / "apputils-extension").mkdir(parents=True)
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    env["JUPYTERLAB_SETTINGS_DIR"] = str(build / "user-settings")
    home = build / "home"
    for name, sub in (("HOME", ""), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                      ("JUPYTER_DATA_DIR", "xdg-data/jupyter"),
                      ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                      ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib"),
                      ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "xdg-config"),
                      ("XDG_DATA_HOME", "xdg-data")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / sub)
    app = "LabApp" if frontend == "lab" else "JupyterNotebookApp"
    command = [
        sys.executable, "-m", "jupyterlab" if frontend == "lab" else "notebook",
        "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.root_dir={work}", "--IdentityProvider.token=", "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True", "--ServerApp.allow_root=True",
        f"--ServerApp.base_url={base_url}",
    ]
    if frontend == "lab":
        command += ["--LabApp.news_url=",
                    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                    "--LabApp.extension_manager=readonly"]
    log_name = "jupyterlab.log" if frontend == "lab" else "notebook.log"
    log = (build / log_name).open("w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
    base = f"http://127.0.0.1:{port}{base_url.rstrip('/')}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/api/status", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            raise RuntimeError(f"{app} did not start; see {build / log_name}")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


_SCROLL_TO = """
(e, offset) => {
  let s = e.parentElement;
  while (s && !(s.scrollHeight > s.clientHeight
                && /(auto|scroll)/.test(getComputedStyle(s).overflowY))) s = s.parentElement;
  s = s || document.scrollingElement;
  const top = () => s === document.scrollingElement ? 0 : s.getBoundingClientRect().top;
  s.scrollTop += e.getBoundingClientRect().top + offset - top();
  const r = e.getBoundingClientRect();
  const shownTop = Math.max(r.top + offset, top(), 0);
  const bottom = Math.min(r.bottom, s === document.scrollingElement ? innerHeight
                          : s.getBoundingClientRect().bottom, innerHeight);
  return {x: Math.max(r.left, 0), y: shownTop, width: Math.min(r.width, innerWidth),
          height: bottom - shownTop, start: shownTop - r.top, whole: r.height};
}
"""


def tall_screenshot(page: Any, locator: Any, path: Path) -> None:
    """The whole of an element taller than the window, on a window of ordinary size: it is
    scrolled through its scrolling ancestor (JupyterLab scrolls the notebook, not the page, so
    ``full_page`` shows no more than the window) a window's height at a time, and the pieces
    are joined. Never resize the window to fit tall content: very tall windows have crashed
    Chromium's renderer."""
    from io import BytesIO

    from PIL import Image

    pieces: list[tuple[float, Image.Image]] = []
    offset, whole, scale = 0.0, 1.0, 1.0
    while offset < whole - 0.5:
        box = locator.evaluate(_SCROLL_TO, offset)
        if box["height"] < 1:
            break
        page.wait_for_timeout(200)  # scrolled content paints
        clip = {k: box[k] for k in ("x", "y", "width", "height")}
        piece = Image.open(BytesIO(page.screenshot(clip=clip)))
        scale = piece.width / box["width"]  # device pixels per CSS pixel
        pieces.append((box["start"], piece))
        offset, whole = box["start"] + box["height"], box["whole"]
    if not pieces:
        raise AssertionError(f"nothing of {locator} is in view to take a picture of")
    joined = Image.new("RGB", (pieces[0][1].width, round(offset * scale)))
    for start, piece in pieces:
        joined.paste(piece, (0, round(start * scale)))
    joined.save(path)


def wait_until(condition: Any, what: str, timeout: float = 240) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.5)


def kernels_idle(base: str) -> bool:
    """The server runs kernels, and all of them are idle."""
    answer = httpx.get(f"{base}/api/kernels", timeout=10)
    if answer.status_code != 200:  # a kernel still starting can fail the listing (500): later
        return False
    kernels = answer.json()
    return bool(kernels) and all(k["execution_state"] == "idle" for k in kernels)


def shut_down_kernels(base: str) -> None:
    """End every session and its kernel, as a person closing the notebook would."""
    for session in httpx.get(f"{base}/api/sessions", timeout=10).json():
        httpx.delete(f"{base}/api/sessions/{session['id']}", timeout=30)
    wait_until(lambda: httpx.get(f"{base}/api/kernels", timeout=10).json() == [],
               "the kernels to shut down", 60)


def run_all(page: Any, base: str, shown: str) -> None:
    """Run every cell once the kernel is idle (a run sent before it is ready is dropped), in
    JupyterLab or Notebook 7, until the selector ``shown`` appears."""
    for attempt in range(3):
        wait_until(lambda: kernels_idle(base), "an idle kernel", 300)
        # The page may still be connecting to it ("Kernel Initializing" in Notebook 7).
        page.get_by_text("Kernel Initializing").wait_for(state="hidden")
        try:
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click(timeout=20_000)
            page.locator(shown).first.wait_for(state="visible", timeout=300_000)
            return
        except Exception:
            page.keyboard.press("Escape")  # a menu left open
            if attempt == 2:
                raise
