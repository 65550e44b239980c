"""The rater at 1024 x 900 with the side panel open (JupyterLab's file browser, Notebook 7's
table of contents), in JupyterLab and Notebook 7: the two sides of a pair sit side by side,
and both and every answer button are in view without scrolling, for square images and for
16:9 videos. After a kernel restart the rater says it is a saved view, hides its keyboard bar
and shows no broken-link icons. Run with ``make test-browser``.

Screenshots go to ``build/browser-rater-fits/<front end>/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._lab import FRONTENDS, ROOT, Frontend, chromium, jupyterlab, notebook_text, notebook_url

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-rater-fits"
NOTEBOOK = "rater-fits.ipynb"
WIDTH, HEIGHT = 1024, 900

_SETUP = """\
from pathlib import Path
import pandas as pd
from genlab.emulator import samples
from genlab.history import History
from genlab.widgets import rate

folder = Path("genlab-output/rater-fits")
folder.mkdir(parents=True, exist_ok=True)

def finished(kind, width, height):
    rows = []
    for model in ("a", "b"):
        path = folder / f"{kind}-{model}.{'mp4' if kind == 'video' else 'png'}"
        data = (samples.video(width, height, 1.0) if kind == "video"
                else samples.image(width, height, f"model {model}"))
        path.write_bytes(data)
        rows.append({"task_id": f"{kind}-{model}", "model": model, "status": "succeeded",
                     "prompt": "a paper kite over the dunes at dusk", "paths": [str(path)]})
    return rate(pd.DataFrame(rows), history=History(folder / f"{kind}-votes.sqlite"))
"""

# The area a person sees: the window, less what the notebook's scrolling panel hides.
_BOXES = """
(root) => {
  let view = {top: 0, left: 0, bottom: innerHeight, right: innerWidth};
  for (let e = root.parentElement; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (/(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight) {
      const r = e.getBoundingClientRect();
      view = {top: Math.max(view.top, r.top), left: Math.max(view.left, r.left),
              bottom: Math.min(view.bottom, r.bottom), right: Math.min(view.right, r.right)};
      break;
    }
  }
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return {top: r.top, left: r.left, bottom: r.bottom, right: r.right, width: r.width,
            height: r.height};
  };
  const parts = {};
  for (const side of ['left', 'right']) {
    parts[side] = box(root.querySelector('.genlab-side-' + side));
    parts[side + ' media'] = box(root.querySelector('.genlab-side-' + side + ' :is(img, video)'));
  }
  for (const b of ['left', 'tie', 'bad', 'right', 'skip', 'undo']) {
    parts['button ' + b] = box(root.querySelector('.genlab-rate-' + b));
  }
  return {view, parts};
}
"""

_LOADED = """
(root) => [...root.querySelectorAll('.genlab-side img, .genlab-side video')].every(
  (m) => m.tagName === 'IMG' ? m.complete && m.naturalWidth > 0 : m.videoWidth > 0)
"""

_OFFLINE = """
(root) => ({
  disconnected: root.classList.contains('jupyter-widgets-disconnected'),
  notice: getComputedStyle(root.querySelector('.genlab-offline')).display,
  keys: getComputedStyle(root.querySelector('.genlab-keys')).display,
  brokenLinks: [root, ...root.querySelectorAll('.jupyter-widgets-disconnected')].filter(
    (e) => !['none', ''].includes(getComputedStyle(e, '::before').content)
      && getComputedStyle(e, '::before').display !== 'none').length,
})
"""


@pytest.fixture(scope="module", params=FRONTENDS)
def lab(request: pytest.FixtureRequest) -> Iterator[tuple[str, Frontend]]:
    """JupyterLab or Notebook 7 serving a notebook with a rater of images and one of videos."""
    frontend: Frontend = request.param
    build = BUILD / frontend
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))  # the kernel imports this checkout
    try:
        with jupyterlab(build, frontend) as base:
            (build / "notebooks" / NOTEBOOK).write_text(notebook_text(
                _SETUP, 'finished("image", 1024, 1024)', 'finished("video", 1280, 720)'))
            yield base, frontend
    finally:
        monkeypatch.undo()


def _open_side_panel(page: Any, frontend: Frontend) -> float:
    """Open the left side panel (JupyterLab's file browser, Notebook 7's table of contents);
    its width in pixels."""
    if frontend == "lab":
        panel = page.locator(".jp-FileBrowser").first
        if not panel.is_visible():
            page.locator(".jp-SideBar.jp-mod-left [data-id='filebrowser']").click()
    else:  # Notebook 7's left panel holds the table of contents
        panel = page.locator("#jp-left-stack")
        page.get_by_role("menuitem", name="View", exact=True).click()
        page.get_by_text("Table of Contents", exact=True).click()
    panel.wait_for(state="visible")
    page.wait_for_timeout(500)  # the notebook narrowed beside it
    return float(panel.evaluate("e => e.getBoundingClientRect().width"))


def _run_all(page: Any, base: str, frontend: Frontend) -> None:
    page.goto(notebook_url(base, NOTEBOOK, frontend))
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true")
    try:  # a kernel dialog, when there is one, comes a moment after the cells
        page.locator(".jp-Dialog").wait_for(state="visible", timeout=5_000)
    except Exception:
        pass
    for attempt in range(4):  # a run sent before the kernel is ready is dropped: again
        dialog = page.locator(".jp-Dialog")
        if dialog.count() and dialog.first.is_visible():
            dialog.get_by_role("button", name="Select", exact=True).click()
            dialog.wait_for(state="detached")
        page.locator(".jp-CodeCell .cm-content").first.click()
        page.keyboard.press("Escape")
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.locator(".genlab-rater").nth(1).locator(".genlab-side video").first.wait_for(
                state="attached", timeout=90_000)
            return
        except Exception:
            if attempt == 3:
                raise


def _restart(page: Any) -> None:
    page.get_by_role("menuitem", name="Kernel", exact=True).click()
    page.get_by_text("Restart Kernel…", exact=True).first.click()
    page.locator(".jp-Dialog .jp-mod-accept").click()


def test_a_pair_and_its_answers_fit_side_by_side_and_a_dead_rater_says_so(
    lab: tuple[str, Frontend],
) -> None:
    from playwright.sync_api import sync_playwright

    base, frontend = lab
    build = BUILD / frontend
    with sync_playwright() as p:
        browser = chromium(p, build)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.set_default_timeout(120_000)  # a busy machine: the kernel answers slowly
            try:
                _run_all(page, base, frontend)
                panel = _open_side_panel(page, frontend)
                assert panel >= 150, f"the side panel is not open ({panel:.0f} px)"
                for kind, index in (("images", 0), ("videos", 1)):
                    rater = page.locator(".genlab-rater").nth(index)
                    rater.evaluate("e => e.scrollIntoView({block: 'start'})")
                    page.wait_for_function(_LOADED, arg=rater.element_handle())
                    page.wait_for_timeout(300)  # the layout settled once the media sized
                    rater.evaluate("e => e.scrollIntoView({block: 'start'})")
                    shown = rater.evaluate(_BOXES)
                    view, parts = shown["view"], shown["parts"]
                    for name, b in parts.items():
                        assert b["width"] > 0 and b["height"] > 0, (kind, name, shown)
                        assert (b["top"] >= view["top"] - 1 and b["bottom"] <= view["bottom"] + 1
                                and b["left"] >= view["left"] - 1
                                and b["right"] <= view["right"] + 1), (kind, name, shown)
                    left, right = parts["left"], parts["right"]
                    assert left["right"] <= right["left"], (kind, shown)  # side by side
                    assert abs(left["top"] - right["top"]) < 2, (kind, shown)
                    assert parts["left media"]["width"] >= 200, (kind, shown)  # not tiny
                    page.screenshot(path=str(build / f"rater-{kind}-{frontend}-{WIDTH}.png"))

                _restart(page)
                rater = page.locator(".genlab-rater").first
                rater.locator(".genlab-offline").wait_for(state="visible", timeout=60_000)
                notice = rater.locator(".genlab-offline").inner_text()
                assert "Saved view: the kernel that ran this rater has stopped" in notice
                for index in (0, 1):
                    state = page.locator(".genlab-rater").nth(index).evaluate(_OFFLINE)
                    assert state == {"disconnected": True, "notice": "block", "keys": "none",
                                     "brokenLinks": 0}, (index, state)
                rater.evaluate("e => e.scrollIntoView({block: 'start'})")
                page.screenshot(path=str(build / f"rater-restarted-{frontend}.png"))
            except BaseException:
                page.screenshot(path=str(build / "failure.png"), full_page=True)
                raise
        finally:
            browser.close()
