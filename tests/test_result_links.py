"""A result that was not kept still shows itself: a client without a history keeps nothing,
so its card shows the media from the service's own links (never the API key), says when
those links expire and how to keep the result; a kept result shows its kept preview."""

from __future__ import annotations

import html.parser
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

import genlab
from genlab.emulator import EmulatorHandle, ProfileHandle, start_profile

IMAGE = {"model": "image-b", "prompt": "a red kite over the dunes"}
VIDEO = {"model": "video-a", "prompt": "waves at dusk", "duration": 2, "resolution": "480P"}
KEY = "sk-links-test-0b7d1"


class Media(html.parser.HTMLParser):
    """The media elements of a page as a browser reads them (attributes unescaped)."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("img", "video"):
            self.elements.append((tag, dict(attrs)))

    def sources(self, tag: str) -> list[str | None]:
        return [attrs.get("src") for name, attrs in self.elements if name == tag]


def no_key_in(page: str, key: str) -> None:
    assert key not in page
    assert "authorization" not in page.lower() and "bearer" not in page.lower()


@pytest.fixture
def cdn() -> Iterator[ProfileHandle]:
    """The emulator with its media on a second origin, at signed links that expire."""
    with start_profile("cdn", api_key=KEY, time_scale=0.02, link_ttl=600) as service:
        yield service


def test_a_result_not_kept_shows_its_image_from_the_service_link(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with genlab.Client(client_server.base_url, client_server.api_key,
                       **client_options) as client:
        result = client.generate(IMAGE, progress=False)
    assert result.kept == ()
    page = result._repr_html_()
    url = result.images[0].url  # type: ignore[index]
    assert Media(page).sources("img") == [url]
    # The page's link is the service's own, and it serves the image to a browser (no key).
    answer = httpx.get(url, timeout=30)
    assert answer.status_code == 200 and answer.content.startswith(b"\x89PNG")
    # These links do not say when they expire; the card says they do, and how to keep them.
    assert "not kept here: the service&#x27;s links expire;" in page
    assert "client.download(result) saves its media" in page
    assert "a client with a history (genlab.connect()) keeps every result" in page
    no_key_in(page, client_server.api_key)


def test_a_video_not_kept_shows_from_its_signed_link_and_says_when_it_expires(
    cdn: ProfileHandle,
) -> None:
    with genlab.Client(cdn.base_url, KEY, poll_scale=0.02) as client:
        result = client.generate(VIDEO, progress=False)
    assert result.kept == ()
    video = result.videos[0]  # type: ignore[index]
    page = result._repr_html_()
    media = Media(page)
    assert media.sources("video") == [video.url]
    (attrs,) = [a for tag, a in media.elements if tag == "video"]
    assert attrs["poster"] == video.cover_url
    # The signed link says when it stops working; the card names that time.
    expires = float(parse_qs(urlsplit(video.url).query)["expires"][0])
    when = datetime.fromtimestamp(expires, UTC)
    assert f"the service&#x27;s links expire {when:%Y-%m-%d %H:%M} UTC" in page
    assert "client.download(result) saves its media" in page
    no_key_in(page, KEY)


def test_a_card_drawn_after_its_links_expired_says_so_and_how_to_get_the_media(
    tmp_path: Path,
) -> None:
    with start_profile("cdn", api_key=KEY, time_scale=0.02, link_ttl=0.5) as service, \
            genlab.Client(service.base_url, KEY, poll_scale=0.02) as client:
        result = client.generate(IMAGE, progress=False)
        expires = result.links_expire
        assert expires is not None
        time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds()) + 0.2)
        page = result._repr_html_()
        assert f"links expired {expires:%Y-%m-%d %H:%M} UTC" in page
        assert "client.download(result) fetches fresh links and saves its media" in page
        (saved,) = [p for p in client.download(result, tmp_path) if p.suffix == ".png"]
    assert saved.read_bytes().startswith(b"\x89PNG")


def test_a_kept_result_embeds_its_kept_preview_not_the_link(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
) -> None:
    with genlab.Client(client_server.base_url, client_server.api_key, keep=tmp_path / "kept",
                       **client_options) as client:
        result = client.generate(IMAGE, progress=False)
    assert result.kept
    page = result._repr_html_()
    url = result.images[0].url  # type: ignore[index]
    (source,) = Media(page).sources("img")
    assert source is not None and source.startswith("data:image/png;base64,")
    assert url not in page and "not kept here" not in page
    no_key_in(page, client_server.api_key)
