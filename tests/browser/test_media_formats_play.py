"""What genlab embeds for every format a service may send plays in a real browser: one page
holds each format's :func:`genlab.media.preview.embed` as a data URI (``<video muted>`` or
``<img>``), Debian's Chromium opens it, and every video reaches ``readyState >= 2`` (its first
frame is decoded) and every image has a natural width. Run with ``make test-browser``.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

from genlab.display import escape
from genlab.media.preview import embed

from ._lab import CHROMIUM, ROOT, chromium

sys.path.insert(0, str(ROOT / "tests"))
from _formats import FORMATS  # noqa: E402

pytestmark = pytest.mark.browser

BUILD = ROOT / "build" / "browser-media-formats"

_STATES = """
async (patience) => {
  const settle = (el) => new Promise((done) => {
    setTimeout(done, patience);  // a video that never decodes is reported, not waited for
    if (el.tagName === 'IMG') {
      if (el.complete) return done();
      el.addEventListener('load', done); el.addEventListener('error', done); return;
    }
    if (el.readyState >= 2) return done();
    el.addEventListener('loadeddata', done); el.addEventListener('error', done);
  });
  const media = [...document.querySelectorAll('[data-format]')];
  await Promise.all(media.map(settle));
  return media.map((el) => ({
    name: el.dataset.format,
    tag: el.tagName,
    ready: el.tagName === 'VIDEO' ? el.readyState : null,
    error: el.error ? el.error.message || String(el.error.code) : null,
    width: el.tagName === 'IMG' ? el.naturalWidth : el.videoWidth,
  }));
}
"""


def _page(folder: Path) -> Path:
    rows = []
    for fmt in FORMATS:
        shown = embed(fmt.make())
        assert shown.kind in ("video", "image") and shown.mime, (fmt.name, shown.note)
        uri = f"data:{shown.mime};base64,{base64.b64encode(shown.data).decode()}"
        name = escape(fmt.name)
        if shown.kind == "video":
            element = (f'<video data-format="{name}" src="{uri}" muted playsinline '
                       'preload="auto"></video>')
        else:
            element = f'<img data-format="{name}" src="{uri}" alt="{name}">'
        rows.append(f"<figure>{element}<figcaption>{name}</figcaption></figure>")
    page = folder / "formats.html"
    page.write_text("<!doctype html><meta charset=utf-8><title>formats</title>"
                    + "".join(rows), encoding="utf-8")
    return page


def test_every_formats_embed_plays_in_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    BUILD.mkdir(parents=True, exist_ok=True)
    page_file = _page(BUILD)
    with sync_playwright() as p:
        browser = chromium(p, BUILD)
        try:
            page = browser.new_page()
            page.set_default_timeout(240_000)
            page.goto(page_file.as_uri())
            states = page.evaluate(_STATES, 120_000)  # a busy machine decodes slowly
        finally:
            browser.close()
    assert [s["name"] for s in states] == [f.name for f in FORMATS]
    failed = [s for s in states
              if (s["tag"] == "VIDEO" and (s["ready"] < 2 or s["error"])) or not s["width"]]
    assert failed == []
