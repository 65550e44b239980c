"""The Studio's money in a real browser, JupyterLab and Notebook 7: the budget line moves after
each submit, says what an unpriced model reserves at its assumed price, and turns Submit off
with the reason before the click; the reuse offer sits beside Submit, and nothing below it
moves when a task is submitted, generated again or finished.

Screenshots go to ``build/browser-money/``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from ._lab import (
    CHROMIUM,
    ROOT,
    Frontend,
    chromium,
    jupyterlab,
    notebook_text,
    notebook_url,
    set_theme,
)

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-money"
NOTEBOOK = "money-check.ipynb"
WAIT = 240_000  # ms: a busy machine; every wait is for a condition, never a duration

# video-a at 480P: 80 credits a second; 2 s = 160. video-b: no published price, 60 assumed.
SETUP = """\
import tempfile
import genlab
from genlab.client import Budget
budget = Budget(session=5000, task=500, unpriced={"video-b": 60})
client = genlab.connect(budget=budget,
                        history=genlab.History(tempfile.mkdtemp() + "/history.sqlite"))
# A result made before the Studio opened: the Studio may offer it.
_ = client.generate(model="video-a", prompt="a red kite", duration=2, resolution="480P",
                    reuse=False, progress=False)"""
STUDIO = """\
studio = genlab.studio(client, model="video-a")
studio.set(prompt="a red kite", duration=2, resolution="480P")
studio"""

# (frontend, width, theme): both front ends, and every width with every theme once.
RUNS: list[tuple[Frontend, int, str]] = [
    ("lab", 1024, "JupyterLab Light"),
    ("lab", 1400, "JupyterLab Dark"),
    ("notebook", 1024, "JupyterLab Dark"),
    ("notebook", 1400, "JupyterLab Light"),
]

# Where the parts sit, from the Studio's own top: the page may scroll, the Studio must not
# grow or shrink above its tabs.
_LAYOUT = """
() => {
  const studio = document.querySelector('.genlab-studio');
  const top = studio.getBoundingClientRect().top;
  const at = (sel) => {
    const r = studio.querySelector(sel).getBoundingClientRect();
    return {top: Math.round(r.top - top), height: Math.round(r.height)};
  };
  // The tabs grow with the cards below their top; their top must stay.
  return {submit: at('.genlab-submit'), tabsTop: at('.genlab-tabs').top};
}
"""


def _notebook() -> str:
    return notebook_text(SETUP, STUDIO)


@pytest.fixture(scope="module")
def servers() -> Iterator[Callable[[Frontend], str]]:
    """JupyterLab or Notebook 7, each started once, when first asked for; its base URL."""
    with ExitStack() as stack, pytest.MonkeyPatch.context() as patch:
        # The kernels import this checkout's genlab, wherever they run.
        patch.setenv("PYTHONPATH", str(ROOT / "src"))
        started: dict[Frontend, str] = {}

        def base(frontend: Frontend) -> str:
            if frontend not in started:
                started[frontend] = stack.enter_context(jupyterlab(BUILD / frontend, frontend))
            return started[frontend]

        yield base


def _run_all(page: Any) -> None:
    """Run every cell once the kernel is idle (a run sent earlier is dropped), until the
    Studio shows; the same menu in JupyterLab and Notebook 7. A "Select Kernel" question,
    whenever the front end asks it, is answered with the notebook's own kernel."""
    page.add_locator_handler(
        page.locator(".jp-Dialog button.jp-mod-accept"),
        lambda button: button.click(),
    )
    idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first
    for attempt in range(3):
        idle.wait_for(state="attached", timeout=WAIT)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.locator(".genlab-studio").first.wait_for(state="visible", timeout=WAIT)
            return
        except Exception:
            if attempt == 2:
                raise


def _money(studio: Any) -> str:
    return str(studio.locator(".genlab-money").inner_text())


def _wait_money(page: Any, pattern: str) -> None:
    page.wait_for_function(
        "(p) => new RegExp(p).test(document.querySelector('.genlab-studio .genlab-money')"
        ".innerText)", arg=pattern, timeout=WAIT,
    )


def _cards_finished(page: Any, count: int) -> None:
    """``count`` cards show a playable video (a card is finished once its media shows)."""
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('.genlab-card video')]"
        ".filter(v => v.readyState >= 2).length >= n", arg=count, timeout=WAIT,
    )


@pytest.mark.parametrize(("frontend", "width", "theme"), RUNS)
def test_the_money_line_and_a_steady_page(
    servers: Callable[[Frontend], str], frontend: Frontend, width: int, theme: str
) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test-browser`, which installs it")
    from playwright.sync_api import sync_playwright

    base = servers(frontend)
    build = BUILD / frontend
    set_theme(build, theme)
    tag = f"{frontend}-{width}-{'dark' if 'Dark' in theme else 'light'}"
    name = f"{tag}-{NOTEBOOK}"
    (build / "notebooks" / name).write_text(_notebook())
    shots = BUILD
    with sync_playwright() as p:
        browser = chromium(p, build)
        page = browser.new_page(viewport={"width": width, "height": 1000})
        page.set_default_timeout(WAIT)
        try:
            # JupyterLab: a workspace of its own, reset, so only this notebook is open.
            page.goto(f"{base}/lab/workspaces/{tag}/tree/{name}?reset" if frontend == "lab"
                      else notebook_url(base, name, frontend))
            page.wait_for_selector(".jp-Notebook >> visible=true")
            _run_all(page)
            studio = page.locator(".genlab-studio").first
            offer = studio.locator(".genlab-reuse-offer")

            # The result made before the Studio is offered, beside Submit, on one line.
            offer.get_by_text("♻ made").wait_for()
            assert offer.get_by_role("button", name="Reuse it (saves 160 credits)").is_visible()
            _wait_money(page, r"reserves 160 credits · 4,840 of 5,000 left this session")
            assert offer.evaluate("e => e.getBoundingClientRect().height") <= 40
            reset = studio.get_by_role("button", name="Reset form")
            assert reset.evaluate("e => e.scrollWidth <= e.clientWidth")  # never squeezed
            before = page.evaluate(_LAYOUT)
            studio.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"offer-{tag}.png"))

            # Generate again: the offer steps aside, the task runs and ends, nothing moves,
            # and the line shows what is left without an edit.
            offer.get_by_role("button", name="Generate again").click()
            _cards_finished(page, 1)
            _wait_money(page, r"reserves 160 credits · 4,680 of 5,000 left this session")
            assert not offer.is_visible()  # its own fresh result is not offered back
            assert page.evaluate(_LAYOUT) == before

            # Submit: the same, and still no offer of what was just made.
            studio.get_by_role("button", name="Submit").click()
            _cards_finished(page, 2)
            _wait_money(page, r"4,520 of 5,000 left this session")
            assert not offer.is_visible()
            assert page.evaluate(_LAYOUT) == before
            page.screenshot(path=str(shots / f"after-tasks-{tag}.png"))

            # Over the per-task cap: Submit is off, the reason shows before any click.
            submit = studio.locator(".genlab-submit")
            studio.locator(".genlab-field-resolution").get_by_role(
                "button", name="1080P", exact=True).click()
            _wait_money(page, r"Submit is off: .*the per-task cap is 500")
            assert submit.is_disabled()
            assert "lower the duration or resolution" in _money(studio)
            studio.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"over-the-cap-{tag}.png"))
            studio.locator(".genlab-field-resolution").get_by_role(
                "button", name="480P", exact=True).click()
            _wait_money(page, r"^reserves 160 credits · 4,520 of 5,000 left this session$")
            assert submit.is_enabled()

            # video-b publishes no price: the budget's assumed one is what the line says.
            picker = studio.locator(".genlab-model-picker select")
            picker.select_option("video-b")
            _wait_money(page, r"reserves \d[\d,]* credits \(the budget's assumed price")
            assert "price not published" not in _money(studio)
            assert submit.is_enabled()
            page.screenshot(path=str(shots / f"assumed-price-{tag}.png"))

            # video-c has none and the budget assumes none: refused before the click.
            picker.select_option("video-c")
            _wait_money(page, r"Submit is off: video-c has no published price")
            assert submit.is_disabled()
            assert re.search(r"Budget\(unpriced=", _money(studio))
            page.screenshot(path=str(shots / f"unpriced-refused-{tag}.png"))
        except BaseException:
            page.screenshot(path=str(shots / f"failure-{tag}.png"), full_page=True)
            raise
        finally:
            browser.close()
