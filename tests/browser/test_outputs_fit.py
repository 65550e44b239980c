"""An experiment's outputs in JupyterLab at 1024 px with the file browser open (about 590 px
for an output), in light and dark: the grid, ``exp.show(columns="model")``,
``exp.compare(...)``, ``exp.leaderboard()`` and the rater with its board never scroll
sideways (each output area's ``scrollWidth`` is at most its ``clientWidth``), and what each
says is on screen: the compare table's highlighted change and scores, the leaderboard's
columns and its whole footnote. Run with ``make test-browser``.

Screenshots of each output go to ``build/browser-outputs-fit/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._lab import ROOT, THEMES, chromium, jupyterlab, notebook_text, notebook_url, set_theme

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-outputs-fit"
NOTEBOOK = "outputs-fit.ipynb"
WIDTH, HEIGHT = 1024, 900

_EXPERIMENT = """\
import genlab
from genlab.history import RatingEntry

client = genlab.connect(time_scale=0.02)
kite = genlab.prompt("A {subject} over {place} at dusk", name="kite")
kite2 = kite.revise("A {subject} soaring over {place} in fading light, 35 mm grain")
exp = genlab.experiment(
    client, "outputs-fit", prompts=[kite, kite2], models=["video-a", "image-b"],
    vars={"subject": ["paper kite", "dragon kite"], "place": "dunes"},
    params={"duration": 2, "resolution": "480P"}, seeds=[1, 2], scorers=["sharpness"],
    max_credits=50_000, quiet=True,
)
df = exp.df
for i, (new, old) in enumerate(zip(df[df["prompt_version"] == 2]["task_id"],
                                   df[df["prompt_version"] == 1]["task_id"])):
    client.history.add_rating(RatingEntry(new, old, "left" if i % 3 else "tie",
                                          left_model="m", right_model="m",
                                          prompt_address="p"))
exp
"""
_CELLS = [
    _EXPERIMENT,
    'exp.show(columns="model")',
    'exp.compare("kite@1", "kite@2")',
    "exp.leaderboard(seed=0)",
    "genlab.rate(exp)",
]
_NAMES = ["grid", "by-model", "compare", "leaderboard", "rater"]

_FIT = """
(area) => {
  const out = area.querySelector('.jp-OutputArea-output') || area;
  const wide = [...area.querySelectorAll('*')].filter(
      (e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible'
          && e.clientWidth > 0).map((e) => e.className);
  return {area: [area.scrollWidth, area.clientWidth], out: [out.scrollWidth, out.clientWidth],
          right: out.getBoundingClientRect().right, inner_scrollers: wide, window: innerWidth};
}
"""


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))  # the kernel imports this checkout
    try:
        with jupyterlab(BUILD, autosave=3600) as base:
            (BUILD / "notebooks" / NOTEBOOK).write_text(notebook_text(*_CELLS))
            yield base
    finally:
        monkeypatch.undo()


def _run_all(page: Any, base: str) -> None:
    page.goto(notebook_url(base, NOTEBOOK))
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true")
    try:  # a kernel dialog, when there is one, comes a moment after the cells
        page.locator(".jp-Dialog").wait_for(state="visible", timeout=5_000)
    except Exception:
        pass
    rater = page.locator(".jp-Cell").nth(4).locator(".genlab-board table")
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
            rater.wait_for(state="attached", timeout=240_000)
            break
        except Exception:
            if attempt == 3:
                raise


def _file_browser(page: Any) -> float:
    panel = page.locator(".jp-FileBrowser").first
    if not panel.is_visible():
        page.locator(".jp-SideBar.jp-mod-left [data-id='filebrowser']").click()
    panel.wait_for(state="visible")
    page.wait_for_timeout(300)  # the notebook narrowed beside it
    return float(panel.evaluate("e => e.getBoundingClientRect().width"))


def _check_what_reads(page: Any, shade: str) -> None:
    cells = page.locator(".jp-Cell")
    compare = cells.nth(2).locator(".genlab-compare")
    assert compare.locator("ins").first.inner_text().strip() == "soaring", shade
    assert "{+" not in compare.inner_text()
    # Its own style wins over the notebook's right-aligned tables: text reads from the left.
    assert compare.locator("td").first.evaluate("e => getComputedStyle(e).textAlign") \
        == "left", shade
    scores = compare.locator("td").filter(has_text="sharpness").first
    box, room = scores.bounding_box(), compare.bounding_box()
    assert box["x"] + box["width"] <= room["x"] + room["width"] + 1, (shade, box, room)
    board = cells.nth(3).locator(".genlab-board")
    heads = board.locator("th").all_inner_texts()
    assert any("votes" == h.strip() for h in heads) and any("win rate" in h for h in heads)
    assert any("won / lost / tie" in " ".join(h.split()) for h in heads), heads
    for th in board.locator("th").all():
        b = th.bounding_box()
        assert b["x"] + b["width"] <= room["x"] + room["width"] + 1, (shade, th.inner_text())
    note = board.locator(".genlab-board-note")
    assert note.inner_text().rstrip().endswith("share a rank."), note.inner_text()
    assert note.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), shade


@pytest.mark.parametrize("theme", THEMES)
def test_every_output_of_an_experiment_fits_beside_the_file_browser(lab: str,
                                                                     theme: str) -> None:
    from playwright.sync_api import sync_playwright

    shade = "dark" if "Dark" in theme else "light"
    set_theme(BUILD, theme)
    with sync_playwright() as p:
        browser = chromium(p, BUILD)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.set_default_timeout(120_000)  # a busy machine: the kernel answers slowly
            try:
                _run_all(page, lab)
                panel = _file_browser(page)
                assert panel >= 150, f"the file browser is not open ({panel:.0f} px)"
                page.wait_for_timeout(500)  # the rater's media laid out
                for i, name in enumerate(_NAMES):
                    area = page.locator(".jp-Cell").nth(i).locator(".jp-OutputArea").first
                    area.scroll_into_view_if_needed()
                    fit = area.evaluate(_FIT)
                    where = f"{shade} {name}"
                    assert fit["out"][1] <= 620, (where, fit)  # the side panel is open
                    assert fit["area"][0] <= fit["area"][1] + 1, (where, fit)
                    assert fit["out"][0] <= fit["out"][1] + 1, (where, fit)
                    assert fit["right"] <= fit["window"] + 1, (where, fit)
                    area.screenshot(path=str(BUILD / f"{name}-{shade}.png"))
                _check_what_reads(page, shade)
            except BaseException:
                page.screenshot(path=str(BUILD / f"failure-{shade}.png"), full_page=True)
                raise
        finally:
            browser.close()
