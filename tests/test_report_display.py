"""What a person sees in cells: rich displays of tasks, records, outcomes, histories and
comparisons; formatted tables; galleries that fit; charts with any label; small previews."""

from __future__ import annotations

import io
import re
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

import genlab
from genlab import report
from genlab.catalog import result_of
from genlab.client import Outcome, Task, TaskRecord
from genlab.history import DisplayFrame, History

RECORD = {
    "task_id": "task_1", "status": "succeeded", "model": "video-a",
    "created_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:42.25Z",
    "videos": [{"url": "https://cdn.example/v.mp4", "width": 1280, "height": 720,
                "duration": 5, "cover_url": "https://cdn.example/c.png"}],
}


def clip(path: Path, width: int, height: int, frames: int = 24) -> Path:
    """A short clip with detail (noise) in every frame, at a camera-like bitrate."""
    import av
    import numpy as np

    rng = np.random.default_rng(1)
    with av.open(str(path), mode="w") as out:
        stream = out.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "18", "preset": "ultrafast"}
        for i in range(frames):
            image = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 24)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


# --- records, tasks, outcomes ---------------------------------------------------------------


def test_a_result_in_a_cell_is_one_card_and_a_short_repr() -> None:
    record = TaskRecord.model_validate(RECORD)
    assert repr(record) == (
        "TaskRecord(task_id='task_1', status='succeeded', model='video-a', videos=1, "
        "seconds=42.2)"
    )
    assert not hasattr(record, "_repr_html_")  # a bare wire record is no result: no card
    result = result_of(record, {"model": "video-a", "prompt": "waves <at> dusk"})
    card = result._repr_html_()
    assert "succeeded" in card and "42.2 s" in card and "800 credits" in card
    assert "waves &lt;at&gt; dusk" in card and "duration 5" in card
    # Not kept: the media are shown from the service's links, which expire (these do not
    # say when), and the card says how to keep them.
    assert '<video controls playsinline autoplay muted preload="auto" ' \
        'src="https://cdn.example/v.mp4" poster="https://cdn.example/c.png">' in card
    assert "links expire;" in card and "client.download(result) saves its media" in card
    assert result._mime_() == ("text/html", card)  # marimo draws the same card
    failed = result_of(TaskRecord.model_validate(
        {"task_id": "t2", "status": "failed", "error": {"code": "E", "message": "<b>no</b>"}}
    ))
    assert "&lt;b&gt;no&lt;/b&gt;" in failed._repr_html_() and "<b>no</b>" not in (
        failed._repr_html_()
    )
    assert len(repr(failed)) < 120


def test_a_task_and_an_outcome_display_briefly() -> None:
    task = Task(task_id="task_9", model="image-b", request_id="req_" + "0" * 32,
                created_at="2026-01-01T00:00:00Z")
    assert repr(task) == "Task(task_id='task_9', model='image-b')"
    assert "task_9" in task._repr_html_() and "submitted" in task._repr_html_()
    done = Outcome(request={"model": "video-a"}, task=task,
                   record=result_of(TaskRecord.model_validate(RECORD)))
    assert done._repr_html_() == done.record._repr_html_()  # type: ignore[union-attr]
    refused = Outcome(request={"model": "video-a"}, error=genlab.InvalidParameterError("<x>"))
    assert repr(refused).startswith("Outcome(model='video-a', task_id=None, error=")
    assert "&lt;x&gt;" in refused._repr_html_()


# --- tables -------------------------------------------------------------------------------


def test_history_tables_show_rounded_seconds_whole_credits_and_dashes(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    try:
        frame = history.df()
        assert isinstance(frame, pd.DataFrame) and "No tasks yet" in history._repr_html_()
    finally:
        history.close()
    data = pd.DataFrame({
        "model": ["video-a", "image-b"],
        "credits": pd.array([800, None], dtype="Int64"),
        "total_seconds": pd.array([12.3456, None], dtype="Float64"),
        "submitted_at": pd.to_datetime([1.7e9, 1.7e9 + 5], unit="s", utc=True),
    })
    shown = DisplayFrame(data)
    page = shown[["model", "credits", "total_seconds", "submitted_at"]]._repr_html_()
    cells = re.findall(r"<td [^>]*>([^<]*)</td>", page)
    assert cells[:4] == ["video-a", "800", "12.3", "2023-11-14 22:13:20"]
    assert cells[5:7] == ["–", "–"] and "&lt;NA&gt;" not in page and "nan" not in page
    pd.testing.assert_frame_equal(pd.DataFrame(shown), data)  # values untouched


# --- galleries ------------------------------------------------------------------------------


def test_gallery_fits_its_area_and_keeps_the_prompt_column(tmp_path: Path) -> None:
    video = clip(tmp_path / "t1.mp4", 320, 240, frames=4)
    png = io.BytesIO()
    from PIL import Image

    Image.new("RGB", (900, 600), "teal").save(png, "PNG")
    (tmp_path / "t2.png").write_bytes(png.getvalue())
    df = pd.DataFrame({
        "prompt": ["a fox", "a fox"], "model": ["video-a", "image-b"],
        "status": ["succeeded", "succeeded"], "task_id": ["t1", "t2"],
        "paths": [[str(video)], [str(tmp_path / "t2.png")]],
    })
    page = report.gallery_html(df)
    assert "overflow-x: auto" in page and "position: sticky" in page
    assert ".genlab-gallery .run { margin-bottom: 6px; width: 320px; }" in page
    assert f"width: {report.TILE_WIDTH}px" in page and report.TILE_WIDTH >= 320
    assert 'onplay="for(const v of this.closest(' in page  # a row's videos play together
    assert "onseeked=" in page
    assert re.search(r'<label for="genlab-z-[0-9a-f]+" title="click to enlarge"><img', page)


def test_chart_labels_are_text_never_mathtext() -> None:
    df = pd.DataFrame({
        "model": ["video-a", "video-a"], "tag": ["$5 budget", "a $x$ b $"],
        "status": ["succeeded", "succeeded"], "seconds": [3.0, 4.0],
    })
    figure = report.plot_summary(df, by=["model", "tag"])
    assert figure._repr_png_().startswith(b"\x89PNG")  # drawn: no ValueError from mathtext
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels == [r"video-a · \$5 budget", r"video-a · a \$x\$ b \$"]


# --- previews -------------------------------------------------------------------------------


def test_videos_are_embedded_as_display_size_previews(tmp_path: Path) -> None:
    import av

    original = clip(tmp_path / "task_big.mp4", 1280, 720)
    page = report.media_html([original])
    (encoded,) = re.findall(r'src="data:video/mp4;base64,([^"]+)"', page)
    import base64

    preview = base64.b64decode(encoded)
    assert len(preview) < original.stat().st_size / 4
    with av.open(io.BytesIO(preview)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.width == report.PREVIEW_WIDTH
        assert stream.codec_context.height == 360
        assert stream.codec_context.pix_fmt == "yuv420p" and stream.codec_context.name == "h264"
    assert "original: <code" in page and "task_big.mp4" in page


@pytest.mark.parametrize("data", [b"", b"\x00\x00\x00 ftypisom" + bytes(100)])
def test_an_unreadable_video_is_embedded_as_it_is(data: bytes) -> None:
    assert report.video_preview(data) == data


def _png_declaring(width: int, height: int) -> bytes:
    """A few-hundred-byte PNG whose header declares ``width`` x ``height`` (a bitmap bomb)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("size", [(40_000, 40_000), (8_000, 8_000)])
def test_an_image_declaring_a_huge_bitmap_is_never_embedded(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    from genlab import report

    bomb = tmp_path / "t1.png"
    bomb.write_bytes(_png_declaring(*size))
    page = report.media_html([bomb])
    assert "<img" not in page and "data:image" not in page
    assert "too large for a browser to decode here" in page


def test_a_one_prompt_gallery_wraps_its_columns_and_several_prompts_stay_a_table() -> None:
    models = ["video-a", "video-b", "video-c", "video-e", "video-f"]
    one = pd.DataFrame({
        "prompt": ["a <b>fox</b>"] * 5, "model": models, "status": ["failed"] * 5,
        "error": ["no"] * 5, "task_id": [f"t{i}" for i in range(5)],
    })
    page = report.gallery_html(one)
    heads = re.findall(r'<div class="genlab-cell"><div class="head"><b>([^<]*)</b>', page)
    assert heads == models  # every model is a cell of a wrapping row, in order
    assert "<table" not in page and "flex-wrap: wrap" in page
    assert '<div class="prompt">a &lt;b&gt;fox&lt;/b&gt;</div>' in page
    two = pd.concat([one, one.assign(prompt="a kite")])
    assert '<table class="genlab-grid">' in report.gallery_html(two)
    assert "<table" not in report.gallery_html(two, layout="wrap")
    with pytest.raises(ValueError, match="layout must be"):
        report.gallery_html(one, layout="grid")  # type: ignore[arg-type]


def test_a_written_report_shows_as_a_link_to_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runs = pd.DataFrame({"prompt": ["a fox"], "model": ["video-a"], "status": ["failed"]})
    path = report.write_report(runs, "out/r.html")
    page = path._repr_html_()
    assert '<a href="out/r.html" target="_blank"' in page and "Report written:" in page
    assert " MB)" in page and str(path) == "out/r.html" and path.path.read_text().startswith("<")
    outside = report.write_report(runs, tmp_path.parent / f"{tmp_path.name}-r.html")
    assert "<a " not in outside._repr_html_()  # outside the notebook's folder: named only
    # It is no Path, but goes where one goes, as when it was one.
    assert not isinstance(path, Path) and path == Path("out/r.html")
    assert path.name == "r.html" and path.exists() and path.read_text().startswith("<")
    assert path.parent == Path("out") and path / "x" == Path("out/r.html/x")
    with open(path) as opened:
        assert opened.read(1) == "<"
