"""The Studio in a real browser: JupyterLab on a loopback port, Debian's Chromium driven by
Playwright. Run with ``make test-browser`` (it installs Chromium and Playwright first).

The notebook runs top to bottom, the model picker switches forms, a video task is submitted
from the form, and the card must show a ``<video>`` that can play and an image. Screenshots go
to ``build/browser/``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "browser"
CHROMIUM = os.environ.get("GENLAB_CHROMIUM", "/usr/bin/chromium")
NOTEBOOK = "02-studio.ipynb"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    """JupyterLab serving a copy of the notebooks (so autosave never touches the repo)."""
    if BUILD.exists():
        shutil.rmtree(BUILD)
    work = BUILD / "notebooks"
    ignore = shutil.ignore_patterns(".genlab", "genlab-output")
    shutil.copytree(ROOT / "notebooks", work, ignore=ignore)
    # Render every cell (JupyterLab 4 virtualises cells out of view) and ask nothing of news.
    settings = BUILD / "user-settings" / "@jupyterlab"
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}'
    )
    (settings / "apputils-extension").mkdir(parents=True)
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENLAB_")}
    env["JUPYTERLAB_SETTINGS_DIR"] = str(BUILD / "user-settings")
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.root_dir={work}", "--IdentityProvider.token=", "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True", "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly", "--ServerApp.allow_root=True",
    ]
    log = (BUILD / "jupyterlab.log").open("w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/api/status", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail("JupyterLab did not start; see build/browser/jupyterlab.log")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_studio_renders_a_playable_video_and_an_image(lab: str) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test-browser`, which installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-gpu"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        try:
            page.goto(f"{lab}/lab/tree/{NOTEBOOK}")
            page.wait_for_selector(".jp-Notebook", state="visible")
            # Run only once the kernel is connected and idle, or the cells are dropped.
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(state="visible")
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()

            # The Studio appears: a model picker and a Submit button.
            # Wait for the whole notebook: its later cells drive the same Studio from code.
            page.get_by_text("record = client.generate(").wait_for(state="visible")
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(state="visible")
            studio = page.locator(".genlab-studio").first
            studio.wait_for(state="visible")
            studio.scroll_into_view_if_needed()
            page.screenshot(path=str(BUILD / "01-studio.png"), full_page=False)

            # Switching models changes the fields: image-a has a quality control, video-a not.
            kinds = studio.locator(".genlab-kind-picker")
            picker = studio.locator(".genlab-model-picker select")
            kinds.get_by_role("button", name="image", exact=True).click()
            picker.select_option("image-a")
            studio.locator(".genlab-field-quality").wait_for(state="visible")
            page.screenshot(path=str(BUILD / "02-image-a-form.png"))
            kinds.get_by_role("button", name="video", exact=True).click()
            picker.select_option("video-a")
            studio.locator(".genlab-field-quality").wait_for(state="hidden")
            assert studio.locator(".genlab-field-duration").is_visible()
            page.screenshot(path=str(BUILD / "03-video-a-form.png"))

            # Submit a video task from the form and wait for a playable <video>.
            prompt = studio.locator(".genlab-field-prompt textarea")
            prompt.fill("A red fox trots through fresh snow at dawn")
            studio.get_by_role("button", name="Submit").click()
            page.wait_for_function(
                "() => [...document.querySelectorAll('.genlab-card video')]"
                ".some(v => v.readyState >= 2)",
                timeout=180_000,
            )
            # The notebook's own cells submitted an image task too.
            page.wait_for_selector(".genlab-card img[src^='data:image/']", timeout=180_000)
            page.locator(".genlab-card video").first.scroll_into_view_if_needed()
            page.screenshot(path=str(BUILD / "04-result.png"))
            video_state = page.evaluate(
                "() => { const v = document.querySelector('.genlab-card video');"
                " return {ready: v.readyState, width: v.videoWidth, height: v.videoHeight}; }"
            )
            assert video_state["ready"] >= 2 and video_state["width"] > 0
        except BaseException:
            page.screenshot(path=str(BUILD / "failure.png"), full_page=True)
            raise
        finally:
            browser.close()
