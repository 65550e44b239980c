"""Pages for people who do not code, in Chromium, light and dark, at 1024 and 1400 px:

- ``genlab app --rate NAME``: the page asks the person's name, shows ten blind pairs rated by
  keys with how many are left, thanks them at the end, and the votes are in the history
  under their name;
  under their name; "Download my votes" gives a file that ``genlab history migrate`` merges
  into another history, once however often it is merged;
- ``genlab app``: the Studio reads as a page, with no log line, no emulator address and no
  developer buttons (Download, Copy as code) on a finished card unless ``--developer``, and
  uses the width without overflowing it.

Screenshots go to ``build/browser-rate/``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from ._lab import ROOT, _free_port, chromium

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-rate"
KEY = "rate-page-key-7e21"
PAIRS = 10


def _env(build: Path) -> dict[str, str]:
    home = build / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    env["PYTHONPATH"] = str(ROOT / "src")  # the page's kernel imports this checkout's genlab
    for name, sub in (("HOME", ""), ("JUPYTER_RUNTIME_DIR", "runtime"),
                      ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                      ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib"),
                      ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "xdg-config"),
                      ("XDG_DATA_HOME", "xdg-data")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / sub)
    return env


@contextmanager
def _app(build: Path, *args: str) -> Iterator[str]:
    """``genlab app ARGS`` run in ``build`` as a person runs it; its base URL."""
    port = _free_port()
    log = (build / f"app-{port}.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "genlab", "app", "--no-browser", f"--port={port}", *args],
        cwd=build, env=_env(build), stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/voila/static/", timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None:
                    break
                time.sleep(0.3)
        if process.poll() is not None:
            pytest.fail(f"genlab app stopped; see {log.name}")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def rated_folder() -> Path:
    """A folder with a history holding experiment ``kites``: two prompt versions of one
    model, five subjects and two seeds, so ten blind pairs."""
    import genlab
    from genlab import emulator
    from genlab.experiments import prompt
    from genlab.history import History

    folder = BUILD / "work"
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    (folder / ".genlab").mkdir(parents=True)
    history = History(folder / ".genlab" / "history.sqlite")
    try:
        with emulator.start(api_key=KEY, time_scale=0.02) as server, \
                genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                              wait_timeout=180, keep=folder / ".genlab" / "media") as client:
            kite = prompt("A {subject} over the dunes at dusk", name="kite", history=history)
            kite2 = kite.revise("A {subject} soaring over the dunes at dusk, 35 mm")
            exp = genlab.experiment(
                client, "kites", prompts=[kite, kite2], models=["image-d"],
                vars={"subject": ["paper kite", "box kite", "delta kite", "dragon kite",
                                  "stunt kite"]},
                params={"resolution": "512"}, seeds=[1, 2], quiet=True, progress=False)
            assert (exp.df["status"] == "succeeded").all()
    finally:
        history.close()
    return folder


def _overflow(page: Any) -> int:
    return int(page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_rating_page_asks_a_name_and_ten_pairs_are_rated_by_keys(
    rated_folder: Path, theme: str
) -> None:
    from playwright.sync_api import sync_playwright

    from genlab.history import History

    person = f"ana-{theme}"
    with _app(rated_folder, "--rate", "kites", f"--theme={theme}") as base:
        with sync_playwright() as p:
            browser = chromium(p, BUILD)
            try:
                page = browser.new_page(viewport={"width": 1024, "height": 900},
                                        accept_downloads=True)
                page.set_default_timeout(180_000)  # a busy machine: the kernel is slow
                try:
                    page.goto(f"{base}/")
                    name = page.locator(".genlab-page-name input")
                    name.wait_for(state="visible")
                    text = page.inner_text("body")
                    assert "Rate pairs of results" in text and "Your name" in text
                    assert "import" not in text and "rating_page" not in text
                    start = page.locator(".genlab-page-start")
                    assert start.is_disabled()  # no name, no start
                    page.screenshot(path=str(BUILD / f"rate-{theme}-1024-name.png"))
                    name.fill(person)
                    page.wait_for_function(
                        "() => !document.querySelector('.genlab-page-start').disabled")
                    start.click()
                    left = page.locator(".genlab-page-left")
                    page.wait_for_function(
                        "() => (document.querySelector('.genlab-page-left') || {})"
                        f".innerText?.includes('{PAIRS} pairs left')")
                    assert f"Rating as {person}" in left.inner_text()
                    page.locator(".genlab-rater img").first.wait_for(state="visible")
                    assert page.locator(".genlab-rater img").count() == 2
                    # Nobody is shown who is winning: no leaderboard on the page.
                    assert "kite@" not in page.inner_text("body")
                    assert page.locator(".genlab-interval >> visible=true").count() == 0
                    keys = page.locator(".genlab-keys")
                    keys.click()
                    for i in range(PAIRS):
                        if i == 3:
                            page.screenshot(path=str(BUILD / f"rate-{theme}-1024.png"))
                            assert _overflow(page) <= 0
                            page.set_viewport_size({"width": 1400, "height": 900})
                            page.screenshot(path=str(BUILD / f"rate-{theme}-1400.png"))
                            assert _overflow(page) <= 0
                            page.set_viewport_size({"width": 1024, "height": 900})
                        page.keyboard.press("1" if i % 2 else "2")
                        rest = PAIRS - i - 1
                        if rest:
                            page.wait_for_function(
                                "() => document.querySelector('.genlab-page-left').innerText"
                                f".includes('{rest} pair{'' if rest == 1 else 's'} left')")
                    thanks = page.locator(".genlab-page-thanks")
                    page.wait_for_function(
                        "() => document.querySelector('.genlab-page-thanks')"
                        ".innerText.includes('Thank you')")
                    assert thanks.inner_text().strip() == (
                        f"Thank you, {person}! Your {PAIRS} votes are saved. "
                        "You can close this page.")
                    page.screenshot(path=str(BUILD / f"rate-{theme}-1024-thanks.png"))
                    # Download my votes: a file of this person's votes, served by the app.
                    page.locator(".genlab-page-download").click()
                    link = page.locator(".genlab-page-download-link a[download]")
                    link.wait_for(state="visible")
                    with page.expect_download(timeout=60_000) as info:
                        link.click()
                    assert info.value.suggested_filename == f"votes-{person}.sqlite"
                    downloaded = BUILD / f"votes-{theme}.sqlite"
                    info.value.save_as(downloaded)
                    page.screenshot(path=str(BUILD / f"rate-{theme}-1024-download.png"))
                    # The history itself is never served, only the votes files.
                    for hidden in (".genlab/history.sqlite", "history.sqlite"):
                        assert httpx.get(f"{base}/voila/files/{hidden}",
                                         timeout=30).status_code in (403, 404)
                except BaseException:
                    page.screenshot(path=str(BUILD / f"rate-{theme}-failure.png"),
                                    full_page=True)
                    raise
            finally:
                browser.close()
    history = History(rated_folder / ".genlab" / "history.sqlite")
    try:
        votes = history.ratings(user=person)
    finally:
        history.close()
    assert len(votes) == PAIRS and set(votes["tag"]) == {"kites"}
    assert len({frozenset(p) for p in zip(votes["left_task"], votes["right_task"],
                                           strict=True)}) == PAIRS
    assert set(votes["answer"]) == {"left", "right"}
    team = BUILD / f"team-{theme}.sqlite"
    team.unlink(missing_ok=True)
    for _ in range(2):  # merged twice: nothing doubles
        run = subprocess.run([sys.executable, "-m", "genlab", "history", "migrate",
                              str(BUILD / f"votes-{theme}.sqlite"), str(team)],
                             capture_output=True, text=True, timeout=300, env=_env(BUILD))
        assert run.returncode == 0, run.stderr
        merged = History(team)
        try:
            theirs = merged.ratings(gold=None)
        finally:
            merged.close()
        assert sorted(theirs["rating_id"]) == sorted(votes["rating_id"])


_WIDTHS = """
() => {
  const main = document.querySelector('.genlab-studio');
  const r = main.getBoundingClientRect();
  return {page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          body: document.body.scrollWidth - document.body.clientWidth,
          main: main.scrollWidth - main.clientWidth, width: r.width,
          viewport: document.documentElement.clientWidth};
}
"""


def _studio_with_a_result(page: Any, base: str) -> None:
    """The app's page with one finished video card."""
    page.goto(f"{base}/")
    studio = page.locator(".genlab-studio").first
    studio.wait_for(state="visible")
    studio.locator(".genlab-field-prompt textarea").fill(
        "A paper boat sails down a rainy street")
    box = studio.locator(".genlab-field-duration input[type=number]")
    box.fill("2")
    box.press("Enter")
    page.wait_for_function("() => !document.querySelector('.genlab-submit').disabled")
    studio.get_by_role("button", name="Submit").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.genlab-card video')]"
        ".some(v => v.readyState >= 2 && v.videoWidth > 0)")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_studio_page_shows_no_log_line_no_address_and_no_developer_buttons(
    theme: str
) -> None:
    from playwright.sync_api import sync_playwright

    build = BUILD / f"studio-{theme}"
    build.mkdir(parents=True, exist_ok=True)
    with _app(build, f"--theme={theme}") as base:
        with sync_playwright() as p:
            browser = chromium(p, BUILD)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(180_000)
                try:
                    _studio_with_a_result(page, base)
                    for width in (1400, 1024):
                        page.set_viewport_size({"width": width, "height": 1000})
                        page.evaluate("() => new Promise(r => requestAnimationFrame("
                                      "() => requestAnimationFrame(r)))")  # laid out again
                        text = page.inner_text("body")
                        assert "is not set; using the embedded emulator" not in text
                        assert "GENLAB_" not in text and "emulator at" not in text
                        assert "127.0.0.1" not in text and "http://" not in text
                        for label in ("Download", "Copy as code"):
                            shown = page.get_by_role("button", name=label)
                            assert shown.filter(visible=True).count() == 0, label
                        page.screenshot(path=str(BUILD / f"studio-app-{theme}-{width}.png"))
                        # Uses the width: nothing wider than the page, and the Studio is
                        # most of it, not a notebook column in the middle.
                        widths = page.evaluate(_WIDTHS)
                        assert widths["page"] <= 0 and widths["body"] <= 0, widths
                        assert widths["main"] <= 0, widths
                        assert widths["width"] > 0.6 * widths["viewport"], widths
                except BaseException:
                    page.screenshot(path=str(BUILD / f"studio-{theme}-failure.png"),
                                    full_page=True)
                    raise
            finally:
                browser.close()


def test_the_studio_page_shows_the_developer_buttons_when_asked() -> None:
    from playwright.sync_api import sync_playwright

    build = BUILD / "studio-developer"
    build.mkdir(parents=True, exist_ok=True)
    with _app(build, "--developer") as base:
        with sync_playwright() as p:
            browser = chromium(p, BUILD)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(180_000)
                try:
                    _studio_with_a_result(page, base)
                    page.screenshot(path=str(BUILD / "studio-app-developer-1400.png"))
                    for label in ("Download", "Copy as code"):
                        shown = page.get_by_role("button", name=label)
                        assert shown.filter(visible=True).count() >= 1, label
                except BaseException:
                    page.screenshot(path=str(BUILD / "studio-developer-failure.png"),
                                    full_page=True)
                    raise
            finally:
                browser.close()
