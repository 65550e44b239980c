"""The Studio's form in a real browser, in JupyterLab and in Notebook 7: it fits (Submit in
view at 1024x900 for text-to-video, no room taken by empty reference lists), a typed duration
out of range is a message and nothing is sent, a new card comes into view, "Copy as code"
fills the clipboard; then screenshots in light and dark at 1024 and 1400 px, with the labels,
the seed's placeholder and an uploaded file's name checked on screen.

Screenshots go to ``build/browser-studio/``.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from ._lab import (
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

BUILD = ROOT / "build" / "browser-studio"
NOTEBOOK = "studio-form.ipynb"
SIZES = (1024, 1400)


def _notebook() -> str:
    import nbformat

    # Notes above the Studio: the page can scroll Submit down to the window's bottom edge.
    notes = "# Notes\n\n" + "\n\n".join(f"{n}. a line of notes" for n in range(1, 31))
    code = "import genlab\nclient = genlab.connect()\nstudio = genlab.studio(client)\nstudio"
    return notebook_text(nbformat.v4.new_markdown_cell(notes), code)


@pytest.fixture(scope="module", params=FRONTENDS)
def lab(request: pytest.FixtureRequest) -> Iterator[tuple[str, Frontend]]:
    """JupyterLab or Notebook 7 serving a notebook whose one cell shows a Studio."""
    frontend: Frontend = request.param
    build = BUILD / frontend
    # The kernel imports this checkout's genlab, even when PYTHONPATH was given relative.
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    try:
        with jupyterlab(build, frontend) as base:
            (build / "notebooks" / NOTEBOOK).write_text(_notebook())
            yield base, frontend
    finally:
        monkeypatch.undo()


def _open_studio(page: Any, base: str, frontend: Frontend) -> Any:
    """Open the notebook, run its cell, and return the Studio once it is on screen. A run
    sent before the kernel is ready may be dropped: sent again then."""
    page.goto(notebook_url(base, NOTEBOOK, frontend))
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true")
    try:  # a kernel dialog, when there is one, comes a moment after the cells
        page.locator(".jp-Dialog").wait_for(state="visible", timeout=5_000)
    except Exception:
        pass
    studio = page.locator(".genlab-studio").first
    for attempt in range(4):
        # Notebook 7 may ask which kernel to start: the notebook's own.
        dialog = page.locator(".jp-Dialog")
        if dialog.count() and dialog.first.is_visible():
            dialog.get_by_role("button", name="Select", exact=True).click()
            dialog.wait_for(state="detached")
        page.locator(".jp-CodeCell .cm-content").first.click()
        page.keyboard.press("Control+Enter")
        try:
            studio.locator(".genlab-references-bar").wait_for(state="visible", timeout=90_000)
            return studio
        except Exception:
            if attempt == 3:
                raise
    raise AssertionError("unreachable")


_HEIGHTS = """
(root) => {
  const h = (sel) => [...root.querySelectorAll(sel)].map(
      (e) => Math.round(e.getBoundingClientRect().height));
  return {lists: h('.genlab-field-reference_images, .genlab-field-reference_videos, '
                   + '.genlab-field-reference_audios'),
          bar: h('.genlab-references-bar')[0],
          submit: root.querySelector('.genlab-submit').getBoundingClientRect().bottom,
          top: root.getBoundingClientRect().top, viewport: innerHeight};
}
"""


@pytest.mark.parametrize("width", [1024])
def test_the_form_fits_bounds_a_typed_duration_and_brings_the_card_into_view(
    lab: tuple[str, Frontend], width: int
) -> None:
    from playwright.sync_api import sync_playwright

    base, frontend = lab
    build = BUILD / frontend
    set_theme(build, "JupyterLab Light")
    with sync_playwright() as p:
        browser = chromium(p, build)
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
        page = context.new_page()
        page.set_default_timeout(120_000)  # a busy machine: the kernel answers slowly
        try:
            studio = _open_studio(page, base, frontend)

            # 6: text-to-video fits: Submit within the first 900 px from the Studio's top,
            # and the three empty reference lists are one line of buttons.
            studio.evaluate("e => e.scrollIntoView({block: 'start'})")
            sizes = studio.evaluate(_HEIGHTS)
            assert sizes["lists"] and all(h <= 8 for h in sizes["lists"]), sizes
            assert sizes["bar"] <= 44, sizes
            assert 0 < sizes["submit"] - min(sizes["top"], 0) <= sizes["viewport"], sizes
            bar = studio.locator(".genlab-references-bar")
            for name in ("Images", "Videos", "Audio"):
                assert bar.get_by_role("button", name=name).is_visible()
            page.screenshot(path=str(build / f"fits-{frontend}-{width}.png"))

            # 8: 40 typed into the duration box goes to 30, the slider with it, a line says so.
            studio.locator(".genlab-field-prompt textarea").fill("a red fox in fresh snow")
            box = studio.locator(".genlab-field-duration input[type=number]")
            box.fill("40")
            box.press("Enter")
            message = studio.locator(".genlab-field-duration .genlab-hint")
            message.wait_for(state="visible")
            assert "duration must be from 2 to 30: 40 was set to 30" in message.inner_text()
            page.wait_for_function(  # the box and the slider's handle both say 30
                "() => document.querySelector("
                "'.genlab-field-duration input[type=number]').value === '30' && "
                "parseFloat(document.querySelector('.genlab-field-duration [role=slider]')"
                ".getAttribute('aria-valuenow')) === 30")
            message.scroll_into_view_if_needed()
            page.screenshot(path=str(build / f"duration-40-{frontend}-{width}.png"))
            box.fill("2")
            box.press("Enter")
            message.wait_for(state="detached")
            page.wait_for_function(
                "() => !document.querySelector('.genlab-submit').disabled")
            submit = studio.locator(".genlab-submit")

            # 6: with Submit at the bottom of the window, the new card is brought into view.
            submit.evaluate("e => e.scrollIntoView({block: 'end'})")
            below = studio.locator(".genlab-tabs").evaluate(
                "e => e.getBoundingClientRect().top + 60 > innerHeight")
            assert below  # where the card will appear is out of view before the click
            submit.click()
            page.wait_for_function(
                "() => { const c = document.querySelector('.genlab-cards > .genlab-card');"
                " if (!c) return false; const r = c.getBoundingClientRect();"
                " return r.top >= 0 && r.top < innerHeight - 60; }")
            page.screenshot(path=str(build / f"new-card-{frontend}-{width}.png"))

            # 12: "Copy as code" puts the request's code on the clipboard.
            copy = studio.locator(".genlab-card .genlab-copy").first
            copy.click()
            copy.get_by_text("Copied").wait_for(state="visible")
            pasted = page.evaluate("() => navigator.clipboard.readText()")
            assert pasted.startswith("record = client.generate(**{'model': 'video-a'")
            assert "'prompt': 'a red fox in fresh snow'" in pasted and "'duration': 2" in pasted
        except BaseException:
            page.screenshot(path=str(build / f"failure-{frontend}.png"), full_page=True)
            raise
        finally:
            browser.close()


_LABELS = """
(root) => {
  const bad = [];
  const ctx = document.createElement('canvas').getContext('2d');
  for (const el of root.querySelectorAll('.widget-label, .jupyter-button, '
                                         + '.widget-toggle-button')) {
    if (el.offsetParent === null) continue;
    if (el.scrollWidth > el.clientWidth + 1 || el.getClientRects().length > 1) {
      bad.push(`cut: "${el.textContent.trim()}" ${el.scrollWidth} > ${el.clientWidth}`);
    }
  }
  for (const el of root.querySelectorAll('.widget-html-content div')) {
    if (el.offsetParent === null || el.style.textAlign !== 'right') continue;
    const text = document.createRange();
    text.selectNodeContents(el);  // more than one line box: the label wrapped
    if (el.scrollWidth > el.clientWidth + 1 || text.getClientRects().length > 1) {
      bad.push(`side label: "${el.textContent.trim()}"`);
    }
  }
  for (const input of root.querySelectorAll('input[placeholder]')) {
    if (input.offsetParent === null || !input.placeholder) continue;
    const style = getComputedStyle(input);
    ctx.font = `${style.fontSize} ${style.fontFamily}`;
    const room = input.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight);
    if (ctx.measureText(input.placeholder).width > room) {
      bad.push(`placeholder: "${input.placeholder}" in ${room}px`);
    }
  }
  for (const el of root.querySelectorAll('.widget-label')) {
    if (el.offsetParent !== null && /_/.test(el.textContent)) {
      bad.push(`wire name: "${el.textContent.trim()}"`);
    }
  }
  return bad;
}
"""


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (640, 480), (40, 120, 200)).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("width", SIZES)
def test_the_form_reads_well_in_both_themes(
    lab: tuple[str, Frontend], width: int, theme: str
) -> None:
    from playwright.sync_api import sync_playwright

    base, frontend = lab
    build = BUILD / frontend
    set_theme(build, theme)
    tag = f"{frontend}-{width}-{'dark' if 'Dark' in theme else 'light'}"
    with sync_playwright() as p:
        browser = chromium(p, build)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(120_000)
        try:
            studio = _open_studio(page, base, frontend)
            studio.evaluate("e => e.scrollIntoView({block: 'start'})")
            assert not (bad := studio.evaluate(_LABELS)), bad
            page.screenshot(path=str(BUILD / f"form-video-a-{tag}.png"))

            # video-b: "More options" with the seed's whole range in its placeholder.
            picker = studio.locator(".genlab-model-picker select")
            picker.select_option("video-b")
            seed = studio.locator(".genlab-field-seed input")
            seed.wait_for(state="visible")
            assert seed.get_attribute("placeholder") == "(default) -1 to 4294967295"
            assert not (bad := studio.evaluate(_LABELS)), bad
            studio.locator(".genlab-field-extra_params").scroll_into_view_if_needed()
            page.screenshot(path=str(BUILD / f"form-video-b-{tag}.png"))

            # video-d: "Orientation" on one line; an uploaded image listed by its name.
            picker.select_option("video-d")
            studio.locator(".genlab-field-character_orientation").wait_for(state="visible")
            assert not (bad := studio.evaluate(_LABELS)), bad
            studio.locator(".genlab-references-bar").get_by_role(
                "button", name="Images").click()
            images = studio.locator(".genlab-field-reference_images")
            with page.expect_file_chooser(timeout=30_000) as chooser:
                images.locator(".widget-upload").click()
            chooser.value.set_files(
                {"name": "harbour-at-dawn.png", "mimeType": "image/png", "buffer": _png()})
            images.get_by_text("harbour-at-dawn.png").wait_for(state="visible")
            assert "/v1/uploads" not in images.inner_text()
            images.scroll_into_view_if_needed()
            page.screenshot(path=str(BUILD / f"form-video-d-references-{tag}.png"))
        except BaseException:
            page.screenshot(path=str(BUILD / f"failure-{tag}.png"), full_page=True)
            raise
        finally:
            browser.close()
