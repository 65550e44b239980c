"""The documentation site (``make docs``, build/docs/) in Chromium, served on a loopback port:
every page loads without console errors, every internal link and anchor resolves, the
quickstart's video plays, search finds what the site says, and no request leaves 127.0.0.1.
Screenshots at 1024 and 1400 px, light and dark, go to build/browser-docs/.

The site is built first when build/docs/ has none (CI's ``make docs`` has built it already)."""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

from ._lab import ROOT, chromium

pytestmark = pytest.mark.browser

SITE = ROOT / "build" / "docs"
SHOTS = ROOT / "build" / "browser-docs"
SEARCHED = ("budget", "verdict")
"""Words a reader searches for. "verdict" is found today in the API reference (the catalog's and
the budget's verdicts); the ratings' verdict, built beside this, will add its own pages."""
PACKAGES = ("catalog", "client", "history", "comparison", "experiments", "rating", "report",
            "widgets", "media", "display", "emulator")
"""genlab's public subpackages, each with a reference page."""
_ID = re.compile(r'\bid="([^"]+)"')


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """build/docs served on a loopback port (built first when missing)."""
    if not (SITE / "index.html").is_file():
        subprocess.run(["make", "docs"], cwd=ROOT, check=True)  # in its own environment
    handler = functools.partial(_Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _pages() -> list[str]:
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html"))


def _ids(page: str) -> set[str]:
    return set(_ID.findall((SITE / page).read_text()))


def _guarded(browser: Any, width: int, scheme: str, outside: list[str],
             errors: list[str]) -> Any:
    """A page at ``width`` in ``scheme`` that records (and refuses) any request leaving
    127.0.0.1, and every console error or uncaught exception."""
    page = browser.new_page(viewport={"width": width, "height": 900},
                            color_scheme=scheme)

    def route(route: Any) -> None:
        url = route.request.url
        if urlparse(url).scheme in ("data", "blob") or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", route)
    page.on("console", lambda m: errors.append(f"{page.url}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    return page


def test_every_page_loads_and_every_internal_link_resolves(site: str) -> None:
    from playwright.sync_api import sync_playwright

    pages = _pages()
    assert {"index.html", "tutorials/01-quickstart.html", "guide/never-pay-twice.html",
            "reference/genlab.html", "changelog.html", "spec-decisions.html",
            "reliability.html"} <= set(pages)
    outside: list[str] = []
    errors: list[str] = []
    broken: list[str] = []
    with sync_playwright() as p:
        browser = chromium(p, ROOT / "build" / "browser-docs-chromium")
        try:
            page = _guarded(browser, 1400, "light", outside, errors)
            for name in pages:
                if name == "404.html":
                    continue
                response = page.goto(site + name)
                assert response is not None and response.ok, name
                page.wait_for_load_state("load")
                hrefs = page.eval_on_selector_all(
                    "a[href]", "links => links.map(a => a.href)")
                for href in hrefs:
                    target, anchor = urldefrag(href)
                    if not target.startswith(site):
                        continue
                    path = unquote(target[len(site):]) or "index.html"
                    if path.endswith("/"):
                        path += "index.html"
                    if not (SITE / path).is_file():
                        broken.append(f"{name}: {href}")
                    elif anchor and path.endswith(".html") and unquote(anchor) not in _ids(path):
                        broken.append(f"{name}: {href} (no such anchor)")
        finally:
            browser.close()
    assert not broken, broken
    assert not errors, errors
    assert not outside, outside


def test_the_quickstart_video_plays_and_search_finds_words(site: str) -> None:
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = chromium(p, ROOT / "build" / "browser-docs-chromium")
        try:
            page = _guarded(browser, 1400, "light", outside, errors)
            page.goto(urljoin(site, "tutorials/01-quickstart.html"))
            video = page.locator("video").first
            video.scroll_into_view_if_needed()
            page.wait_for_function(
                "() => { const v = document.querySelector('video');"
                " return v.readyState >= 2 && v.videoWidth > 0; }", timeout=60_000)
            page.evaluate("() => { const v = document.querySelector('video');"
                          " v.muted = true; v.currentTime = 0; return v.play(); }")
            page.wait_for_function(
                "() => document.querySelector('video').currentTime > 0", timeout=60_000)

            for word in SEARCHED:
                page.goto(site + "index.html")
                search = page.locator("input.md-search__input")
                search.click()  # at 1400 px the header shows the search field itself
                search.fill(word)
                results = page.locator(".md-search-result__item")
                results.first.wait_for(timeout=60_000)
                found = page.locator(".md-search-result").inner_text().lower()
                assert word in found, (word, found[:300])
        finally:
            browser.close()
    assert not errors, errors
    assert not outside, outside


def test_every_public_name_has_an_entry_in_the_api_reference(site: str) -> None:
    """Each name of ``genlab.__all__`` and of each public subpackage's ``__all__`` is on its
    package's reference page, under its own anchor."""
    import importlib

    import genlab

    missing = []
    for package in ["genlab", *(f"genlab.{name}" for name in PACKAGES)]:
        page = "genlab" if package == "genlab" else package.removeprefix("genlab.")
        ids = _ids(f"reference/{page}.html")
        module = importlib.import_module(package)
        missing += [f"{package}.{n}" for n in module.__all__ if f"{package}.{n}" not in ids]
    assert genlab.__all__ and not missing, missing


@pytest.mark.parametrize("width", [1024, 1400])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(site: str, width: int, scheme: str) -> None:
    """The home page, the quickstart and an API page, to be looked at."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    outside: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = chromium(p, ROOT / "build" / "browser-docs-chromium")
        try:
            page = _guarded(browser, width, scheme, outside, errors)
            for name in ("index.html", "tutorials/01-quickstart.html", "reference/genlab.html"):
                page.goto(site + name)
                page.wait_for_load_state("load")
                body = page.evaluate(
                    "() => getComputedStyle(document.body).backgroundColor")
                dark = body not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")
                assert dark == (scheme == "dark"), (name, scheme, body)
                stem = Path(name).stem
                if page.locator("video").count():
                    page.locator("video").first.scroll_into_view_if_needed()  # the first card
                page.screenshot(path=str(SHOTS / f"{stem}-{scheme}-{width}.png"))
        finally:
            browser.close()
    assert not errors, errors
    assert not outside, outside
