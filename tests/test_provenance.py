"""Provenance in every kept file: what made it travels inside it, and genlab.inspect reads it.

Files are real (the emulator's renderer, Pillow, PyAV); after stamping they are decoded the
way a viewer or a player would, and must show the same pixels and play the same samples.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import os
import shutil
import stat
import time
import zlib
from pathlib import Path
from typing import Any

import av
import httpx
import pytest
from PIL import Image

import genlab
from genlab import AsyncClient, History, media
from genlab.catalog import content_address, media_digest
from genlab.emulator._render import render_image, render_test_video, render_video
from genlab.media._carriers import BOX_UUID, JPEG_SEGMENT_MAX
from genlab.media._provenance import API_KEY_ENV, encode

LONG_PROMPT = "a red kite over the dunes at dusk, " * 30


def facts(task_id: str = "t1", **request: Any) -> dict[str, Any]:
    body = {"model": "image-b", "prompt": "a red kite", **request}
    return media.provenance_for(genlab.validate(body) if not request else body,
                                task_id=task_id, address="a" * 64)


def png() -> bytes:
    return render_image(96, 64, lines=["a red kite"], seed=1)


def converted(fmt: str, *, mode: str = "RGB", **options: Any) -> bytes:
    picture = Image.open(io.BytesIO(png())).convert(mode)
    if mode == "RGBA":  # real transparency, so the bitstream says it has alpha
        picture.putpixel((0, 0), (255, 0, 0, 0))
    out = io.BytesIO()
    picture.save(out, fmt, **options)
    return out.getvalue()


def jpeg_with_exif() -> bytes:
    exif = Image.Exif()
    exif[0x010E] = "a description"  # ImageDescription
    return converted("JPEG", exif=exif)


FOREIGN_XMP = (
    b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
    b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    b'<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
    b"<dc:source>the service</dc:source></rdf:Description></rdf:RDF></x:xmpmeta>"
    b'<?xpacket end="w"?>'
)

IMAGES = {
    "png": png,
    "jpeg": lambda: converted("JPEG"),
    "jpeg-exif": jpeg_with_exif,
    "webp-lossy": lambda: converted("WEBP", quality=80),
    "webp-lossless-alpha": lambda: converted("WEBP", mode="RGBA", lossless=True),
    "webp-with-xmp": lambda: converted("WEBP", xmp=FOREIGN_XMP),
}


def png_crcs_hold(data: bytes) -> bool:
    """Every chunk's CRC is right (what pngcheck checks; Pillow skips it for text chunks)."""
    pos = 8
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        body = data[pos + 4 : pos + 8 + length]
        if zlib.crc32(body) != int.from_bytes(data[pos + 8 + length : pos + 12 + length], "big"):
            return False
        pos += 12 + length
    return True


def pixels(data: bytes) -> tuple[str, tuple[int, int], bytes]:
    with Image.open(io.BytesIO(data)) as picture:
        picture.load()
        return picture.mode, picture.size, picture.tobytes()


@pytest.mark.parametrize("make", IMAGES.values(), ids=IMAGES.keys())
def test_an_image_carries_its_request_and_shows_the_same_pixels(make: Any) -> None:
    original = make()
    stamped = media.stamp(original, facts())
    assert stamped != original
    found = media.read_provenance(stamped)
    assert found is not None and found["task_id"] == "t1" and found["model"] == "image-b"
    assert found["request"]["resolution"] == "1K"  # a default the body never gave
    assert pixels(stamped) == pixels(original)
    assert media.read_provenance(original) is None
    if stamped.startswith(b"\x89PNG"):
        assert png_crcs_hold(stamped)


def test_a_jpeg_keeps_jfif_and_exif_first_and_the_comment_after_them() -> None:
    stamped = media.stamp(jpeg_with_exif(), facts())
    markers, pos = [], 2
    while stamped[pos + 1] != 0xDA:
        markers.append(stamped[pos + 1])
        pos += 2 + int.from_bytes(stamped[pos + 2 : pos + 4], "big")
    assert markers[:3] == [0xE0, 0xE1, 0xFE]
    with Image.open(io.BytesIO(stamped)) as picture:
        assert picture.getexif()[0x010E] == "a description"
        assert json.loads(picture.info["comment"])["task_id"] == "t1"  # a plain comment


def test_a_webp_keeps_the_xmp_it_had_and_says_it_has_xmp() -> None:
    stamped = media.stamp(converted("WEBP", xmp=FOREIGN_XMP), facts())
    with Image.open(io.BytesIO(stamped)) as picture:
        xmp = picture.info["xmp"]
    assert b"<dc:source>the service</dc:source>" in xmp and b"genlab:provenance" in xmp
    assert int.from_bytes(stamped[4:8], "little") == len(stamped) - 8  # the RIFF size
    simple = media.stamp(converted("WEBP", mode="RGBA", lossless=True), facts())
    assert simple[12:16] == b"VP8X" and simple[20] & 0x04 and simple[20] & 0x10  # XMP, alpha
    assert pixels(simple)[0] == "RGBA"


def playback(data: bytes) -> dict[str, Any]:
    """What a player sees: durations, and every packet's timing and bytes, and frames."""
    with av.open(io.BytesIO(data)) as container:
        streams = [(s.type, s.duration, s.frames) for s in container.streams]
        packets = [
            (p.stream.type, p.pts, p.duration, bytes(p)) for p in container.demux()
            if p.size
        ]
        duration = container.duration
    with av.open(io.BytesIO(data)) as container:
        frames = [f.pts for f in container.decode(video=0)]
    return {"duration": duration, "streams": streams, "packets": packets, "frames": frames}


def fragmented(data: bytes) -> bytes:
    """The same video as a fragmented MP4 (moof/mdat pairs and an mfra index at the end)."""
    out = io.BytesIO()
    with av.open(io.BytesIO(data)) as source, av.open(
        out, "w", format="mp4", options={"movflags": "frag_keyframe+empty_moov"}
    ) as target:
        stream = target.add_stream_from_template(source.streams.video[0])
        for packet in source.demux(source.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                target.mux(packet)
    return out.getvalue()


def top_level(data: bytes) -> list[str]:
    names, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 4], "big") or len(data) - pos
        names.append(data[pos + 4 : pos + 8].decode("latin-1"))
        pos += size
    return names


VIDEOS = {
    "mp4-faststart-audio": lambda: render_video(320, 240, 2.0, lines=["a fox"], audio=True),
    "mov": lambda: render_test_video(320, 240, 1.0, fps=24, container="mov"),
    "mp4-fragmented": lambda: fragmented(render_video(160, 120, 2.0, lines=["a fox"])),
}


@pytest.mark.parametrize("make", VIDEOS.values(), ids=VIDEOS.keys())
def test_a_video_carries_its_request_and_plays_the_same(make: Any) -> None:
    original = make()
    stamped = media.stamp(original, facts())
    assert media.read_provenance(stamped)["task_id"] == "t1"  # type: ignore[index]
    assert playback(stamped) == playback(original)
    if "mfra" in top_level(original):  # the fragment index stays last: readers seek to it
        assert top_level(stamped)[-2:] == ["uuid", "mfra"]
    else:  # appended: not one byte before it moved
        assert stamped[: len(original)] == original and top_level(stamped)[-1] == "uuid"


def test_a_video_whose_last_box_runs_to_the_end_gets_its_size() -> None:
    video = render_video(160, 120, 1.0, lines=["a fox"])
    names = top_level(video)
    assert names[-1] == "mdat"
    mdat = video.rindex(b"mdat") - 4
    open_ended = video[:mdat] + b"\x00\x00\x00\x00" + video[mdat + 4 :]  # size 0: to the end
    stamped = media.stamp(open_ended, facts())
    assert top_level(stamped)[-2:] == ["mdat", "uuid"]
    assert playback(stamped) == playback(video)


def test_stamping_again_replaces_and_never_duplicates() -> None:
    count = {
        "png": lambda d: d.count(b"iTXtgenlab\x00"),
        "jpeg": lambda d: d.count(b'{"genlab":'),
        "webp-lossy": lambda d: d.count(b"xmlns:genlab="),
        "mp4": lambda d: d.count(b"uuid" + BOX_UUID.bytes),
    }
    files = {
        "png": png(), "jpeg": converted("JPEG"), "webp-lossy": converted("WEBP"),
        "mp4": render_video(160, 120, 1.0, lines=["a fox"]),
    }
    for name, data in files.items():
        once = media.stamp(data, facts("t1"))
        twice = media.stamp(once, facts("t2"))
        assert count[name](twice) == 1, name
        assert media.read_provenance(twice)["task_id"] == "t2"  # type: ignore[index]
        assert len(twice) == len(once), name
    # Free space appended after genlab's box: the box is still cut, not left behind.
    video = media.stamp(files["mp4"], facts("t1")) + b"\x00\x00\x00\x10free" + bytes(8)
    again = media.stamp(video, facts("t2"))
    assert count["mp4"](again) == 1 and top_level(again)[-2:] == ["free", "uuid"]
    # Media data after it (sample offsets point there): it becomes free space in place.
    video = media.stamp(files["mp4"], facts("t1")) + b"\x00\x00\x00\x10mdat" + bytes(8)
    again = media.stamp(video, facts("t2"))
    assert count["mp4"](again) == 1 and top_level(again)[-3:] == ["free", "mdat", "uuid"]
    assert media.read_provenance(again)["task_id"] == "t2"  # type: ignore[index]
    assert playback(again) == playback(files["mp4"])
    split = fragmented(files["mp4"])
    once = media.stamp(split, facts("t1"))
    twice = media.stamp(once, facts("t2"))
    assert len(twice) == len(once) and top_level(twice) == top_level(once)


def test_a_long_request_is_split_in_a_jpeg_and_compressed_in_a_png() -> None:
    notes = "".join(f"{i:06d} a very detailed shot list, " for i in range(3000))  # ~90 KB
    big = facts(notes=notes)
    jpeg = media.stamp(converted("JPEG"), big)
    assert jpeg.count(b"\xff\xfe") >= 1 and b"genlab\x00z" in jpeg
    assert len(encode(big)) > JPEG_SEGMENT_MAX
    assert media.read_provenance(jpeg)["request"]["notes"] == notes  # type: ignore[index]
    assert pixels(jpeg) == pixels(converted("JPEG"))
    png_file = media.stamp(png(), big)
    assert media.read_provenance(png_file)["request"]["notes"] == notes  # type: ignore[index]
    assert len(png_file) < len(png()) + len(notes) // 4  # compressed
    assert pixels(png_file) == pixels(png())


def test_past_the_size_limit_long_strings_are_cut_with_their_digest() -> None:
    huge = "x" * (media.MAX_PROVENANCE_BYTES + 10)
    written = media.read_provenance(media.stamp(png(), facts(notes=huge)))
    assert written is not None and written["cut"] is True and written["task_id"] == "t1"
    assert len(written["request"]["notes"]) < 5000
    assert media_digest(huge.encode())[7:] in written["request"]["notes"]
    assert len(encode(facts(notes=huge))) <= media.MAX_PROVENANCE_BYTES


def test_data_uris_are_written_as_the_digest_of_their_bytes() -> None:
    reference = png()
    uri = "data:image/png;base64," + base64.b64encode(reference).decode()
    body = {"model": "image-b", "prompt": "a kite like this",
            "reference_images": [{"url": uri}]}
    request = genlab.validate(body)
    stamped = media.stamp(png(), media.provenance_for(
        request, task_id="t1", address=content_address(request)))
    assert b"base64" not in stamped and base64.b64encode(reference)[:40] not in stamped
    written = media.read_provenance(stamped)
    assert written is not None
    assert written["request"]["reference_images"][0]["url"] == media_digest(reference)
    assert written["address"] == content_address(request)


SIGNED = "https://ana:pw-9d2c@cdn.example/ref.png?X-Amz-Signature=sig-77ab&X-Amz-Expires=60"


async def test_the_key_never_lands_in_a_kept_file(
    client_app: Any, client_key: str, client_options: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    env_key = "sk-genlab-env-3c9e51"
    monkeypatch.setenv("GENLAB_API_KEY", env_key)
    assert API_KEY_ENV == genlab.client.API_KEY_ENV
    transport = httpx.ASGITransport(app=client_app)
    async with AsyncClient("http://emulator", client_key, transport=transport,
                           **client_options) as client:
        body = {"model": "image-b", "prompt": f"a kite, not {env_key}"}
        record = await client.generate(body)
        saved = await client.download(record, tmp_path)
        given = media.provenance_for(genlab.validate(body), task_id=record.task_id)
        # What a careless caller might add: headers, the config, a signed reference URL.
        given["headers"] = {"Authorization": f"Bearer {client_key}", "X-Api-Key": client_key}
        given["api_key"] = client_key
        given["note"] = f"sent with Bearer {client_key}"
        given["reference"] = SIGNED
        assert media.stamp_file(saved[0], given)
    data = Path(saved[0]).read_bytes()
    written = json.dumps(media.read_provenance(data))
    for secret in (client_key, env_key, "pw-9d2c", "sig-77ab"):
        assert secret.encode() not in data and secret not in written
    assert "https://cdn.example/ref.png" in written and record.task_id in written


def test_other_formats_and_broken_files_stay_as_they_were(caplog: pytest.LogCaptureFixture,
                                                          tmp_path: Path) -> None:
    gif = converted("GIF")
    broken = png()[:-30]  # no IEND
    with caplog.at_level(logging.INFO, logger="genlab"):
        assert media.stamp(gif, facts()) is gif
        assert media.stamp(broken, facts()) is broken
        assert media.stamp(b"hello", facts()) == b"hello"
    assert "image/gif files carry no provenance" in caplog.text
    assert "could not be read" in caplog.text
    path = tmp_path / "a.gif"
    path.write_bytes(gif)
    assert media.stamp_file(path, facts()) is False and path.read_bytes() == gif
    assert media.read_provenance(path) is None
    (tmp_path / "empty.png").write_bytes(b"")
    assert media.read_provenance(tmp_path / "empty.png") is None


def test_stamp_file_replaces_the_file_whole_and_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "t1.mp4"
    path.write_bytes(render_video(160, 120, 1.0, lines=["a fox"]))
    path.chmod(0o640)
    assert media.stamp_file(path, facts()) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t1.mp4"]  # nothing staged left
    assert media.read_provenance(str(path))["task_id"] == "t1"  # type: ignore[index]


def test_stamp_file_and_read_provenance_on_a_storage_url() -> None:
    import fsspec  # type: ignore[import-untyped]

    url = "memory://genlab-provenance/runs/t1.png"
    with fsspec.open(url, "wb") as out:
        out.write(png())
    assert media.stamp_file(url, facts()) is True
    assert media.read_provenance(url)["task_id"] == "t1"  # type: ignore[index]
    assert genlab.inspect(url, history=Path("no-such-history.sqlite")).task_id == "t1"


# --- genlab.inspect --------------------------------------------------------------------


async def wait_for_row(history: History, task_id: str) -> None:
    """The history's writes run on the journal's thread: wait until the task's are in."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = history.query("SELECT status, paths FROM tasks WHERE task_id = ?", [task_id])
        if rows and rows[0]["status"] == "succeeded":
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} never reached the history")


@pytest.mark.parametrize("body", [
    {"model": "image-b", "prompt": "a red <kite>"},
    {"model": "video-a", "prompt": "a fox in the snow", "duration": 2},
], ids=["png", "mp4"])
async def test_inspect_reads_a_kept_file_copied_elsewhere_and_finds_its_history_row(
    body: dict[str, Any], client_app: Any, client_key: str, client_options: dict[str, Any],
    tmp_path: Path,
) -> None:
    history = History(tmp_path / "h.sqlite")
    transport = httpx.ASGITransport(app=client_app)
    async with AsyncClient("http://emulator", client_key, transport=transport,
                           history=history, **client_options) as client:
        record = await client.generate(body)
        kept = await client.download(record, tmp_path / "kept")
        request = genlab.validate(body)
        for path in kept[:-1]:  # media and cover, not the sidecar
            role = "cover" if "_cover" in Path(path).name else "result"
            media.stamp_file(path, media.provenance_for(
                request, task_id=record.task_id, address=content_address(request), role=role,
                completed_at=record.completed_at,
            ))
        await wait_for_row(history, record.task_id)
    elsewhere = tmp_path / "elsewhere" / "holiday"
    elsewhere.mkdir(parents=True)
    copy = elsewhere / ("my favourite" + Path(kept[0]).suffix)
    shutil.copy(kept[0], copy)
    shutil.rmtree(tmp_path / "kept")  # no sidecar, no original: only the copy says it

    found = genlab.inspect(copy, history=history)
    assert found.found and found.source == "file"
    assert (found.model, found.prompt, found.task_id) == (
        body["model"], body["prompt"], record.task_id)
    assert found.request == request.model_dump(mode="json")  # every field, defaults too
    assert found.address == content_address(request) and found.version == genlab.__version__
    assert found.history_row is not None
    assert found.history_row["task_id"] == record.task_id
    assert found.history_row["status"] == "succeeded"
    page = found._repr_html_()
    assert "genlab-inspect" in page and record.task_id in page
    assert "a red &lt;kite&gt;" in page or "a fox in the snow" in page
    assert "<kite>" not in page
    assert record.task_id in str(found) and body["model"] in repr(found)
    assert "completed 20" in str(found)  # when the task completed, from the file
    history.close()


async def test_inspect_falls_back_to_the_sidecar_and_says_so(
    client_async: AsyncClient, tmp_path: Path
) -> None:
    record = await client_async.generate({"model": "image-b", "prompt": "a red kite"})
    kept = await client_async.download(record, tmp_path)  # not stamped: an older genlab's
    found = genlab.inspect(kept[0], history=tmp_path / "none.sqlite")
    assert found.source == "sidecar" and found.task_id == record.task_id
    assert found.prompt == "a red kite" and found.model == "image-b"
    assert any("sidecar" in note for note in found.notes)
    for name in ("renamed.png", f"{record.task_id}_7.png"):  # the sidecar lists neither
        shutil.copy(kept[0], tmp_path / name)
        assert not genlab.inspect(tmp_path / name, history=tmp_path / "none.sqlite").found


def test_inspect_answers_plainly_for_a_file_genlab_did_not_make(tmp_path: Path) -> None:
    other = tmp_path / "holiday.jpg"
    other.write_bytes(converted("JPEG"))
    text = tmp_path / "notes.txt"
    text.write_text("not media")
    for path in (other, text):
        found = genlab.inspect(path)
        assert not found.found and found.provenance is None and found.history_row is None
        assert "no genlab provenance" in str(found).lower()
        assert "no provenance" in found._repr_html_()
    with pytest.raises(FileNotFoundError):
        genlab.inspect(tmp_path / "missing.png")


def test_inspect_looks_in_the_default_history_only_when_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GENLAB_HISTORY", raising=False)
    path = tmp_path / "kite.png"
    path.write_bytes(media.stamp(png(), facts("t-default")))
    found = genlab.inspect(path)
    assert found.found and found.history_row is None and found.history is None
    assert any("No history at" in note for note in found.notes)
    assert not (tmp_path / ".genlab").exists()  # looking created nothing

    history = History(tmp_path / "team.sqlite")
    now = time.time()
    row = {
        "model": "image-b", "kind": "image", "state": "accepted", "status": "succeeded",
        "prompt": "a red kite", "request": json.dumps({"model": "image-b", "prompt": "x"}),
        "submitted_at": now, "completed_at": now + 3,
    }
    history.append_many([  # a neighbour submitted in the same instant comes first
        {**row, "entry_id": "e0", "task_id": "t-neighbour", "credits": 9},
        {**row, "entry_id": "e1", "task_id": "t-default", "credits": 6},
    ])
    history.close()
    monkeypatch.setenv("GENLAB_HISTORY", str(tmp_path / "team.sqlite"))
    found = genlab.inspect(path)
    assert found.history_row is not None and found.history_row["credits"] == 6
    assert found.history == str(tmp_path / "team.sqlite")
    assert "6 credits" in str(found)
    other = media.stamp(png(), facts("t-elsewhere"))
    path.write_bytes(other)
    assert any("not in the history" in note for note in genlab.inspect(path).notes)


def test_inspect_reads_a_newer_schema_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "future.png"
    path.write_bytes(media.stamp(png(), {**facts(), "genlab": 2, "colour": "new field"}))
    found = genlab.inspect(path, history=tmp_path / "none.sqlite")
    assert found.found and found.model == "image-b"
    assert any("newer genlab" in note for note in found.notes)


def test_genlab_import_stays_light_with_inspect() -> None:
    import subprocess
    import sys

    code = (
        "import sys, genlab; genlab.inspect; "
        "print([m for m in ('pandas', 'sqlalchemy', 'PIL', 'av') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ})
    assert out.stdout.strip() == "[]"
