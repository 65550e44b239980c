"""The emulator's media layer: rendered media is real, exact and playable; probing is safe.

Rendered bytes are checked with PyAV and Pillow directly, the way a player or a user would
see them, not only through our own probe.
"""

from __future__ import annotations

import io
import random
import struct
import wave
import zlib
from fractions import Fraction
from typing import Any

import av
import numpy as np
import pytest
from PIL import Image

from genlab.emulator._picture import font, layout, line_height
from genlab.emulator._render import (
    render_audio,
    render_frame_png,
    render_image,
    render_test_video,
    render_video,
)
from genlab.media import MediaProbeError, probe

LINES = [
    "demo-video-model",
    "a red fox trotting through fresh snow at dawn, soft light, 35mm film, shallow depth "
    "of field, https://example.com/a/very/long/reference/url/that/does/not/break/nicely",
    "1280x720 · 24 fps · seed 7",
]


def top_level_boxes(data: bytes) -> list[str]:
    """The names of an ISO-BMFF file's top-level boxes, in file order."""
    names, pos = [], 0
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos : pos + 4], "big")
        if size == 1:
            size = int.from_bytes(data[pos + 8 : pos + 16], "big")
        elif size == 0:
            size = len(data) - pos
        names.append(data[pos + 4 : pos + 8].decode("latin-1"))
        pos += size
    return names


def stated_seconds(stream: Any) -> float:
    """A stream's duration as its container states it."""
    return float(stream.duration * stream.time_base)


def video_packets(data: bytes) -> list[Any]:
    with av.open(io.BytesIO(data), "r") as c:
        return [p for p in c.demux(c.streams.video[0]) if p.size]


@pytest.fixture(scope="module")
def clip_5s() -> bytes:
    return render_video(1280, 720, 5.0, lines=LINES)


@pytest.fixture(scope="module")
def clip_audio() -> bytes:
    return render_video(640, 360, 3.0, lines=LINES, audio=True)


# --- render_video ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(1280, 720), (720, 1280), (1920, 1080), (854, 480)])
def test_video_has_the_exact_size(size: tuple[int, int]) -> None:
    data = render_video(*size, 1.0, lines=LINES)
    with av.open(io.BytesIO(data), "r") as c:
        stream = c.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == size
        frame = next(c.decode(stream))
        assert (frame.width, frame.height) == size


def test_video_is_h264_yuv420p_24fps_with_moov_first(clip_5s: bytes) -> None:
    with av.open(io.BytesIO(clip_5s), "r") as c:
        assert "mp4" in c.format.name
        stream = c.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.pix_fmt == "yuv420p"
        assert stream.average_rate == 24
        assert not c.streams.audio
    boxes = top_level_boxes(clip_5s)
    assert boxes[0] == "ftyp"
    assert boxes.index("moov") < boxes.index("mdat")


@pytest.mark.parametrize(("seconds", "frames"), [(5.0, 120), (15.0, 360), (7.3, 175)])
def test_video_has_the_exact_frame_count(seconds: float, frames: int) -> None:
    data = render_video(1280, 720, seconds, lines=LINES)
    packets = video_packets(data)
    assert len(packets) == frames
    with av.open(io.BytesIO(data), "r") as c:
        stream = c.streams.video[0]
        assert stream.frames == frames
        assert stated_seconds(stream) == pytest.approx(frames / 24)


def test_video_is_closed_one_second_gops(clip_5s: bytes) -> None:
    packets = video_packets(clip_5s)
    assert [i for i, p in enumerate(packets) if p.is_keyframe] == [0, 24, 48, 72, 96]
    pts = [p.pts for p in packets]
    assert pts == sorted(pts) and len(set(pts)) == len(pts)
    assert all(p.pts == p.dts for p in packets)  # no B-frames


def test_short_video_decodes_completely_and_moves() -> None:
    data = render_video(320, 180, 2.5, lines=LINES)
    with av.open(io.BytesIO(data), "r") as c:
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    assert len(frames) == 60
    assert all(f.shape == (180, 320, 3) for f in frames)
    # Something moves within a second, and each second looks the same.
    assert np.abs(frames[2].astype(int) - frames[14]).max() > 100
    assert np.abs(frames[5].astype(int) - frames[29]).mean() < 2


@pytest.mark.parametrize("size", [(640, 360), (642, 362), (2, 2)])
def test_video_frames_look_like_the_cover_png(size: tuple[int, int]) -> None:
    # 362 is not a multiple of 4: a packed-YUV shortcut once scaled such frames silently.
    data = render_video(*size, 1.0, lines=LINES)
    with av.open(io.BytesIO(data), "r") as c:
        last = list(c.decode(video=0))[-1].to_ndarray(format="rgb24").astype(int)
    cover = np.asarray(open_png(render_frame_png(*size, lines=LINES, progress=1.0)))
    assert last.shape == cover.shape
    assert np.abs(last - cover).mean() < 3  # coding loss only; a rescale shows as 4+


def test_video_audio_track_matches_the_video(clip_audio: bytes) -> None:
    with av.open(io.BytesIO(clip_audio), "r") as c:
        video, audio = c.streams.video[0], c.streams.audio[0]
        assert audio.codec_context.name == "aac"
        assert audio.channels == 1
        v_seconds = stated_seconds(video)
        a_seconds = stated_seconds(audio)
        assert a_seconds == pytest.approx(v_seconds, abs=0.1)
        samples = np.concatenate([f.to_ndarray().reshape(-1) for f in c.decode(audio)])
    assert len(samples) / audio.sample_rate == pytest.approx(3.0, abs=0.1)
    middle = samples[len(samples) // 4 : -len(samples) // 4]
    assert 0.05 < np.abs(middle).max() < 0.3  # a gentle but audible tone
    # Repeated packets splice without clicks: the wave never jumps between samples.
    assert np.abs(np.diff(middle)).max() < 0.03


def test_audio_only_when_asked(clip_5s: bytes) -> None:
    with av.open(io.BytesIO(clip_5s), "r") as c:
        assert len(c.streams.audio) == 0
    long_audio = render_video(640, 360, 7.3, lines=LINES, audio=True)
    with av.open(io.BytesIO(long_audio), "r") as c:
        audio = c.streams.audio[0]
        assert stated_seconds(audio) == pytest.approx(175 / 24, abs=0.1)


def test_short_audio_track_is_encoded_directly() -> None:
    data = render_video(320, 180, 0.5, lines=["x"], audio=True)
    with av.open(io.BytesIO(data), "r") as c:
        audio = c.streams.audio[0]
        assert stated_seconds(audio) == pytest.approx(0.5, abs=0.1)
        assert sum(f.samples for f in c.decode(audio)) > 0


@pytest.mark.parametrize(
    ("width", "height", "duration"), [(641, 360, 1.0), (640, 361, 1.0), (640, 360, 0.0)]
)
def test_video_refuses_odd_sizes_and_empty_durations(
    width: int, height: int, duration: float
) -> None:
    with pytest.raises(ValueError):
        render_video(width, height, duration, lines=LINES)


# --- PNGs -----------------------------------------------------------------------------------


def open_png(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    assert img.format == "PNG"
    return img


@pytest.mark.parametrize("size", [(1280, 720), (720, 1280), (1001, 555)])
def test_frame_png_has_the_exact_size(size: tuple[int, int]) -> None:
    img = open_png(render_frame_png(*size, lines=LINES, progress=0.3))
    assert img.size == size and img.mode == "RGB"


def test_frame_png_shows_progress() -> None:
    empty = np.asarray(open_png(render_frame_png(640, 360, lines=LINES, progress=0.0)))
    full = np.asarray(open_png(render_frame_png(640, 360, lines=LINES, progress=1.0)))
    changed = np.any(empty != full, axis=2)
    rows, cols = np.nonzero(changed)
    assert rows.min() > 300  # only the bar near the bottom changes
    assert cols.max() - cols.min() > 500


@pytest.mark.parametrize("size", [(1024, 1024), (4096, 4096), (1024, 128), (128, 1024), (7, 3)])
def test_image_has_the_exact_size(size: tuple[int, int]) -> None:
    img = open_png(render_image(*size, lines=LINES, seed=1))
    assert img.size == size and img.mode == "RGB"


def test_images_differ_by_seed_and_repeat_by_seed() -> None:
    pictures = [render_image(256, 256, lines=LINES, seed=s) for s in range(4)]
    assert len(set(pictures)) == 4
    means = {tuple(np.asarray(open_png(p)).mean(axis=(0, 1)).round()) for p in pictures}
    assert len(means) == 4
    assert render_image(256, 256, lines=LINES, seed=2) == pictures[2]


def test_image_text_is_drawn() -> None:
    bare = np.asarray(open_png(render_image(512, 512, lines=[], seed=3)))
    text = np.asarray(open_png(render_image(512, 512, lines=LINES, seed=3)))
    assert (text == 255).all(axis=2).sum() > 200  # white title pixels
    assert not (bare == 255).all(axis=2).any()


@pytest.mark.parametrize("box", [(1100, 560), (940, 96), (100, 900), (40, 20), (3000, 3000)])
def test_text_layout_fits_its_box(box: tuple[int, int]) -> None:
    laid = layout([*LINES, "word " * 400], *box)
    assert laid
    assert sum(line_height(size) for _, size in laid) <= box[1]
    assert all(font(size).getlength(text) <= box[0] for text, size in laid)


# --- audio and reference videos -----------------------------------------------------------


def test_wav_has_the_exact_length() -> None:
    with wave.open(io.BytesIO(render_audio(2.5)), "rb") as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getsampwidth()) == (1, 48_000, 2)
        assert wav.getnframes() == 120_000


def test_mp3_decodes_to_the_right_length() -> None:
    if "libmp3lame" not in av.codecs_available:
        with pytest.raises(ValueError, match="libmp3lame"):
            render_audio(1.0, format="mp3")
        return
    data = render_audio(3.2, format="mp3")
    with av.open(io.BytesIO(data), "r") as c:
        assert c.format.name == "mp3"
        samples = sum(f.samples for f in c.decode(audio=0))
        assert samples / c.streams.audio[0].sample_rate == pytest.approx(3.2, abs=0.1)


def test_unknown_audio_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown audio format"):
        render_audio(1.0, format="ogg")


@pytest.mark.parametrize(
    ("fps", "container"), [(8, "mp4"), (30, "mov"), (60, "mp4"), (30000 / 1001, "mov")]
)
def test_test_video_has_the_requested_rate_and_container(fps: float, container: str) -> None:
    data = render_test_video(320, 240, 1.5, fps=fps, container=container)
    assert (data[8:12] == b"qt  ") == (container == "mov")
    assert top_level_boxes(data).index("moov") < top_level_boxes(data).index("mdat")
    with av.open(io.BytesIO(data), "r") as c:
        stream = c.streams.video[0]
        assert float(stream.average_rate or 0) == pytest.approx(fps, rel=1e-3)
        assert sum(1 for _ in c.decode(stream)) == round(1.5 * fps)


# --- probe(strict=True) -----------------------------------------------------------------


def pillow_bytes(fmt: str) -> bytes:
    buf = io.BytesIO()
    open_png(render_image(320, 200, lines=LINES)).save(buf, fmt)
    return buf.getvalue()


def test_probe_images() -> None:
    for extension, data in [
        (".png", render_image(320, 200, lines=LINES)),
        (".jpg", pillow_bytes("JPEG")),
        (".webp", pillow_bytes("WEBP")),
        (".gif", pillow_bytes("GIF")),
    ]:
        info = probe(data, strict=True)
        assert (info.kind, info.extension, info.width, info.height) == (
            "image", extension, 320, 200)
        assert info.bytes == len(data)
        assert probe(data) == info  # a kept file's facts are the emulator's, read leniently


def test_probe_videos(clip_audio: bytes) -> None:
    info = probe(clip_audio, strict=True)
    assert (info.kind, info.extension, info.width, info.height) == ("video", ".mp4", 640, 360)
    assert info.fps == pytest.approx(24)
    assert info.duration == pytest.approx(3.0, abs=0.05)
    assert info.has_audio
    assert probe(clip_audio) == info

    mov = probe(render_test_video(320, 240, 2.0, fps=8, container="mov"), strict=True)
    assert (mov.kind, mov.extension, mov.width, mov.height) == ("video", ".mov", 320, 240)
    assert mov.fps == pytest.approx(8)
    assert mov.duration == pytest.approx(2.0, abs=0.05)
    assert not mov.has_audio


def test_probe_audio() -> None:
    wav = probe(render_audio(2.5), strict=True)
    assert (wav.kind, wav.extension) == ("audio", ".wav")
    assert wav.duration == pytest.approx(2.5, abs=0.05)
    if "libmp3lame" in av.codecs_available:
        mp3 = probe(render_audio(3.2, format="mp3"), strict=True)
        assert (mp3.kind, mp3.extension) == ("audio", ".mp3")
        assert mp3.duration == pytest.approx(3.2, abs=0.1)


def png_claiming(width: int, height: int) -> bytes:
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IEND", b"")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: b"", "empty file"),
        (lambda: random.Random(1).randbytes(5000), "not an image, video or audio file"),
        (lambda: b"just some text, no media here " * 20, "not an image, video or audio file"),
        (lambda: render_video(320, 180, 2.0, lines=LINES)[:-4000], "truncated or corrupt"),
        (lambda: render_video(320, 180, 2.0, lines=LINES)[:400], "truncated or corrupt"),
        (lambda: render_image(320, 200, lines=LINES)[:-100], "truncated or corrupt"),
        (lambda: render_image(320, 200, lines=LINES)[:30], "truncated or corrupt"),
        (lambda: render_audio(2.0)[:5000], "truncated or corrupt"),
        # Huge sizes are read from the header, not refused; rows the data cannot hold are.
        (lambda: png_claiming(20_000, 20_000), "too little pixel data for 20000x20000"),
        (lambda: png_claiming(10_000, 10_000), "too little pixel data for 10000x10000"),
    ],
)
def test_probe_refuses_bad_files(make: Any, message: str) -> None:
    data = make()
    with pytest.raises(MediaProbeError, match=message):
        probe(data, strict=True)
    assert probe(data).bytes == len(data)  # not strict: what is known, never an error


def test_probe_never_raises_anything_else_on_cut_files(clip_audio: bytes) -> None:
    png = render_image(320, 200, lines=LINES)
    for data in (clip_audio, png):
        for cut in np.linspace(1, len(data) - 1, 25).astype(int):
            try:
                probe(data[:cut], strict=True)
            except MediaProbeError:
                pass


def test_probe_reports_fractional_rates() -> None:
    info = probe(render_test_video(320, 240, 1.0, fps=30000 / 1001), strict=True)
    assert info.fps == pytest.approx(float(Fraction(30000, 1001)))


def mp3_with_cover_art() -> bytes:
    """An MP3 carrying album art, as music files often do: a one-picture "video" stream."""
    buf = io.BytesIO()
    with av.open(io.BytesIO(render_audio(1.0)), "r") as src, av.open(buf, "w", format="mp3") as out:
        sound = out.add_stream("libmp3lame", rate=44100)
        cover = out.add_stream("png")
        cover.width, cover.height, cover.pix_fmt = 16, 16, "rgb24"
        cover.disposition = av.stream.Disposition.attached_pic
        for packet in cover.encode(av.VideoFrame.from_image(Image.new("RGB", (16, 16), "red"))):
            out.mux(packet)
        for packet in cover.encode():
            out.mux(packet)
        for frame in src.decode(audio=0):
            frame.pts = None
            for packet in sound.encode(frame):
                out.mux(packet)
        for packet in sound.encode():
            out.mux(packet)
    return buf.getvalue()


@pytest.mark.skipif("libmp3lame" not in av.codecs_available, reason="FFmpeg without an MP3 encoder")
def test_a_song_with_cover_art_is_audio_to_both_modes_of_the_one_probe() -> None:
    data = mp3_with_cover_art()
    with av.open(io.BytesIO(data), "r") as container:
        assert container.streams.video  # the cover is there, as a picture stream
    strict, kept = probe(data, strict=True), probe(data)
    assert (strict.kind, strict.extension, strict.width) == ("audio", ".mp3", None)
    assert strict.duration == pytest.approx(1.0, abs=0.1)
    assert kept == strict
