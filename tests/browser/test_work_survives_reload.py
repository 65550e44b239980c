"""Work survives a reload: a notebook with the Studio (a finished card with its video) and a
comparison with its progress bar is run, saved, and opened again after its kernel was shut
down, in JupyterLab and in Notebook 7, with the settings ``make lab`` and Binder install.

What a person must see then: the Studio and its card with the video (restored from the widget
state saved in the notebook), the comparison's progress as a finished line, its gallery, and
nowhere "Error displaying widget: model not found". Screenshots in light and dark at 1024 and
1400 px go to ``build/browser-persist/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ._lab import (
    CHROMIUM,
    FRONTENDS,
    ROOT,
    THEMES,
    Frontend,
    chromium,
    jupyterlab,
    kernels_idle,
    notebook_text,
    notebook_url,
    set_theme,
    wait_until,
)

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-persist"
NOTEBOOK = "work-survives.ipynb"
WIDTHS = (1024, 1400)
STATE = "application/vnd.jupyter.widget-state+json"


def _notebook() -> str:
    cells = [
        "import genlab\nclient = genlab.connect()\nstudio = genlab.studio(client)\nstudio",
        'studio.set(model="video-a", prompt="A red fox trots through fresh snow at dawn",\n'
        '           duration=2, resolution="480P")\n'
        "card = studio.submit()\ncard.wait_done(240)",
        'kites = genlab.compare(client, ["a paper kite over a long beach"],\n'
        '                       ["image-b", "image-d"])',
        "kites.gallery()",
    ]
    return notebook_text(*cells)


@pytest.fixture(scope="module", params=FRONTENDS)
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Frontend]]:
    frontend: Frontend = request.param
    build = BUILD / frontend
    with jupyterlab(build, frontend) as base:
        set_theme(build, THEMES[0])
        (build / "notebooks" / NOTEBOOK).write_text(_notebook())
        yield base, frontend


def _run_all(page: Any, base: str) -> None:
    """Run every cell once the kernel is idle (a run sent before it is ready is dropped)."""
    for attempt in range(3):
        wait_until(lambda: kernels_idle(base), "an idle kernel", 120)
        # The page may still be connecting to it ("Kernel Initializing" in Notebook 7).
        page.get_by_text("Kernel Initializing").wait_for(state="hidden")
        try:
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click(timeout=20_000)
            page.locator(".genlab-studio").first.wait_for(state="visible", timeout=120_000)
            return
        except Exception:
            page.keyboard.press("Escape")  # a menu left open
            if attempt == 2:
                raise


def _shut_down_kernels(base: str) -> None:
    for session in httpx.get(f"{base}/api/sessions", timeout=10).json():
        httpx.delete(f"{base}/api/sessions/{session['id']}", timeout=30)
    wait_until(lambda: httpx.get(f"{base}/api/kernels", timeout=10).json() == [],
          "the kernels to shut down", 60)


def _saved(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def _saved_widget_state(path: Path) -> bool:
    return STATE in _saved(path).get("metadata", {}).get("widgets", {})


_SHOWN = """
() => {
  const video = document.querySelector('.genlab-studio .genlab-card video');
  const text = document.body.innerText;
  return {
    studio: document.querySelectorAll('.genlab-studio').length,
    video: video ? video.getAttribute('src').slice(0, 15) : null,
    bars: [...document.querySelectorAll('.widget-progress')]  // the cards' own are in the Studio
      .filter(e => !e.closest('.genlab-studio')).length,
    done: [...document.querySelectorAll('.genlab-progress-done')].map(e => e.innerText),
    galleryImages: document.querySelectorAll('.genlab-gallery img').length,
    notFound: text.includes('model not found'),
    errors: text.includes('Error displaying widget'),
    loading: text.includes('Loading widget'),
    offlineNote: [...document.querySelectorAll('.genlab-offline')]
      .filter(e => e.offsetParent !== null).map(e => e.innerText),
    disconnected: document.querySelectorAll('.genlab-studio.jupyter-widgets-disconnected').length,
    brokenLinks: [...document.querySelectorAll('.genlab-studio .jupyter-widgets-disconnected')]
      .filter(e => !['none', 'normal', ''].includes(getComputedStyle(e, '::before').content))
      .length,
  };
}
"""


def test_the_studio_its_video_and_the_progress_survive_a_reload(
    server: tuple[str, Frontend],
) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test-browser`, which installs it")
    from playwright.sync_api import sync_playwright

    base, frontend = server
    build = BUILD / frontend
    saved = build / "notebooks" / NOTEBOOK
    with sync_playwright() as p:
        browser = chromium(p, build)
        page = browser.new_page(viewport={"width": WIDTHS[-1], "height": 1000})
        page.set_default_timeout(120_000)  # a busy machine: the menus answer slowly
        try:
            page.goto(notebook_url(base, NOTEBOOK, frontend))
            page.wait_for_selector(".jp-Notebook >> visible=true")
            _run_all(page, base)
            # The card's video plays, and the comparison's bar has become a line.
            page.wait_for_function(
                "() => [...document.querySelectorAll('.genlab-card video')]"
                ".some(v => v.readyState >= 2)", timeout=240_000)
            page.locator(".genlab-progress-done").first.wait_for(timeout=240_000)
            page.locator(".genlab-gallery img").first.wait_for(timeout=240_000)
            wait_until(lambda: kernels_idle(base), "the notebook to finish")
            before = page.evaluate(_SHOWN)
            assert before["bars"] == 0, before  # no live bar is left in the outputs
            assert before["offlineNote"] == [], before  # connected: no word about it
            page.screenshot(path=str(BUILD / f"{frontend}-ran.png"), full_page=True)

            # Saved: the file carries the widgets' state (the setting make lab installs).
            page.keyboard.press("Control+s")
            wait_until(lambda: _saved_widget_state(saved),
                       "the notebook saved with widget state", 60)
            _shut_down_kernels(base)

            for theme in THEMES:
                set_theme(build, theme)
                tag = "dark" if "Dark" in theme else "light"
                _shut_down_kernels(base)  # each reopening starts a fresh kernel
                page.set_viewport_size({"width": WIDTHS[0], "height": 1000})
                page.reload()
                page.wait_for_selector(".jp-Notebook >> visible=true")
                # The theme is applied once its settings load: wait for it.
                page.wait_for_function("light => document.body.dataset.jpThemeLight === light",
                                       arg="false" if "Dark" in theme else "true")
                page.wait_for_selector(".genlab-studio .genlab-card video", state="attached",
                                       timeout=120_000)
                page.locator(".genlab-progress-done").first.wait_for(state="attached")
                shown = page.evaluate(_SHOWN)
                assert shown["studio"] == 1, shown
                assert shown["video"] == "data:video/mp4;", shown
                assert not shown["notFound"] and not shown["errors"], shown
                assert not shown["loading"], shown
                assert shown["bars"] == 0, shown
                # One line says the Studio is a saved view, instead of a broken-link icon on
                # each of its controls.
                assert len(shown["offlineNote"]) == 1, shown
                assert shown["offlineNote"][0].startswith("⚠ Saved view: the kernel"), shown
                assert shown["disconnected"] == 1 and shown["brokenLinks"] == 0, shown
                assert len(shown["done"]) == 1, shown
                assert shown["done"][0].startswith("compare: 2 of 2 runs · 2 succeeded · "), shown
                assert shown["galleryImages"] == 2, shown
                # The card reads as it did: its prompt and its status.
                card = page.locator(".genlab-studio .genlab-card").first
                assert "A red fox trots through fresh snow at dawn" in card.inner_text()
                assert "succeeded" in card.inner_text()
                # Its video plays from the notebook alone.
                page.wait_for_function(
                    "() => document.querySelector('.genlab-card video').readyState >= 2")
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 1000})
                    page.locator(".genlab-offline").scroll_into_view_if_needed()
                    page.wait_for_timeout(300)  # the layout settles after the resize
                    page.screenshot(
                        path=str(BUILD / f"{frontend}-reopened-studio-{width}-{tag}.png"))
                    card.scroll_into_view_if_needed()
                    page.wait_for_timeout(300)  # the layout settles after the resize
                    page.screenshot(
                        path=str(BUILD / f"{frontend}-reopened-card-{width}-{tag}.png"))
                    page.locator(".genlab-progress-done").first.scroll_into_view_if_needed()
                    page.screenshot(
                        path=str(BUILD / f"{frontend}-reopened-compare-{width}-{tag}.png"))
        except BaseException:
            page.screenshot(path=str(BUILD / f"{frontend}-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
