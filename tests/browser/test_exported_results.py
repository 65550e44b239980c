"""Results in an HTML export (``jupyter nbconvert --to html``) of a notebook that made them:
in Chromium, every card's video plays and every image shows; with the ``<video>`` elements
removed (as GitHub's notebook view does), each video's poster and its original's link
remain, in the cards and in the comparison notebook's gallery and the experiment notebook's
grid alike (screenshots in build/browser-screens/)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from ._lab import ROOT, chromium

pytestmark = pytest.mark.browser

VIDEO = re.compile(r"<video\b[^>]*>.*?</video>", re.S)

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
    stripped = VIDEO.sub("", page)
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


# --- the comparison and experiment notebooks -----------------------------------------------

SCREENS = ROOT / "build" / "browser-screens"
NOTEBOOKS = {"compare": "03-compare-models.ipynb", "experiment": "07-prompt-experiments.ipynb"}
# The experiment notebook's matrix has video-a cells; one more cell, at its end, draws an
# experiment grid of videos alone.
VIDEO_GRID = (
    'clips = genlab.experiment(client, "kite-clips", prompts=[kite, kite2], models=["video-a"],\n'
    '                          vars={"subject": ["paper kite"], "place": "dunes"},\n'
    '                          params={"duration": 2}, seeds=[1, 2], max_credits=5_000)\n'
    "clips"
)
# Each video tile (a <figure> of the card's tiles) as the page shows it once <video> is gone.
VIDEO_TILES = """() => [...document.querySelectorAll('figure.genlab-media')]
  .filter(f => f.querySelector('img.genlab-poster'))
  .map(f => { const img = f.querySelector('img.genlab-poster');
              const link = f.querySelector('a[href]');
              const shown = e => !!e && e.getClientRects().length > 0
                && getComputedStyle(e).visibility !== 'hidden';
              return {poster: shown(img) && img.complete && img.naturalWidth > 0,
                      width: img.getBoundingClientRect().width,
                      href: link ? link.getAttribute('href') : null,
                      link: shown(link)}; })"""


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The comparison and experiment notebooks, each run in a folder of its own against the
    embedded emulator and exported by nbconvert next to what it kept: ``<name>.html``, and
    ``<name>-stripped.html`` without its ``<video>`` elements. Their folders, by name."""
    import nbclient
    import nbformat
    from nbconvert import HTMLExporter

    made: dict[str, Path] = {}
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("GENLAB_")}
    try:
        for name, file in NOTEBOOKS.items():
            folder = tmp_path_factory.mktemp(name)
            notebook = nbformat.read(ROOT / "notebooks" / file, as_version=4)
            if name == "experiment":
                notebook.cells.append(nbformat.v4.new_code_cell(VIDEO_GRID))
            nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                    resources={"metadata": {"path": str(folder)}}).execute()
            page, _ = HTMLExporter().from_notebook_node(notebook)
            (folder / f"{name}.html").write_text(page)
            (folder / f"{name}-stripped.html").write_text(VIDEO.sub("", page))
            made[name] = folder
    finally:
        os.environ.update(saved)
    return made


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_a_gallery_or_grid_export_without_video_keeps_each_first_frame_and_link(
    notebooks: dict[str, Path], name: str
) -> None:
    from playwright.sync_api import sync_playwright

    folder = notebooks[name]
    whole = (folder / f"{name}.html").read_text()
    # Every tile with a video: the comparison's gallery, the experiment's grids.
    # (a grid's tiles are figures of the card's tile frame: "genlab-media genlab-tile")
    expected = len(re.findall(
        r'<figure class="genlab-media(?: genlab-tile)?">(?:(?!</figure>).)*?<video\b',
        whole, flags=re.S))
    assert expected >= (5 if name == "compare" else 4)
    SCREENS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = chromium(p, folder / "build")
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 900})
            # While its video is there, a tile's first frame is hidden by the tiles' style.
            page.goto((folder / f"{name}.html").as_uri())
            assert page.evaluate(
                "() => [...document.querySelectorAll('img.genlab-poster')]"
                ".every(i => i.getClientRects().length === 0)")
            page.goto((folder / f"{name}-stripped.html").as_uri())
            assert page.locator("video").count() == 0
            page.wait_for_function(
                "() => [...document.querySelectorAll('img.genlab-poster')]"
                ".every(i => i.complete)", timeout=60_000)
            tiles = page.evaluate(VIDEO_TILES)
            assert len(tiles) == expected
            for tile in tiles:
                assert tile["poster"] and tile["width"] >= 100, tile
                assert tile["link"] and tile["href"].endswith(".mp4"), tile
                assert (folder / unquote(tile["href"])).is_file(), tile
            where = ".genlab-gallery" if name == "compare" else ".genlab-exp"
            shown = page.locator(where).filter(has=page.locator("img.genlab-poster")).last
            shown.scroll_into_view_if_needed()
            shown.screenshot(path=str(SCREENS / f"{name}-without-video.png"))
        finally:
            browser.close()


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_an_exports_original_link_gives_the_kept_file(
    notebooks: dict[str, Path], name: str
) -> None:
    """The export served as a web page (as a person shares one): a click on a tile's
    "original:" link downloads the kept file itself."""
    import functools
    import http.server

    from playwright.sync_api import sync_playwright

    from _loopback import serving

    folder = notebooks[name]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    with serving(handler) as url, sync_playwright() as p:
        browser = chromium(p, folder / "build")
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 900},
                                    accept_downloads=True)
            page.goto(f"{url}/{name}-stripped.html")
            link = page.locator("figure.genlab-media a[download][href$='.mp4']").first
            link.scroll_into_view_if_needed()
            with page.expect_download(timeout=60_000) as info:
                link.click()
            href = unquote(link.get_attribute("href") or "")
            assert info.value.suggested_filename == Path(href).name
            assert Path(info.value.path()).read_bytes() == (folder / href).read_bytes()
        finally:
            browser.close()
