"""genlab.report: galleries, summaries, charts and one-file reports over any History slice."""

from __future__ import annotations

import base64
import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure
from PIL import Image

import genlab
from genlab import emulator, report
from genlab.history import History

KEY = "report-test-key-7d41"
HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture(scope="module")
def client(
    server: emulator.EmulatorHandle, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[genlab.Client]:
    h = History(tmp_path_factory.mktemp("history") / "history.sqlite")
    # keep=False: the journal below mixes saved and unsaved results on purpose
    with genlab.Client(server.base_url, KEY, history=h, poll_scale=0.02, wait_timeout=60,
                       keep=False) as c:
        yield c
    h.close()


@pytest.fixture(scope="module")
def history(
    server: emulator.EmulatorHandle,
    client: genlab.Client,
    tmp_path_factory: pytest.TempPathFactory,
) -> History:
    """A journal with a video, a downloaded video, an image and a failed image."""
    h = client.history
    assert isinstance(h, History)
    client.generate(model="video-a", prompt="a fox at dusk", duration=2, resolution="480P")
    saved = client.generate(model="video-a", prompt=HOSTILE, duration=3, resolution="480P")
    client.download(saved, tmp_path_factory.mktemp("media"))
    client.generate(model="image-d", prompt="a fox at dusk", resolution="512")
    server.faults.fail_rate = 1.0
    try:
        client.generate(model="image-d", prompt="doomed", resolution="512",
                        raise_on_failure=False)
    finally:
        server.faults.fail_rate = 0.0
    return h


def offline(url: str) -> bytes:
    raise AssertionError(f"fetched {url}")


def embedded(page: str, kind: str) -> list[bytes]:
    pattern = rf'<{kind} [^>]*src="data:[^;]+;base64,([A-Za-z0-9+/=]+)"'
    return [base64.b64decode(m) for m in re.findall(pattern, page)]


def test_the_gallery_works_on_a_history_slice(history: History, client: genlab.Client) -> None:
    page = report.gallery_html(history.df(), fetch=client.fetch_media)
    assert len(embedded(page, "video")) == 2
    # the image, and each video's first frame (shown where a host strips <video>)
    posters = page.count('<img class="genlab-poster" src="data:image/jpeg;base64,')
    assert len(embedded(page, "img")) == 1 + posters and posters == 2
    assert "data:video/mp4;base64," in page and "data:image/" in page
    assert "http://127.0.0.1" not in page
    # prompts down, models across: the fox prompt has a video and an image in one row
    fox_row = page.split('<th class="prompt">a fox at dusk</th>')[1].split("</tr>")[0]
    assert "<video" in fox_row and "<img" in fox_row
    failed = history.df(status="failed").iloc[0]
    assert "failed" in page and failed["error_message"] in page


def test_write_report_over_a_history_slice_is_one_self_contained_file(
    history: History, client: genlab.Client, tmp_path: Path
) -> None:
    path = report.write_report(
        history.df(model="video-a"), tmp_path / "video-a.html", fetch=client.fetch_media
    )
    text = path.path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "http://127.0.0.1" not in text and "<video" in text
    assert 'src="data:image/png;base64,' in text  # the charts
    assert "image-d" not in text  # only the slice


def test_prompts_and_service_strings_are_escaped(history: History) -> None:
    page = report.report_html(history.df(), title="<b>title</b>")
    assert HOSTILE not in page and "onerror=\"alert" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "<b>title</b>" not in page and "&lt;b&gt;title&lt;/b&gt;" in page


def test_saved_files_are_preferred_over_urls(history: History) -> None:
    saved = history.df()
    saved = saved[saved["paths"].notna()]
    assert len(saved) == 1
    page = report.gallery_html(saved, fetch=offline)
    assert len(embedded(page, "video")) == 1


def test_images_become_small_thumbnails(history: History, client: genlab.Client) -> None:
    page = report.gallery_html(history.df(model="image-d"), fetch=client.fetch_media)
    (thumb,) = embedded(page, "img")
    with Image.open(io.BytesIO(thumb)) as image:
        # From 512 x 512 to THUMB_WIDTH: sharp when enlarged, shown at TILE_WIDTH until then.
        assert image.size == (report.THUMB_WIDTH, report.THUMB_WIDTH) == (480, 480)


def test_a_large_video_is_shown_by_its_cover(history: History) -> None:
    saved = history.df()
    saved = saved[saved["paths"].notna()]
    page = report.gallery_html(saved, fetch=offline, max_embed_bytes=1_000)
    assert "<video" not in page
    assert len(embedded(page, "img")) == 1
    assert "too large to embed; showing its cover" in page


def test_unavailable_media_becomes_a_note(
    server: emulator.EmulatorHandle, client: genlab.Client
) -> None:
    df = pd.DataFrame(
        {
            "prompt": ["gone", "nowhere"],
            "model": ["video-a", "video-a"],
            "status": ["succeeded", "succeeded"],
            "result_url": [f"{server.base_url}/media/missing/video-0.mp4", None],
        }
    )
    page = report.gallery_html(df, fetch=client.fetch_media)
    assert "media unavailable (HTTP 404)" in page
    assert "no media saved or linked" in page
    assert "http://127.0.0.1" not in page


def test_media_is_fetched_once_per_cache(history: History, client: genlab.Client) -> None:
    calls: list[str] = []

    def counting(url: str) -> bytes:
        calls.append(url)
        return client.fetch_media(url)

    cache: dict[str, bytes] = {}
    df = history.df(model="image-d", status="succeeded")
    for _ in range(2):
        report.gallery_html(df, fetch=counting, cache=cache)
    assert len(calls) == 1


def test_submissions_without_a_task_show_their_state(tmp_path: Path) -> None:
    h = History(tmp_path / "h.sqlite")
    try:
        now = time.time()
        h.append_many(
            [
                {"entry_id": "e1", "model": "video-a", "kind": "video", "state": "refused",
                 "prompt": "too loud", "reason": "429 RATE_LIMITED: slow down",
                 "request": json.dumps({"model": "video-a"}), "submitted_at": now, "credits": 400},
                {"entry_id": "e2", "model": "video-a", "kind": "video", "state": "uncertain",
                 "prompt": "lost", "reason": "the connection dropped",
                 "request": json.dumps({"model": "video-a"}), "submitted_at": now + 1},
            ]
        )
        df = h.df()
    finally:
        h.close()
    summary = report.summarize(df)
    row = summary.loc["video-a"]
    assert (row["runs"], row["succeeded"], row["other"]) == (2, 0, 2)
    assert pd.isna(row["credits"])  # nothing was accepted, so nothing is billed
    page = report.gallery_html(df)
    assert "refused" in page and "429 RATE_LIMITED: slow down" in page
    assert "uncertain" in page and "the connection dropped" in page


def test_summarize_counts_latency_and_billed_credits(history: History) -> None:
    summary = report.summarize(history.df())
    assert list(summary.columns) == list(report.SUMMARY_COLUMNS)
    video, image = summary.loc["video-a"], summary.loc["image-d"]
    assert (video["runs"], video["succeeded"], video["credits"]) == (2, 2, 160 + 240)
    assert (image["runs"], image["succeeded"], image["failed"]) == (2, 1, 1)
    assert image["success_rate"] == 0.5 and image["unpriced"] == 2
    assert video["p50_seconds"] <= video["p95_seconds"]
    empty = report.summarize(history.df(model="video-f"))
    assert empty.empty and list(empty.columns) == list(report.SUMMARY_COLUMNS)


def test_plot_summary_returns_a_figure_with_two_axes(history: History) -> None:
    figure = report.plot_summary(history.df())
    assert isinstance(figure, Figure) and len(figure.axes) == 2
    assert figure.axes[0].get_ylabel() == "seconds" and figure.axes[1].get_ylabel() == "credits"
    # a notebook shows it as a PNG even without pyplot's inline backend
    assert figure._repr_png_().startswith(b"\x89PNG")  # type: ignore[attr-defined]
    empty = report.plot_summary(history.df(model="video-f"))
    assert len(empty.axes) == 2


def test_only_http_media_is_fetched(client: genlab.Client) -> None:
    df = pd.DataFrame(
        {"prompt": ["local"], "model": ["image-d"], "status": ["succeeded"],
         "result_url": ["file:///etc/passwd"]}
    )
    page = report.gallery_html(df, fetch=client.fetch_media)
    assert "media unavailable (" in page and "root:" not in page
    assert "<img" not in page and "file:///etc/passwd" not in page


def test_without_a_fetch_nothing_is_fetched_and_unsaved_media_gets_a_note(
    history: History,
) -> None:
    # Reports make no HTTP requests of their own: media come from saved files or a fetch.
    page = report.gallery_html(history.df())
    assert len(embedded(page, "video")) == 1  # the downloaded one, from its file
    # The image was never saved, and its URL is not fetched: the only image is the video's
    # first frame.
    assert page.count("<img") == page.count('<img class="genlab-poster"') == 1
    assert page.count("not saved; pass fetch=client.fetch_media") == 2


def test_media_html_embeds_saved_files_within_the_reports_limit(tmp_path: Path) -> None:
    png = io.BytesIO()
    Image.new("RGB", (640, 360), "navy").save(png, "PNG")
    cover = io.BytesIO()
    Image.new("RGB", (640, 360), "teal").save(cover, "JPEG")
    small = tmp_path / "t1.mp4"
    small.write_bytes(b"\x00\x00\x00 ftypisom" + bytes(1000))
    frame = tmp_path / "t1_last_frame.png"
    frame.write_bytes(png.getvalue())
    sidecar = tmp_path / "t1.json"
    sidecar.write_text("{}")
    page = report.media_html([small, frame, sidecar])
    assert re.search(r'<video controls[^>]* src="data:video/mp4;base64,', page)
    assert '<img src="data:image/png;base64,' in page and "last frame" in page
    assert embedded(page, "img") == [png.getvalue()]  # images within the limit: as they are

    large = tmp_path / "t2.mp4"
    large.write_bytes(b"\x00\x00\x00 ftypisom" + bytes(report.MAX_EMBED_BYTES))
    (tmp_path / "t2_cover.jpg").write_bytes(cover.getvalue())
    page = report.media_html([large, tmp_path / "t2_cover.jpg"])
    assert "<video" not in page and len(embedded(page, "img")) == 1
    assert "t2.mp4: video is 5.2 MB, too large to embed; showing its cover" in page
    page = report.media_html([large])
    assert "<video" not in page and "<img" not in page
    assert "too large to embed, and it has no cover" in page
