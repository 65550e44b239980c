"""An experiment's grid in JupyterLab, in light and dark, at 1024 px with the file browser
open and at 1400 px: the word diff above the columns reads (every inserted and removed word
is on screen, highlighted, its text at a contrast of at least 3:1 against its highlight, and
the highlight differs from the header behind it), nothing scrolls sideways (a grid too wide
for the cell, five versions beside the file browser, wraps its columns under each other, its
last version in view), and a row's videos, posters until played, play and pause together
while the other row's stay still.
Run with ``make test-browser``.

Screenshots go to ``build/browser-experiment-grid/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._lab import ROOT, THEMES, chromium, jupyterlab, notebook_text, notebook_url, set_theme

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-experiment-grid"
NOTEBOOK = "experiment-grid.ipynb"
HEIGHT = 900

# Two versions, a video model and an image model, two variable sets, one seed; 5 s videos
# (the emulator's are as long as asked), so a row's videos are still playing when looked at.
_EXPERIMENT = """\
import genlab

client = genlab.connect(time_scale=0.02)
kite = genlab.prompt("A {subject} over {place} at dusk", name="kite")
kite2 = kite.revise("A {subject} soaring over {place} in fading light, 35 mm grain")
exp = genlab.experiment(
    client, "grid-in-the-browser", prompts=[kite, kite2], models=["video-a", "image-b"],
    vars={"subject": ["paper kite", "dragon kite"], "place": "dunes"},
    params={"duration": 5, "resolution": "480P"}, seeds=[1], max_credits=50_000,
)
exp
"""

# Five versions of an image prompt: more columns than fit beside the file browser at 1024 px.
_WIDE = """\
takes = [genlab.prompt(f"A paper kite over the dunes, take {n}", name="takes")
         for n in range(1, 6)]
wide = genlab.experiment(client, "grid-five-versions", prompts=takes, models=["image-b"],
                         params={"resolution": "512"}, seeds=[1], max_credits=50_000)
wide
"""

# Colours are read by painting them: a canvas turns any CSS colour (rgb(), color-mix(),
# color(srgb ...)) into sRGB bytes. A background is what shows through every ancestor's.
_DIFF = """
(root) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = (css) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#000';
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;  // not premultiplied
    return [r, g, b, a / 255];
  };
  const over = (top, under) => top.slice(0, 3).map(
      (c, i) => c * top[3] + under[i] * (1 - top[3]));
  const behind = (el) => {  // el's own background over everything behind it
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.push(e);
    let colour = [255, 255, 255];
    for (const e of chain.reverse()) colour = over(rgba(getComputedStyle(e).backgroundColor),
                                                   colour);
    return colour;
  };
  const luminance = (c) => {
    const [r, g, b] = c.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const found = [];
  for (const el of root.querySelectorAll(
      '.genlab-exp-heads .genlab-diff ins, .genlab-exp-heads .genlab-diff del,'
      + ' .genlab-exp-heads .genlab-diff-label')) {
    const r = el.getBoundingClientRect();
    const own = rgba(getComputedStyle(el).backgroundColor);
    const back = behind(el);
    const around = behind(el.parentElement);
    found.push({
      tag: el.tagName.toLowerCase(), text: el.textContent, width: r.width, height: r.height,
      visible: getComputedStyle(el).visibility === 'visible'
        && parseFloat(getComputedStyle(el).opacity) > 0.9,
      highlight: own[3],
      text_contrast: ratio(over(rgba(getComputedStyle(el).color), back), back),
      highlight_contrast: ratio(back, around),
      decoration: getComputedStyle(el).textDecorationLine,
    });
  }
  return found;
}
"""

_FIT = """
(root) => {
  const page = document.querySelector('.jp-WindowedPanel-outer, .jp-NotebookPanel-notebook');
  const output = root.closest('.jp-OutputArea-output');
  const box = output.getBoundingClientRect();
  const first = root.querySelector('.genlab-row .genlab-exp-vars').getBoundingClientRect();
  const heads = [...root.querySelectorAll('.genlab-exp-heads > div')].map((h) => {
    const r = h.getBoundingClientRect();
    return {text: h.innerText, left: r.left, right: r.right, top: r.top};
  });
  return {
    page: [page.scrollWidth, page.clientWidth],
    output: [output.scrollWidth, output.clientWidth],
    box_left: box.left, box_right: box.right,
    first_row_head: [first.left, first.right],
    heads: heads,
    window: innerWidth,
  };
}
"""

# Each row's videos: paused or not, and where they are.
_VIDEOS = """
(root) => [...root.querySelectorAll('.genlab-row')].map(
  (row) => [...row.querySelectorAll('video')].map(
    (v) => ({paused: v.paused, time: v.currentTime, ready: v.readyState})))
"""


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    """JupyterLab serving a notebook whose one cell runs a small experiment and shows it."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))  # the kernel imports this checkout
    try:
        # No autosave: each theme's page opens the notebook without the last one's outputs.
        with jupyterlab(BUILD, autosave=3600) as base:
            (BUILD / "notebooks" / NOTEBOOK).write_text(notebook_text(_EXPERIMENT, _WIDE))
            yield base
    finally:
        monkeypatch.undo()


def _run(page: Any, base: str) -> Any:
    """Open the notebook, run its cells, and return the first grid once its videos can play
    and the second's pictures are there. A run sent before the kernel is ready may be
    dropped: sent again then."""
    page.goto(notebook_url(base, NOTEBOOK))
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true")
    try:  # a kernel dialog, when there is one, comes a moment after the cells
        page.locator(".jp-Dialog").wait_for(state="visible", timeout=5_000)
    except Exception:
        pass
    grid = page.locator(".genlab-exp").first
    for attempt in range(4):
        dialog = page.locator(".jp-Dialog")
        if dialog.count() and dialog.first.is_visible():
            dialog.get_by_role("button", name="Select", exact=True).click()
            dialog.wait_for(state="detached")
        page.locator(".jp-CodeCell .cm-content").first.click()
        page.keyboard.press("Escape")
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            grid.locator(".genlab-row video").nth(3).wait_for(state="attached",
                                                              timeout=180_000)
            page.locator(".genlab-exp").nth(1).locator(".genlab-row img").nth(4).wait_for(
                state="attached", timeout=180_000)
            break
        except Exception:
            if attempt == 3:
                raise
    # Posters until played: nothing of a video loads before (preload="none").
    assert grid.evaluate("(g) => [...g.querySelectorAll('.genlab-row video')].every("
                         "(v) => v.preload === 'none' && v.poster.startsWith('data:image/'))")
    page.wait_for_function(
        "(g) => [...g.querySelectorAll('.genlab-row video')].every("
        "(v) => v.readyState === 0)", arg=grid.element_handle())
    return grid


def _file_browser(page: Any) -> float:
    """Open JupyterLab's file browser; its width in pixels."""
    panel = page.locator(".jp-FileBrowser").first
    if not panel.is_visible():
        page.locator(".jp-SideBar.jp-mod-left [data-id='filebrowser']").click()
    panel.wait_for(state="visible")
    page.wait_for_timeout(300)  # the notebook narrowed beside it
    return float(panel.evaluate("e => e.getBoundingClientRect().width"))


def _check_diff(grid: Any, where: str) -> None:
    found = grid.evaluate(_DIFF)
    tags = {f["tag"] for f in found}
    assert {"ins", "del", "span"} <= tags, (where, found)  # additions, removals, the label
    words = " ".join(f["text"] for f in found if f["tag"] == "ins")
    assert "soaring" in words and "35 mm grain" in words, (where, found)
    assert " ".join(f["text"] for f in found if f["tag"] == "del") == "at dusk", (where, found)
    for f in found:
        assert f["visible"] and f["width"] > 0 and f["height"] > 0, (where, f)
        assert f["text_contrast"] >= 3, (where, f)
        if f["tag"] in ("ins", "del"):
            assert f["highlight"] > 0, (where, f)  # a highlight, not a transparent one
            assert f["highlight_contrast"] > 1.05, (where, f)  # it shows against the header
    assert all(f["decoration"] == "line-through" for f in found if f["tag"] == "del"), found


def _check_fit(grid: Any, where: str) -> dict[str, Any]:
    fit = grid.evaluate(_FIT)
    page_width, page_room = fit["page"]
    assert page_width <= page_room + 1, (where, fit)  # the notebook never scrolls sideways
    out_width, out_room = fit["output"]
    assert out_width <= out_room + 1, (where, fit)  # nor does the cell's output
    assert fit["box_right"] <= fit["window"] + 1, (where, fit)
    left, right = fit["first_row_head"]
    assert fit["box_left"] - 1 <= left and right <= fit["box_right"] + 1, (where, fit)
    for head in fit["heads"]:  # every column's header in the output's box
        assert fit["box_left"] - 1 <= head["left"], (where, head, fit)
        assert head["right"] <= fit["box_right"] + 1, (where, head, fit)
    return fit


def _check_wide_grid_wraps(page: Any, wide: Any, where: str) -> None:
    """Five versions beside the file browser at 1024 px: the columns wrap under each other
    (nothing scrolls sideways), the last version in view below the first."""
    fit = _check_fit(wide, where)
    heads = fit["heads"]
    assert "takes@5" in heads[-1]["text"], (where, heads)
    assert heads[-1]["top"] > heads[0]["top"] + 1, (where, heads)  # wrapped to a new line


def _videos(grid: Any) -> list[list[dict[str, Any]]]:
    shown: list[list[dict[str, Any]]] = grid.evaluate(_VIDEOS)
    return shown


def _press_play_button(page: Any, video: Any) -> None:
    """Click Chromium's own play/pause button of ``video``: the first of its controls' row,
    bottom left (a click on the picture itself does not play it in headless Chromium)."""
    box = video.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # controls show
    page.mouse.click(box["x"] + 25, box["y"] + box["height"] - 48)


def _check_rows_play_together(page: Any, grid: Any, where: str) -> None:
    before = _videos(grid)
    assert [len(row) for row in before] == [2, 2], (where, before)  # one per version
    assert all(v["paused"] for row in before for v in row), (where, before)
    first = grid.locator(".genlab-row").nth(0).locator("video").first
    first.scroll_into_view_if_needed()
    _press_play_button(page, first)
    page.wait_for_function(
        "(g) => [...g.querySelectorAll('.genlab-row')[0].querySelectorAll('video')]"
        ".every((v) => !v.paused && v.currentTime > 0)", arg=grid.element_handle())
    playing = _videos(grid)
    page.wait_for_function(  # every video of the row moves on
        "([g, t]) => [...g.querySelectorAll('.genlab-row')[0]"
        ".querySelectorAll('video')].every((v, i) => v.currentTime > t[i])",
        arg=[grid.element_handle(), [v["time"] for v in playing[0]]])
    shown = _videos(grid)
    assert all(not v["paused"] for v in shown[0]), (where, shown)
    assert all(v["paused"] and v["time"] == 0 for v in shown[1]), (where, shown)  # still
    _press_play_button(page, first)  # the same button, now pause, pauses the row
    page.wait_for_function(
        "(g) => [...g.querySelectorAll('.genlab-row video')].every((v) => v.paused)",
        arg=grid.element_handle())
    stopped = _videos(grid)
    assert all(v["paused"] and v["time"] > 0 for v in stopped[0]), (where, stopped)
    assert all(v["time"] == 0 for v in stopped[1]), (where, stopped)
    grid.evaluate("(g) => g.querySelectorAll('video').forEach((v) => { v.currentTime = 0; })")


@pytest.mark.parametrize("theme", THEMES)
def test_the_grid_reads_fits_and_plays_a_row_together(lab: str, theme: str) -> None:
    from playwright.sync_api import sync_playwright

    shade = "dark" if "Dark" in theme else "light"
    set_theme(BUILD, theme)
    with sync_playwright() as p:
        browser = chromium(p, BUILD)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": HEIGHT})
            page.set_default_timeout(120_000)  # a busy machine: the kernel answers slowly
            try:
                grid = _run(page, base=lab)
                for width in (1024, 1400):
                    where = f"{shade} {width}"
                    page.set_viewport_size({"width": width, "height": HEIGHT})
                    panel = _file_browser(page)
                    assert panel >= 150, f"the file browser is not open ({panel:.0f} px)"
                    grid.evaluate("e => e.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(300)  # the layout settled at the new width
                    _check_diff(grid, where)
                    _check_fit(grid, where)
                    _check_rows_play_together(page, grid, where)
                    wide = page.locator(".genlab-exp").nth(1)
                    wide.evaluate("e => e.scrollIntoView({block: 'start'})")
                    if width == 1024:
                        _check_wide_grid_wraps(page, wide, where)
                    else:
                        _check_fit(wide, where)
                        page.mouse.move(width - 5, HEIGHT - 5)
                        page.screenshot(path=str(BUILD / f"five-versions-{shade}-{width}.png"))
                    grid.evaluate("e => e.scrollIntoView({block: 'start'})")
                    page.mouse.move(width - 5, HEIGHT - 5)  # no row lit up by the pointer
                    page.screenshot(path=str(BUILD / f"experiment-grid-{shade}-{width}.png"))
            except BaseException:
                page.screenshot(path=str(BUILD / f"failure-{shade}.png"), full_page=True)
                raise
        finally:
            browser.close()
