"""Where a host strips ``<video>`` (GitHub's notebook view, HTML sanitisers), every video tile
keeps its first frame and a link to its original: in a comparison's gallery, an experiment's
grid and a report's decisive pairs, built from videos the client kept."""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from PIL import Image

import genlab
from genlab.emulator import EmulatorHandle
from genlab.history import History, RatingEntry
from genlab.report import report_html, write_report

VIDEO = re.compile(r"<video\b[^>]*>.*?</video>", re.S)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@dataclass
class Tile:
    """One ``<figure class="genlab-media">``: what a person sees of one media item."""

    within: set[str]
    video: bool = False
    images: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


class _Tiles(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tiles: list[Tile] = []
        self._open: list[tuple[str, set[str]]] = []
        self._tile: Tile | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = set((values.get("class") or "").split())
        if tag == "figure" and "genlab-media" in classes:
            self._tile = Tile(within=set().union(*(c for _, c in self._open)))
            self.tiles.append(self._tile)
        elif self._tile is not None:
            if tag == "video":
                self._tile.video = True
            elif tag == "img" and values.get("src"):
                self._tile.images.append(str(values["src"]))
            elif tag == "a" and values.get("href"):
                self._tile.links.append(str(values["href"]))
        if tag not in VOID:
            self._open.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self._tile = None
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                break


def tiles(page: str) -> list[Tile]:
    parser = _Tiles()
    parser.feed(page)
    parser.close()
    return parser.tiles


def stripped_video_tiles(page: str) -> list[Tile]:
    """The tiles that had a video, as they are once every ``<video>`` is removed."""
    before, after = tiles(page), tiles(VIDEO.sub("", page))
    assert len(before) == len(after)
    assert not any(t.video for t in after)
    return [a for b, a in zip(before, after, strict=True) if b.video]


def image_size(uri: str) -> tuple[int, int]:
    head, _, data = uri.partition(",")
    assert head.startswith("data:image/") and head.endswith(";base64"), head[:40]
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        image.load()
        return image.size


def assert_frame_and_link(tile: Tile, folder: Path) -> None:
    """The tile shows a decodable image and links its kept video, found from ``folder``."""
    sizes = [image_size(src) for src in tile.images]
    assert sizes and all(w > 0 and h > 0 for w, h in sizes), tile.images
    assert len(tile.links) == 1, tile.links
    href = unquote(tile.links[0])
    assert not href.startswith(("/", "http:", "https:", "file:", "data:")), href
    assert href.endswith(".mp4") and (folder / href).is_file(), href


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The notebook's folder: a kernel runs in it, and its outputs' links start there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def client(client_server: EmulatorHandle, client_key: str, client_options: dict[str, Any],
           notebook: Path) -> Iterator[genlab.Client]:
    """A client keeping its results beside its history, in a folder of the notebook's."""
    history = History(notebook / "runs" / "history.sqlite")
    with genlab.Client(client_server.base_url, client_key, history=history,
                       **client_options) as made:
        yield made
    history.close()


def test_a_gallerys_videos_keep_their_first_frame_and_link_without_video(
    client: genlab.Client, notebook: Path
) -> None:
    cmp = genlab.compare(client, prompts=["a paper lantern over a river", "a fox in snow"],
                         models=["video-a", "image-d"], params={"duration": 2}, progress=False)
    assert set(cmp.df["status"]) == {"succeeded"}
    for layout in ("wrap", "table"):
        page = str(cmp.gallery(layout=layout).data)
        shown = stripped_video_tiles(page)
        assert len(shown) == 2
        for tile in shown:
            assert "genlab-gallery" in tile.within
            assert_frame_and_link(tile, notebook)
    # The images' tiles link their originals too.
    links = [t.links for t in tiles(page) if not t.video]
    assert len(links) == 2 and all(len(found) == 1 for found in links)


def test_an_experiment_grids_videos_keep_their_first_frame_and_link_without_video(
    client: genlab.Client, notebook: Path
) -> None:
    assert client.history is not None
    clip = genlab.prompt("A {subject} turning", name="clip", history=client.history)
    exp = genlab.experiment(client, "clips", prompts=[clip], models=["video-a"],
                            vars={"subject": ["kite", "top"]}, params={"duration": 2},
                            seeds=[1, 2], quiet=True, progress=False)
    for page in (exp._repr_html_(), str(exp.show(columns="model").data)):
        shown = stripped_video_tiles(page)
        assert len(shown) == 4
        for tile in shown:
            assert "genlab-exp" in tile.within
            assert_frame_and_link(tile, notebook)
    # Saved as a page in a folder of its own: its links start from that folder.
    saved = exp.to_html(notebook / "genlab-output" / "clips.html")
    shown = stripped_video_tiles(saved.read_text(encoding="utf-8"))
    assert len(shown) == 4
    for tile in shown:
        assert tile.links[0].startswith("../")
        assert_frame_and_link(tile, saved.parent)


def test_a_reports_decisive_pairs_keep_their_first_frame_and_link_without_video(
    client: genlab.Client, notebook: Path
) -> None:
    cmp = genlab.compare(client, prompts=["a paper lantern over a river"],
                         models=["video-a", "video-b"], params={"duration": 4},
                         repeats=2, progress=False)
    assert set(cmp.df["status"]) == {"succeeded"}
    assert cmp.history is not None
    a = cmp.df[cmp.df["model"] == "video-a"]["task_id"].tolist()
    b = cmp.df[cmp.df["model"] == "video-b"]["task_id"].tolist()
    for left, right in zip(a, b, strict=True):
        cmp.history.add_rating(RatingEntry(left, right, "left", left_model="video-a",
                                           right_model="video-b", prompt_address="x"))

    # Shown from the notebook: links start at its folder.
    page = report_html(cmp.df, ratings=cmp.ratings(), cols=cmp.columns)
    shown = stripped_video_tiles(page)
    pairs = [t for t in shown if "genlab-decisive" in t.within]
    gallery = [t for t in shown if "genlab-gallery" in t.within]
    assert len(pairs) >= 2 and len(gallery) == 4
    for tile in shown:
        assert_frame_and_link(tile, notebook)

    # Written beside the kept files: its links start at its own folder.
    written = write_report(cmp.df, notebook / "runs" / "report.html", ratings=cmp.ratings())
    shown = stripped_video_tiles(written.path.read_text(encoding="utf-8"))
    assert len(shown) == len(pairs) + len(gallery)
    for tile in shown:
        assert_frame_and_link(tile, written.path.parent)
