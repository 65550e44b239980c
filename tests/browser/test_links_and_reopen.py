"""What a person clicks and reopens, in JupyterLab and in Notebook 7 (with the settings and
server configuration ``make lab`` and Binder install):

- a result's ``original:`` link gives the browser the kept file itself (its bytes, its name),
  not the error page a hidden folder gets;
- a saved notebook with a Studio, reopened three times after its kernel stopped, each time
  saved again from the reopened page (as autosave does), shows the Studio's saved view every
  time and never "Error displaying widget: model not found".

Screenshots go to ``build/browser-links/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._lab import (
    CHROMIUM,
    FRONTENDS,
    ROOT,
    Frontend,
    chromium,
    jupyterlab,
    kernels_idle,
    notebook_text,
    notebook_url,
    run_all,
    shut_down_kernels,
    wait_until,
)

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-links"
LINKS = "links-check.ipynb"
STUDIO = "reopen-check.ipynb"
STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"
SAVED_VIEW = "⚠ Saved view: the kernel that ran this Studio has stopped"
AUTOSAVE = 5  # seconds: the server's autosave interval here (JupyterLab's default is 120)


@pytest.fixture(scope="module", params=FRONTENDS)
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Frontend, Path]]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test-browser`, which installs it")
    frontend: Frontend = request.param
    build = BUILD / frontend
    with jupyterlab(build, frontend, app_settings=True, autosave=AUTOSAVE) as base:
        work = build / "notebooks"
        (work / LINKS).write_text(notebook_text(
            'import genlab\nc = genlab.connect()\nr = c.generate(model="image-b", '
            'prompt="a kite")',
            "r",
            'v = c.generate(model="video-a", prompt="a kite over the dunes", duration=2,\n'
            '               resolution="480P")\nv',
        ))
        (work / STUDIO).write_text(notebook_text(
            "import genlab\nclient = genlab.connect()\nstudio = genlab.studio(client)\nstudio",
            'studio.set(model="image-b", prompt="a paper kite over a long beach")\n'
            "card = studio.submit()\ncard.wait_done(240)",
        ))
        yield base, frontend, build


def test_original_links_give_the_browser_the_kept_file(
    server: tuple[str, Frontend, Path],
) -> None:
    from playwright.sync_api import sync_playwright

    base, frontend, build = server
    work = build / "notebooks"
    with sync_playwright() as p:
        browser = chromium(p, build)
        page = browser.new_page(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
        page.set_default_timeout(120_000)  # a busy machine: the menus answer slowly
        try:
            page.goto(notebook_url(base, LINKS, frontend))
            page.wait_for_selector(".jp-Notebook >> visible=true")
            run_all(page, base, ".genlab-record, .genlab-live")
            page.wait_for_function(
                "() => [...document.querySelectorAll('.genlab-record video')]"
                ".some(v => v.readyState >= 2)", timeout=240_000)
            wait_until(lambda: kernels_idle(base), "the notebook to finish")
            # The links to originals: the <a> after "original:", pointing into the store.
            links = page.locator(".jp-OutputArea-output a[href*='genlab-media/']")
            assert links.count(), page.locator(".jp-OutputArea-output").all_inner_texts()
            page.screenshot(path=str(BUILD / f"{frontend}-links.png"))
            got: list[str] = []
            for index in range(links.count()):
                link = links.nth(index)
                if "original" not in link.evaluate("a => a.parentElement.textContent"):
                    continue
                link.scroll_into_view_if_needed()
                with page.expect_download(timeout=60_000) as info:
                    link.click()
                download = info.value
                assert download.failure() is None, (link.get_attribute("href"),
                                                    download.failure())
                name = download.suggested_filename
                kept = work / "genlab-media" / name
                assert kept.is_file(), (link.get_attribute("href"), name)
                assert Path(download.path()).read_bytes() == kept.read_bytes(), name
                assert name in link.inner_text()  # the link names the file it gives
                got.append(name)
            # Every result's original: the video's and the image's.
            assert any(name.endswith(".mp4") for name in got), got
            assert any(name.endswith(".png") for name in got), got
        except BaseException:
            page.screenshot(path=str(BUILD / f"{frontend}-links-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
            shut_down_kernels(base)  # its emulator and kernel leave the machine to the next


def _notebook(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def _studio_id(notebook: dict[str, Any]) -> str | None:
    """The model id the Studio's cell shows."""
    for cell in notebook.get("cells", ())[:1]:
        for output in cell.get("outputs", ()):
            view = output.get("data", {}).get(VIEW)
            if view:
                return str(view["model_id"])
    return None


def _state_has_studio(path: Path) -> bool:
    notebook = _notebook(path)
    state = notebook.get("metadata", {}).get("widgets", {}).get(STATE, {}).get("state", {})
    model = _studio_id(notebook)
    return model is not None and model in state


_SHOWN = """
() => {
  const text = document.body.innerText;
  return {
    studios: document.querySelectorAll('.genlab-studio').length,
    cardImages: document.querySelectorAll(
      ".genlab-studio .genlab-card img[src^='data:image/']").length,
    notFound: text.includes('model not found'),
    errors: text.includes('Error displaying widget'),
    offlineNote: [...document.querySelectorAll('.genlab-offline')]
      .filter(e => e.offsetParent !== null).map(e => e.innerText),
  };
}
"""


def test_a_saved_studio_reopens_with_its_saved_view_again_and_again(
    server: tuple[str, Frontend, Path],
) -> None:
    from playwright.sync_api import sync_playwright

    base, frontend, build = server
    saved = build / "notebooks" / STUDIO
    with sync_playwright() as p:
        browser = chromium(p, build)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(120_000)
        try:
            page.goto(notebook_url(base, STUDIO, frontend))
            page.wait_for_selector(".jp-Notebook >> visible=true")
            run_all(page, base, ".genlab-studio")
            page.wait_for_selector(".genlab-studio .genlab-card img[src^='data:image/']",
                                   timeout=240_000)
            wait_until(lambda: kernels_idle(base), "the notebook to finish")
            page.keyboard.press("Control+s")
            wait_until(lambda: _state_has_studio(saved), "the notebook saved with the Studio",
                       60)

            for opening in (1, 2, 3):
                shut_down_kernels(base)  # the kernel that ran the Studio is gone
                page.reload()
                page.wait_for_selector(".jp-Notebook >> visible=true")
                page.wait_for_selector(".genlab-studio .genlab-card img[src^='data:image/']",
                                       state="attached", timeout=120_000)
                page.locator(".genlab-offline >> visible=true").wait_for()
                shown = page.evaluate(_SHOWN)
                assert shown["studios"] == 1 and shown["cardImages"] >= 1, (opening, shown)
                assert not shown["notFound"] and not shown["errors"], (opening, shown)
                assert len(shown["offlineNote"]) == 1, (opening, shown)
                assert shown["offlineNote"][0].startswith(SAVED_VIEW), (opening, shown)
                page.screenshot(path=str(BUILD / f"{frontend}-reopened-{opening}.png"))
                # The reopened page saves what it holds (autosave does, AUTOSAVE s after the
                # reopening marks it changed; here the save is also asked for, so it happens
                # whatever the front end marks): the Studio's state must still be in the file.
                before = saved.stat().st_mtime_ns
                page.keyboard.press("Control+s")
                wait_until(lambda: saved.stat().st_mtime_ns != before,  # noqa: B023
                           "the reopened notebook saved", 60)
                page.wait_for_timeout(AUTOSAVE * 1000 + 1000)  # an autosave may follow
                # Read once the file is whole again (a save may be under way).
                wait_until(lambda: _state_has_studio(saved), "the Studio's state in the saved "
                           f"file after opening {opening}", 30)
        except BaseException:
            page.screenshot(path=str(BUILD / f"{frontend}-reopen-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
