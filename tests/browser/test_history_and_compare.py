"""The History tab and comparisons in a real browser, JupyterLab and Notebook 7: rows that stay
one line with credits, seconds, task and error in view, a row that opens to its card, a
History that follows work done elsewhere, per-model status in Compare, galleries whose
columns all show at 1024 and 1400 px, and a report path that is a link.

Screenshots (light and dark, 1024 and 1400 px) go to ``build/browser-tables/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._lab import (
    CHROMIUM,
    FRONTENDS,
    ROOT,
    THEMES,
    Frontend,
    chromium,
    jupyterlab,
    notebook_text,
    notebook_url,
    set_theme,
)

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-tables"
NOTEBOOK = "history-compare-check.ipynb"
LONG_PROMPT = ("A lighthouse keeper walks the spiral stairs at dusk, the lamp warming, gulls "
               "circling, waves breaking white on black rocks far below, " * 2).strip()
VIDEO_MODELS = ("video-a", "video-b", "video-c", "video-e", "video-f")
# Every look in the same page, after one run of the notebook: the theme is switched from the
# Settings menu (a reload would not reliably draw a running kernel's widgets again).
WIDTHS = (1024, 1400)
IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle']"


def _notebook() -> str:
    cells = [
        "import genlab\nclient = genlab.connect()\nstudio = genlab.studio(client)\nstudio",
        # Work done outside the Studio, after it was shown: the History tab must find it.
        f'image = client.generate(model="image-b", prompt={LONG_PROMPT!r}, progress=False)\n'
        'video = client.generate(model="video-a", prompt="a fox", duration=4, resolution="480P",'
        " progress=False)",
        'cmp = genlab.compare(client, ["a paper lantern over a night river"], '
        f"{list(VIDEO_MODELS)!r}, params={{'duration': 4}}, progress=False)\ncmp.gallery()",
        'cmp.to_html("genlab-output/lanterns.html")',
    ]
    return notebook_text(*cells)


@pytest.fixture(scope="module", params=FRONTENDS)
def lab(request: pytest.FixtureRequest) -> Iterator[tuple[Frontend, str]]:
    frontend: Frontend = request.param
    with jupyterlab(BUILD / frontend, frontend) as base:
        (BUILD / frontend / "notebooks" / NOTEBOOK).write_text(_notebook())
        yield frontend, base


def _run_all(page: Any) -> None:
    """Run every cell once the kernel is idle (a run sent earlier is dropped)."""
    try:  # a notebook written outside the front end may first ask which kernel to start
        page.get_by_role("button", name="Select", exact=True).click(timeout=15_000)
    except Exception:
        pass  # it started the notebook's own kernel without asking
    for attempt in range(3):
        page.wait_for_selector(IDLE, timeout=120_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.locator(".genlab-studio").first.wait_for(state="visible", timeout=120_000)
            return
        except Exception:
            if attempt == 2:
                raise


def _switch_theme(page: Any, theme: str) -> None:
    """Settings > Theme > ``theme``, in the open page; wait until the page wears it."""
    page.get_by_role("menuitem", name="Settings", exact=True).click()
    page.locator(".lm-Menu-itemLabel:visible", has_text=re.compile(r"^Theme$")).click()
    page.locator(".lm-Menu-itemLabel:visible",
                 has_text=re.compile(f"^{re.escape(theme)}$")).click()
    light = "false" if "Dark" in theme else "true"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")
    page.wait_for_function(
        f"() => document.body.dataset.jpThemeName === {theme!r}")
    page.keyboard.press("Escape")  # a menu left open would cover the notebook


_ROWS = """
(task) => {
  const panel = document.querySelector('.genlab-history');
  const edge = panel.getBoundingClientRect().right;
  const rows = [...panel.querySelectorAll('.genlab-history-row')];
  const row = rows.find(r => r.querySelector("[data-col='task_id']").title === task);
  const cell = (name) => row.querySelector(`[data-col='${name}']`);
  const prompt = cell('prompt');
  const right = (name) => cell(name).getBoundingClientRect().right;
  return {rows: rows.length, height: row.getBoundingClientRect().height, edge: edge,
          credits: cell('credits').textContent, creditsTip: cell('credits').title,
          promptTip: prompt.title, rights: ['credits', 'total_seconds', 'task_id',
          'error_message'].map(right), seconds: cell('total_seconds').textContent,
          shownId: cell('task_id').textContent, width: row.clientWidth,
          widths: [...row.children].map(c => `${c.dataset.col} ${c.clientWidth}`).join(', '),
          // Characters of the prompt in view: its text's share that fits its cell.
          promptShown: Math.floor(prompt.textContent.length * prompt.clientWidth
                                  / Math.max(prompt.scrollWidth, 1)),
          times: rows.map(r => r.querySelector("[data-col='submitted_at']"))
            .map(c => ({text: c.innerText, title: c.title,
                        cut: c.scrollWidth > c.clientWidth})),
          cut: ['model', 'status', 'credits', 'total_seconds', 'task_id'].flatMap(name => [
            cell(name), panel.querySelector(`.genlab-history-head [data-col='${name}']`)])
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.outerHTML)};
}
"""

_CELLS = """
() => {
  const g = [...document.querySelectorAll('.genlab-gallery')].find(
    e => !e.closest('.genlab-compare'));
  const area = g.closest('.jp-OutputArea-output');
  const box = area.getBoundingClientRect();
  return [...g.querySelectorAll('.genlab-cell')].map(c => {
    const r = c.getBoundingClientRect();
    return {model: c.querySelector('.head b').textContent, left: r.left, right: r.right,
            inside: r.left >= box.left - 1 && r.right <= box.right + 1};
  });
}
"""


def _text(page: Any, selector: str) -> str:
    return str(page.evaluate(f"() => document.querySelector({selector!r}).innerText"))


def _look(page: Any, frontend: Frontend, image_id: str, width: int, theme: str) -> None:
    """The History tab and the notebook's gallery at this width and theme, checked and
    screenshotted."""
    tag = f"{frontend}-{width}-{'dark' if 'Dark' in theme else 'light'}"
    dark = page.evaluate("() => document.body.dataset.jpThemeLight") == "false"
    assert dark == ("Dark" in theme)
    studio = page.locator(".genlab-studio").first
    studio.locator(".lm-TabBar-tab", has_text="History").click()
    # The rows are drawn by the front end after the tab opens: wait for this task's row.
    page.wait_for_function(
        "(task) => [...document.querySelectorAll(\"[data-col='task_id']\")]"
        ".some(c => c.title === task && "
        "c.closest('.genlab-history-row').getBoundingClientRect().width > 0)",
        arg=image_id)
    row = page.evaluate(_ROWS, image_id)
    # One line, however long the prompt; the whole prompt in its tooltip.
    assert row["height"] < 40, row
    assert row["promptTip"] == LONG_PROMPT
    # Every time whole and short (today: the time of day), the full moment in its tooltip.
    assert row["times"] and not [t for t in row["times"] if t["cut"]], row["times"]
    # Today (or, just after midnight, yesterday): in full, or brief in a narrow panel.
    short = re.compile(r"\d\d:\d\d(:\d\d)?|\d\d-\d\d( \d\d:\d\d)?")
    assert all(short.fullmatch(t["text"]) and t["title"].endswith(" UTC")
               for t in row["times"]), row["times"]
    # A long id cut in the middle, whole; the prompt has room to be read.
    assert row["shownId"] == f"{image_id[:9]}…{image_id[-7:]}", row
    assert row["promptShown"] >= 30, (row["promptShown"], row["width"], row["widths"])
    # Credits, seconds, task and error stay inside the panel.
    assert all(r <= row["edge"] + 1 for r in row["rights"]), row
    # Model, status, credits and seconds (values and headings) are never cut.
    assert row["cut"] == [], row["cut"]
    # No price: the same dash as everywhere, saying why on hover.
    assert row["credits"] == "–" and row["creditsTip"] == "no published price"
    assert row["seconds"] and row["seconds"] != "–"

    # Open: the task's card with its kept image, under its row.
    line = page.locator(".genlab-history-line", has=page.locator(
        f"[data-col='task_id'][title='{image_id}']"))
    line.get_by_role("button", name="Open").click()
    card = page.locator(".genlab-history-card")
    card.locator("img[src^='data:image/']:not(.genlab-poster)").first.wait_for(
        state="visible")
    assert "A lighthouse keeper" in card.inner_text()
    line.scroll_into_view_if_needed()
    page.screenshot(path=str(BUILD / f"history-{tag}.png"))
    line.get_by_role("button", name="Close").click()
    card.locator("img").first.wait_for(state="detached")

    # The comparison's gallery: every model's column in view, no sideways scroll.
    cells = page.evaluate(_CELLS)
    assert [c["model"] for c in cells] == list(VIDEO_MODELS)
    assert all(c["inside"] for c in cells), cells
    page.locator(".genlab-gallery").last.scroll_into_view_if_needed()
    page.wait_for_function(  # a frame to look at, not black boxes
        "() => [...document.querySelectorAll('.genlab-gallery video')]"
        ".every(v => v.readyState >= 2)")
    page.screenshot(path=str(BUILD / f"gallery-{tag}.png"))


def test_history_and_compare_read_well_and_open(lab: tuple[Frontend, str]) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test-browser`, which installs it")
    from playwright.sync_api import sync_playwright

    frontend, base = lab
    set_theme(BUILD / frontend, THEMES[0])
    with sync_playwright() as p:
        browser = chromium(p, BUILD / frontend)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(120_000)  # a busy machine: the menus answer slowly
        try:
            page.goto(notebook_url(base, NOTEBOOK, frontend))
            page.wait_for_selector(".jp-Notebook >> visible=true")
            _run_all(page)
            page.wait_for_selector(".genlab-report-file a", timeout=300_000)
            page.wait_for_selector(IDLE)
            studio = page.locator(".genlab-studio").first

            # The report's path is a link to the file, not PosixPath(...).
            link = page.locator(".genlab-report-file a").first
            # The front end resolves the relative link to the file beside the notebook.
            assert "/files/genlab-output/lanterns.html" in (link.get_attribute("href") or "")
            assert "PosixPath" not in page.locator(".jp-Notebook").inner_text()

            # The History tab shows the tasks made in cells after the Studio was drawn.
            studio.locator(".lm-TabBar-tab", has_text="History").click()
            page.wait_for_function(
                "() => [...document.querySelectorAll(\"[data-col='prompt']\")]"
                ".some(c => c.title.startsWith('A lighthouse'))", timeout=180_000)
            image_id = page.evaluate(
                "() => [...document.querySelectorAll(\"[data-col='prompt']\")]"
                ".find(c => c.title.startsWith('A lighthouse'))"
                ".closest('.genlab-history-row').querySelector(\"[data-col='task_id']\")"
                ".title"
            )
            assert image_id.startswith("task_")
            for theme in THEMES:
                if theme != THEMES[0]:
                    _switch_theme(page, theme)
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 1000})
                    _look(page, frontend, image_id, width, theme)

            # Compare in the Studio: a chip per model while it runs, the cost said once,
            # and the History tab then lists the comparison's tasks.
            studio.locator(".genlab-field-prompt textarea").fill("a kite at noon")
            studio.locator(".lm-TabBar-tab", has_text="Compare models").click()
            compare = studio.locator(".genlab-compare")
            for model in ("image-b", "image-d"):
                compare.locator(".genlab-chip", has_text=model).click()
            compare.get_by_text("2 runs").wait_for(state="visible")
            rows_before = page.locator(".genlab-history-row").count()
            compare.get_by_role("button", name="Compare").click()
            compare.locator(".genlab-runboard [data-model='image-d']").wait_for()
            compare.get_by_text("Done: 2 succeeded").wait_for(timeout=240_000)
            said = compare.inner_text()
            assert said.count("2 runs") == 1, said
            assert "0 credits estimated" not in said
            compare.locator(".genlab-gallery img").first.wait_for()
            compare.scroll_into_view_if_needed()
            page.screenshot(path=str(BUILD / f"compare-{frontend}.png"))
            studio.locator(".lm-TabBar-tab", has_text="History").click()
            page.wait_for_function(
                f"() => document.querySelectorAll('.genlab-history-row').length >= "
                f"{min(rows_before + 2, 20)}")
        except BaseException:
            page.screenshot(path=str(BUILD / f"failure-{frontend}.png"), full_page=True)
            raise
        finally:
            browser.close()
