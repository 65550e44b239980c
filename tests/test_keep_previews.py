"""In a notebook, a kept video's preview is made when it is kept, in the background, so its
card is drawn from it; and a card drawn while that preview is still being made waits for it
instead of making it twice."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
import genlab.client._media as client_media
import genlab.media.preview as preview_module
from _formats import hevc_mp4
from genlab.history import History
from genlab.media.preview import video_preview

pytest.importorskip("av")

BOUND = 120.0  # seconds: a bound on a wait that only a broken build reaches, not a timing


class CountingEncode:
    """Wraps the preview encoder: counts encodes, says which thread made each, and can hold
    them at a gate."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, gated: bool = False) -> None:
        self.real = preview_module._encode
        self.threads: list[str] = []
        self.started = threading.Event()
        self.gate = threading.Event()
        if not gated:
            self.gate.set()
        monkeypatch.setattr(preview_module, "_encode", self)

    def __call__(self, data: bytes, width: int) -> bytes:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self.gate.wait(BOUND)
        made: bytes = self.real(data, width)
        return made


@pytest.fixture(autouse=True)
def _cold_cache() -> None:
    with preview_module._cache_lock:
        preview_module._cache.clear()


def _service(data: bytes) -> httpx.MockTransport:
    """A service whose one video task answers ``data`` (HEVC: it needs a preview)."""
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.host == "cdn.example":
            return httpx.Response(200, content=data, headers={"content-type": "video/mp4"})
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t-hevc", "model": "video-a"})
        return httpx.Response(200, json={
            "task_id": "t-hevc", "status": "succeeded", "model": "video-a",
            "videos": [{"url": "https://cdn.example/o/t-hevc"}]})

    return httpx.MockTransport(handle)


def test_in_a_notebook_a_kept_video_has_its_preview_made_before_its_card_is_drawn(
    monkeypatch: pytest.MonkeyPatch, client_options: dict[str, Any], tmp_path: Path,
) -> None:
    monkeypatch.setattr(client_media, "shows_cards", lambda: True)  # as in a Jupyter kernel
    encode = CountingEncode(monkeypatch)
    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client("http://svc", "k", history=history, transport=_service(hevc_mp4()),
                           **client_options) as client:
            result = client.generate(model="video-a", prompt="a fox", duration=2,
                                     resolution="480P")
        assert encode.started.wait(BOUND)  # nobody drew the card: the keeping made it
        page = result._repr_html_()
    finally:
        history.close()
    assert "<video" in page and "data:video/mp4;base64," in page
    assert encode.threads == ["genlab-previews"]  # the card used that one, made once


def test_a_script_makes_no_previews_it_will_not_show(
    monkeypatch: pytest.MonkeyPatch, client_options: dict[str, Any], tmp_path: Path,
) -> None:
    encode = CountingEncode(monkeypatch)
    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client("http://svc", "k", history=history, transport=_service(hevc_mp4()),
                           **client_options) as client:
            result = client.generate(model="video-a", prompt="a fox", duration=2,
                                     resolution="480P")
    finally:
        history.close()
    assert result.paths and encode.threads == []
    assert "<video" in result._repr_html_()  # drawn on demand, as before
    assert encode.threads == ["MainThread"]


def test_a_card_drawn_while_its_preview_is_being_made_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encode = CountingEncode(monkeypatch, gated=True)
    data = hevc_mp4()
    made: dict[str, bytes] = {}

    def make(name: str) -> None:
        made[name] = video_preview(data)

    first = threading.Thread(target=make, args=("keeping",), name="keeping")
    first.start()
    assert encode.started.wait(BOUND)  # the first is making it, held at the gate
    second = threading.Thread(target=make, args=("card",), name="card")
    second.start()
    second.join(0.5)
    assert second.is_alive()  # the card waits for the preview in the making
    encode.gate.set()
    first.join(BOUND)
    second.join(BOUND)
    assert encode.threads == ["keeping"]
    assert made["card"] == made["keeping"] and made["card"] != data


def test_a_batch_makes_no_previews_at_keep_time(
    monkeypatch: pytest.MonkeyPatch, client_options: dict[str, Any], tmp_path: Path,
) -> None:
    """A map's or a grid's results are drawn later, as tiles, if at all: keeping them makes
    no previews in the background (a batch of many would only evict each other)."""
    monkeypatch.setattr(client_media, "shows_cards", lambda: True)  # as in a Jupyter kernel
    encode = CountingEncode(monkeypatch)
    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client("http://svc", "k", history=history, transport=_service(hevc_mp4()),
                           **client_options) as client:
            [outcome] = client.map([{"model": "video-a", "prompt": "a fox", "duration": 2,
                                     "resolution": "480P"}])
    finally:
        history.close()
    assert outcome.record is not None and outcome.record.paths
    assert encode.threads == []


def test_a_card_never_hangs_on_a_preview_stuck_in_the_making(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(preview_module, "_WAIT_FOR_MAKER", 0.2)
    encode = CountingEncode(monkeypatch, gated=True)
    data = hevc_mp4()
    first = threading.Thread(target=video_preview, args=(data,), name="stuck")
    first.start()
    assert encode.started.wait(BOUND)  # held at its gate until the end of the test
    stuck_gate = encode.gate
    encode.gate = threading.Event()  # the card's own encode, if it makes one, is not held
    encode.gate.set()
    card: list[bytes] = []
    waiter = threading.Thread(target=lambda: card.append(video_preview(data)), name="card")
    waiter.start()
    waiter.join(BOUND)
    assert not waiter.is_alive() and card and card[0] != data
    assert encode.threads == ["stuck", "card"]
    stuck_gate.set()
    first.join(BOUND)
