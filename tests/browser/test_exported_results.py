"""Results in an HTML export (``jupyter nbconvert --to html``) of a notebook that made them:
in Chromium, every card's video plays and every image shows; with the ``<video>`` elements
removed (as GitHub's notebook view does), each video's poster and its original's link
remain."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ._lab import chromium

pytestmark = pytest.mark.browser

CELLS = [
    "import genlab\nclient = genlab.connect()",
    'client.generate(model="video-a", prompt="waves at dusk", duration=5)',
    'client.generate(model="image-b", prompt="a red kite")',
    'client.map([{"model": "video-a", "prompt": "a paper boat", "duration": 5},\n'
    '            {"model": "image-d", "prompt": "a lighthouse"}])',
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import nbclient
    import nbformat
    from nbconvert import HTMLExporter

    folder = tmp_path_factory.mktemp("export")
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("GENLAB_")}
    try:
        notebook = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell(c) for c in CELLS],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}},
        )
        nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        os.environ.update(saved)
    page, _ = HTMLExporter().from_notebook_node(notebook)
    (folder / "results.html").write_text(page)
    # GitHub's renderer drops <video> (and its contents) and keeps images and links.
    stripped = re.sub(r"<video\b[^>]*>.*?</video>", "", page, flags=re.S)
    (folder / "stripped.html").write_text(stripped)
    return folder


def test_an_export_plays_its_videos_and_shows_its_images(exported: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = chromium(p, exported / "build")
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 900})
            page.goto((exported / "results.html").as_uri())
            videos = page.locator(".genlab-record video")
            assert videos.count() == 2
            page.wait_for_function(
                "() => [...document.querySelectorAll('.genlab-record video')]"
                ".every(v => v.readyState >= 2)", timeout=60_000)
            images = page.locator(".genlab-record img:not(.genlab-poster)")
            assert images.count() == 2
            assert page.evaluate(
                "() => [...document.querySelectorAll('.genlab-record img')]"
                ".every(i => i.complete && i.naturalWidth > 0)")
            # While the video is there, its poster image is hidden by the card's style.
            assert page.locator("img.genlab-poster").first.is_hidden()
            page.screenshot(path=str(exported / "export.png"), full_page=True)
        finally:
            browser.close()


def test_where_video_is_stripped_a_poster_and_a_link_remain(exported: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = chromium(p, exported / "build")
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 900})
            page.goto((exported / "stripped.html").as_uri())
            assert page.locator("video").count() == 0
            posters = page.locator("img.genlab-poster")
            assert posters.count() == 2
            for i in range(2):
                poster = posters.nth(i)
                poster.scroll_into_view_if_needed()
                assert poster.is_visible()
                assert poster.evaluate("i => i.complete && i.naturalWidth > 0")
            links = page.locator(".genlab-record a", has_text=re.compile(r"\.mp4$"))
            assert links.count() == 2
        finally:
            browser.close()
