"""The Studio as an app (``genlab app``: Voila on 127.0.0.1), in Chromium, light and dark:
the page shows the Studio and no code, a value out of bounds shows its message, a video
submitted from the page plays, and the page asks nothing of any address but the app's own.

Screenshots go to ``build/browser-app/`` (docs/images/app-light.png and app-dark.png are
copies)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ._lab import ROOT, _free_port, chromium

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-app"

_BACKGROUND_LUMINANCE = """
() => {
  const c = getComputedStyle(document.body).backgroundColor.match(/\\d+(\\.\\d+)?/g)
    .slice(0, 3).map(Number).map((v) => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
"""


@pytest.fixture(scope="module", params=["light", "dark"])
def app(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, Path]]:
    """``genlab app`` in ``theme`` on a free loopback port: its URL, the theme, its folder."""
    theme: str = request.param
    build = BUILD / theme
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
    port = _free_port()
    log = (build / "app.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "genlab", "app", "--no-browser", f"--port={port}",
         f"--theme={theme}"],
        cwd=build, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/voila/static/", timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None:
                    break
                time.sleep(0.3)
        if process.poll() is not None:
            pytest.fail(f"genlab app stopped; see {build / 'app.log'}")
        yield base, theme, build
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_the_app_shows_the_studio_without_code_and_plays_a_video(
    app: tuple[str, str, Path]
) -> None:
    from playwright.sync_api import sync_playwright

    base, theme, build = app
    outside: list[str] = []

    def only_the_app(route: Any) -> None:
        url = route.request.url
        if url.startswith(base + "/") or url == base:
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    with sync_playwright() as p:
        browser = chromium(p, build)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000},
                                    accept_downloads=True)
            page.set_default_timeout(180_000)  # a busy machine: the kernel answers slowly
            page.route("**/*", only_the_app)
            try:
                page.goto(f"{base}/")
                studio = page.locator(".genlab-studio").first
                studio.wait_for(state="visible")

                # A page of widgets: no code cell, no editor, not the notebook's source.
                text = page.inner_text("body")
                assert "genlab.connect()" not in text and "import genlab" not in text
                # (Rendered markdown sits in an input area too: only code cells' are code.)
                for selector in (".jp-CodeCell .jp-InputArea", ".jp-InputArea-editor",
                                 ".cm-editor", ".CodeMirror", ".jp-InputPrompt"):
                    assert page.locator(f"{selector} >> visible=true").count() == 0, selector
                luminance = page.evaluate(_BACKGROUND_LUMINANCE)
                assert luminance < 0.2 if theme == "dark" else luminance > 0.8, luminance

                # A value out of bounds shows its message where it was typed: 40 typed into
                # the duration box goes to 30, the slider with it, and a line says so.
                studio.locator(".genlab-field-prompt textarea").fill(
                    "A paper boat sails down a rainy street")
                box = studio.locator(".genlab-field-duration input[type=number]")
                box.fill("40")
                box.press("Enter")
                message = studio.locator(".genlab-field-duration .genlab-hint")
                message.wait_for(state="visible")
                assert "duration must be from 2 to 30: 40 was set to 30" in message.inner_text()
                page.wait_for_function(
                    "() => document.querySelector("
                    "'.genlab-field-duration input[type=number]').value === '30'")

                # Corrected, submitted from the page: the card's video plays.
                box.fill("2")
                box.press("Enter")
                message.wait_for(state="detached")
                page.wait_for_function(
                    "() => !document.querySelector('.genlab-submit').disabled")
                studio.get_by_role("button", name="Submit").click()
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.genlab-card video')]"
                    ".some(v => v.readyState >= 2 && v.videoWidth > 0)")
                page.locator(".genlab-card video").first.scroll_into_view_if_needed()
                page.screenshot(path=str(BUILD / f"app-{theme}.png"))

                # The card's "original:" link gives the kept video itself (Voilà serves the
                # app's media store, and only media files of it).
                link = studio.locator(".genlab-card a[download]").first
                assert link.get_attribute("href").startswith("/voila/files/genlab-media/")
                with page.expect_download(timeout=60_000) as info:
                    link.click()
                name = info.value.suggested_filename
                kept = build / "genlab-media" / name
                assert name.endswith(".mp4") and kept.is_file(), (name, link.inner_text())
                assert Path(info.value.path()).read_bytes() == kept.read_bytes()
                sidecar = kept.with_suffix(".json")  # kept beside it, not a media file
                assert sidecar.is_file()
                assert httpx.get(f"{base}/voila/files/genlab-media/{sidecar.name}",
                                 timeout=30).status_code == 403
                assert outside == [], outside
            except BaseException:
                page.screenshot(path=str(build / "failure.png"), full_page=True)
                raise
        finally:
            browser.close()
