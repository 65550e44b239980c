"""The rater in a real browser: a person opens the rating notebook in JupyterLab, rates ten
pairs with the keyboard, and sees the leaderboard with models ranked and intervals drawn;
after a kernel restart, the votes are still in the history. Run with ``make test-browser``.

Screenshots of the rater in the light and the dark theme go to ``build/browser-rater/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from genlab.history import History

from ._lab import (
    CHROMIUM,
    ROOT,
    chromium,
    jupyterlab,
    set_theme,
)

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-rater"
NOTEBOOK = "06-which-model-is-better.ipynb"
VOTES = BUILD / "notebooks" / "genlab-output" / "which-model-is-better.sqlite"
KEYS = ["1", "2", "=", "0", "1", "2", "1", "1", "2", "="]  # ten answers, every kind

_PROGRESS = "() => document.querySelector('.genlab-rater').innerText.includes({!r})"
_INTERVALS = """
() => [...document.querySelectorAll('.genlab-rater .genlab-board-table tr.ranked')].map(
  row => row.querySelector('.genlab-interval .range').getBoundingClientRect().width)
"""
_CONTRAST = """
() => {
  const lum = (c) => {
    const [r, g, b] = c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number).map((v) => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const page = lum(getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor);
  const ratio = (el) => {
    const [a, b] = [lum(getComputedStyle(el).color), page].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  };
  const rater = document.querySelector('.genlab-rater');
  return {prompt: ratio(rater.querySelector('.genlab-prompt')),
          board: ratio(rater.querySelector('.genlab-board-table td.name')),
          keys: ratio(rater.querySelector('.genlab-keys'))};
}
"""


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with jupyterlab(BUILD) as base:
        set_theme(BUILD, "JupyterLab Light")
        yield base


def _idle(page: Any) -> None:
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(state="visible")


def _run_all(page: Any) -> None:
    for attempt in range(3):  # a run sent before the kernel is ready is dropped: send again
        _idle(page)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.locator(".genlab-rater").first.wait_for(state="visible", timeout=90_000)
            return
        except Exception:
            if attempt == 2:
                raise


def _progress(page: Any, text: str) -> None:
    page.wait_for_function(_PROGRESS.format(text), timeout=60_000)


def test_a_person_rates_ten_pairs_with_the_keyboard(lab: str) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test-browser`, which installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = chromium(p, BUILD)
        page = browser.new_page(viewport={"width": 1280, "height": 1100})
        page.set_default_timeout(60_000)
        try:
            page.goto(f"{lab}/lab/workspaces/rater/tree/{NOTEBOOK}?reset")
            page.wait_for_selector(".jp-Notebook", state="visible")
            _run_all(page)
            _progress(page, "10 of 24 pairs")  # the notebook's own ten answers, from code
            _idle(page)
            rater = page.locator(".genlab-rater").first
            rater.scroll_into_view_if_needed()
            markdown = page.locator(".jp-MarkdownCell").count()

            # The keyboard bar takes the focus; s skips and u undoes, counting nothing.
            rater.locator(".genlab-keys").click()
            rater.get_by_text("Keys on:").wait_for(state="visible")
            for key in ("s", "u"):
                page.keyboard.press(key)
            page.wait_for_timeout(500)
            _progress(page, "10 of 24 pairs")
            for done, key in enumerate(KEYS, start=11):
                page.keyboard.press(key)
                _progress(page, f"{done} of 24 pairs")
            _idle(page)
            # The keys reached the rater, not JupyterLab ("1" would make a cell a heading).
            assert page.locator(".jp-MarkdownCell").count() == markdown
            assert rater.locator(".genlab-keys").evaluate("e => e === document.activeElement")

            # The leaderboard under the pair: models ranked, each interval drawn.
            widths = page.evaluate(_INTERVALS)
            assert len(widths) >= 2 and all(w > 0 for w in widths), widths
            assert rater.locator(".genlab-board-table tr.ranked td").first.inner_text() == "1"
            assert rater.locator("img[src^='data:image/']").count() == 2
            contrast = page.evaluate(_CONTRAST)
            assert min(contrast.values()) >= 3.0, contrast
            rater.screenshot(path=str(BUILD / "rater-light.png"))

            # The same view in the dark theme, switched live.
            page.get_by_role("menuitem", name="Settings", exact=True).click()
            page.get_by_text("Theme", exact=True).click()
            page.get_by_text("JupyterLab Dark", exact=True).click()
            page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
            page.wait_for_timeout(1000)  # the theme's stylesheet applied
            contrast = page.evaluate(_CONTRAST)
            assert min(contrast.values()) >= 3.0, contrast
            rater.screenshot(path=str(BUILD / "rater-dark.png"))

            # After a kernel restart the votes are still there: a fresh kernel reads them.
            page.get_by_role("menuitem", name="Kernel", exact=True).click()
            page.get_by_text("Restart Kernel…", exact=True).click()
            page.locator(".jp-Dialog .jp-mod-accept").click()
            _idle(page)
            page.locator(".jp-Cell").last.locator(".jp-InputPrompt").click()
            page.keyboard.press("Escape")
            page.keyboard.press("b")  # a new cell below
            page.keyboard.press("Enter")  # edit it
            page.keyboard.type(
                "import genlab; votes = genlab.History('genlab-output/"
                "which-model-is-better.sqlite').ratings(tag='which-model'); "
                # This person's: the notebook also records three simulated raters' votes
                # and a judge's.
                "mine = votes[~votes['rater'].isin(['ana', 'ben', 'carl']) "
                "& ~votes['rater'].str.startswith('judge:')]; "
                "print('votes after restart:', len(mine))"
            )
            page.keyboard.press("Shift+Enter")
            page.get_by_text("votes after restart: 20").wait_for(state="visible")
        except BaseException:
            page.screenshot(path=str(BUILD / "failure.png"), full_page=True)
            raise
        finally:
            browser.close()

    votes = History(VOTES).ratings(tag="which-model")
    # The simulated raters' and the judge's aside.
    votes = votes[~votes["rater"].isin(["ana", "ben", "carl"])
                  & ~votes["rater"].str.startswith("judge:")]
    assert len(votes) == 20
    typed = votes.tail(10)["answer"].value_counts().to_dict()
    assert typed == {"left": 4, "right": 3, "tie": 2, "both bad": 1}
