"""Whatever format a service sends is named right, measured right and shown: every format in
tests/_formats.py is sniffed, probed and embedded, and the embedded bytes are what every
notebook front end plays (H.264 8-bit 4:2:0 MP4 with MP3 audio or none; images of a type
browsers show). A service that is not our emulator, sending them all as
application/octet-stream, gets each kept whole under its right extension."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
from _formats import FORMATS, IMAGES, VIDEOS, Format, jpeg_exif_rotated, png_16bit
from genlab.history import History
from genlab.media import (
    IMAGE_SUFFIXES,
    PROVENANCE_FORMATS,
    VIDEO_SUFFIXES,
    MediaInfo,
    probe,
    read_provenance,
    sniff,
)
from genlab.media.preview import BROWSER_IMAGES, embed, plays_everywhere

pytest.importorskip("av")
pytest.importorskip("PIL")

IDS = [f.name for f in FORMATS]


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_each_format_is_sniffed_by_its_content(fmt: Format) -> None:
    found = sniff(fmt.make()[:64])
    assert found is not None and (found.mime, found.extension) == (fmt.mime, fmt.extension)
    suffixes = VIDEO_SUFFIXES if fmt.mime.startswith("video/") else IMAGE_SUFFIXES
    assert fmt.extension in suffixes


@pytest.mark.parametrize(
    ("head", "mime", "extension"),
    [
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic", "image/heic", ".heic"),
        (b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic", "image/heic", ".heic"),
        (b"\x00\x00\x00\x1cftypavis\x00\x00\x00\x00avismsf1miaf", "image/avif", ".avif"),
        (b"\x00\x00\x00\x1cftypmif1\x00\x00\x00\x00mif1avifmiaf", "image/avif", ".avif"),
        (b"\x00\x00\x00\x1cftypdash\x00\x00\x00\x00iso6mp41", "video/mp4", ".mp4"),
        (b"\x00\x00\x00\x1cftypiso5\x00\x00\x02\x00iso5iso6", "video/mp4", ".mp4"),
        (b"MM\x00*\x00\x00\x00\x08", "image/tiff", ".tiff"),
        (b"BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00", "image/bmp",
         ".bmp"),
        (b"\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x88matroska",
         "video/x-matroska", ".mkv"),
        (b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm", "video/webm",
         ".webm"),
        (b"ID3\x04\x00\x00\x00\x00\x00\x00", "audio/mpeg", ".mp3"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", "audio/wav", ".wav"),
        (b"OggS\x00\x02", "audio/ogg", ".ogg"),
        (b"BMP is not a bitmap", None, None),
    ],
)
def test_formats_without_a_fixture_are_sniffed_from_their_headers(
    head: bytes, mime: str | None, extension: str | None
) -> None:
    found = sniff(head)
    assert (found or (None, None)) == (mime, extension)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_probe_reads_each_formats_facts(fmt: Format) -> None:
    data = fmt.make()
    info = probe(data)
    assert (info.kind, info.mime, info.extension, info.bytes) == (
        fmt.mime.split("/")[0], fmt.mime, fmt.extension, len(data))
    for name, expected in fmt.facts.items():
        got = getattr(info, name)
        assert (got == pytest.approx(expected, rel=0.05) if isinstance(expected, float)
                else got == expected), (name, got, expected)
    if info.kind == "video":
        assert info.duration and info.duration > 0 and info.fps and info.frames
        assert info.pix_fmt and info.bit_depth in (8, 10)
        assert info.has_audio == ("audio_codec" in fmt.facts)
    assert MediaInfo.from_dict(json.loads(json.dumps(info.to_dict()))) == info


def test_probe_never_raises_on_bytes_it_cannot_read(tmp_path: Path) -> None:
    truncated = VIDEOS[0].make()[:300]
    info = probe(truncated)
    assert (info.kind, info.extension, info.bytes, info.width) == ("video", ".mp4", 300, None)
    assert probe(b"").bytes == 0 and probe(b"").kind is None
    path = tmp_path / "x.tiff"
    path.write_bytes(next(f for f in IMAGES if f.name == "tiff").make())
    assert probe(path).width == 60  # a path reads as its bytes


def test_facts_from_a_newer_journal_are_read_and_unknown_keys_ignored() -> None:
    journaled = {"kind": "video", "width": 640, "fps": "24", "has_audio": 1,
                 "hdr": "pq", "kind_of_audio": "spatial", "bytes": None}
    info = MediaInfo.from_dict(journaled)
    assert (info.kind, info.width, info.fps, info.has_audio, info.bytes) == (
        "video", 640, 24.0, True, 0)


def _facts(data: bytes) -> Any:
    import av

    with av.open(io.BytesIO(data)) as container:
        container_name = container.format.name
    return probe(data), container_name


@pytest.mark.parametrize("fmt", VIDEOS, ids=[f.name for f in VIDEOS])
def test_every_video_is_embedded_as_h264_mp4_with_mp3_or_no_audio(fmt: Format) -> None:
    data = fmt.make()
    shown = embed(data)
    assert shown.kind == "video" and shown.mime == "video/mp4" and shown.note is None
    info, container_name = _facts(shown.data)
    assert "mp4" in container_name
    assert (info.video_codec, info.pix_fmt, info.bit_depth) == ("h264", "yuv420p", 8)
    assert info.width and info.height and info.width % 2 == 0 and info.height % 2 == 0
    assert info.audio_codec == ("mp3" if "audio_codec" in fmt.facts else None)
    assert plays_everywhere(info)
    assert shown.poster is not None and shown.poster.startswith(b"\xff\xd8\xff")
    if not plays_everywhere(probe(data)):  # re-encoded: the index is first, display size
        assert shown.data.index(b"moov") < shown.data.index(b"mdat")
        assert info.width <= 640


def test_a_video_that_already_plays_everywhere_is_embedded_as_it_is() -> None:
    data = next(f for f in VIDEOS if f.name == "h264+mp3").make()
    assert embed(data).data == data


def test_a_4k_60fps_video_becomes_a_small_30fps_preview() -> None:
    data = next(f for f in VIDEOS if f.name == "4k60").make()
    info = probe(embed(data).data)
    assert (info.width, info.height) == (640, 360)
    assert info.fps == pytest.approx(30, rel=0.05)


@pytest.mark.parametrize("fmt", IMAGES, ids=[f.name for f in IMAGES])
def test_every_image_is_embedded_in_a_type_browsers_show(fmt: Format) -> None:
    shown = embed(fmt.make())
    assert shown.kind == "image" and shown.mime in BROWSER_IMAGES and shown.note is None
    assert sniff(shown.data[:64]) is not None and sniff(shown.data[:64]).mime == shown.mime  # type: ignore[union-attr]
    if fmt.mime in BROWSER_IMAGES:
        assert shown.data == fmt.make()  # small, and shown as it is: no re-encode
    else:
        assert probe(shown.data).width == fmt.facts["width"]


def test_an_image_preview_is_turned_upright_by_its_exif_orientation() -> None:
    from PIL import Image

    shown = embed(jpeg_exif_rotated(), fit_images=True, width=30)  # forces a preview
    with Image.open(io.BytesIO(shown.data)) as image:
        assert image.size == (30, 45)  # stored 60 x 40, shown a quarter turn: 40 x 60
        assert image.getexif().get(0x0112, 1) == 1


def test_a_16bit_png_preview_keeps_its_picture() -> None:
    from PIL import Image

    shown = embed(png_16bit(), fit_images=True, width=30)
    with Image.open(io.BytesIO(shown.data)) as image:
        assert image.size == (30, 20)
        left, right = image.convert("L").getpixel((0, 10)), image.convert("L").getpixel((29, 10))
        assert isinstance(left, int) and isinstance(right, int) and right > left + 100


def test_a_large_video_preview_is_shown_by_its_first_frame() -> None:
    data = next(f for f in VIDEOS if f.name == "hevc").make()
    shown = embed(data, max_bytes=100)
    assert shown.kind is None and shown.poster is not None
    assert shown.note is not None and "too large to embed" in shown.note


# --- a service that is not our emulator ------------------------------------------------------


def _service(formats: list[Format], kind: str) -> httpx.MockTransport:
    """A service whose CDN sends every file as application/octet-stream, at URLs without a
    suffix; each task id names the format it returns."""
    by_name = {f.name: f for f in formats}
    model = "image-b" if kind == "images" else "video-a"
    created: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.host == "cdn.example":
            name = request.url.path.rsplit("/", 1)[-1]
            return httpx.Response(200, content=by_name[name].make(),
                                  headers={"content-type": "application/octet-stream"})
        if request.method == "POST":
            task_id = formats[len(created)].name
            created.append(task_id)
            return httpx.Response(200, json={"task_id": task_id, "model": model})
        task_id = request.url.path.rsplit("/", 1)[-1]
        return httpx.Response(200, json={
            "task_id": task_id, "status": "succeeded", "model": model,
            kind: [{"url": f"https://cdn.example/o/{task_id}"}]})

    return httpx.MockTransport(handle)


@pytest.mark.parametrize(
    ("formats", "kind", "request_body"),
    [
        (IMAGES, "images", {"model": "image-b", "prompt": "a kite in every format"}),
        (VIDEOS, "videos", {"model": "video-a", "prompt": "a fox in every format",
                            "duration": 2, "resolution": "480P"}),
    ],
    ids=["images", "videos"],
)
def test_a_service_sending_octet_streams_gets_each_file_kept_whole_under_its_extension(
    formats: list[Format], kind: str, request_body: dict[str, Any],
    client_options: dict[str, Any], tmp_path: Path,
) -> None:
    history = History(tmp_path / "history.sqlite")
    carried = {f.mime for f in PROVENANCE_FORMATS}
    try:
        with genlab.Client("http://svc", "k", history=history, transport=_service(formats, kind),
                           **client_options) as client:
            for fmt in formats:
                record = client.generate(request_body)
                (kept,) = [Path(p) for p in record.kept if not str(p).endswith(".json")]
                original = fmt.make()
                assert kept.suffix == fmt.extension, fmt.name
                saved = kept.read_bytes()
                if fmt.mime in carried:  # the request is inside the file; the media unchanged
                    facts = read_provenance(saved)
                    assert facts is not None and facts["prompt"] == request_body["prompt"]
                    assert probe(saved).to_dict() | {"bytes": 0} == (
                        probe(original).to_dict() | {"bytes": 0}), fmt.name
                else:  # no place for it: the very bytes the service sent
                    assert saved == original, fmt.name
                    assert read_provenance(saved) is None
    finally:
        history.close()
