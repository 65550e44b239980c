"""Fast synthesis of real, playable media for the emulator.

Every function returns file bytes that a browser or a notebook can play or show::

    mp4 = render_video(1280, 720, 5.0, lines=["demo-model", "a cat on a surfboard"])
    png = render_frame_png(1280, 720, lines=["demo-model"], progress=0.5)
    img = render_image(1024, 1024, lines=["a cat"], seed=3)
    wav = render_audio(2.5)
    ref = render_test_video(640, 360, 2.0, fps=30, container="mov")

Videos are fast because only one second is ever encoded: a closed GOP (keyframe first, no
B-frames) is encoded once per (size, text, fps), cached, and its packets are muxed again and
again with shifted timestamps until the requested duration is reached. Audio works the same
way: one steady AAC packet of a periodic chord is repeated between a fade-in and a fade-out.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import struct
import wave
import zlib
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import av
import numpy as np

from genlab.catalog import DEFAULT_FPS
from genlab.emulator._picture import (
    U8Array,
    bar_stop,
    draw_bar,
    draw_scene,
    planar_field,
    text_seed,
)

__all__ = [
    "clear_render_cache",
    "render_audio",
    "render_frame_png",
    "render_image",
    "render_test_video",
    "render_video",
]

F32Array = np.ndarray[Any, np.dtype[np.float32]]

# Constant QP rather than CRF: near-identical P-frames then stay all-skip, which halves the
# encode time and the size; keyframes get QP ~21 through x264's default I/P ratio.
_X264_OPTIONS = {"preset": "ultrafast", "tune": "zerolatency", "qp": "24"}
_BT709 = 1  # AVCOL_SPC/PRI/TRC_BT709 share the value 1; tagging tells players the matrix.
_MPEG_RANGE = 1  # AVCOL_RANGE_MPEG: the limited range swscale produces for yuv420p.

_SAMPLE_RATE = 48_000
_AAC_FRAME = 1024
# A soft major triad (4:5:6) whose partials are whole multiples of 48000/1024 Hz, so the
# signal repeats exactly every AAC frame and one steady packet can stand in for any other.
_CHORD_HZ = (375.0, 468.75, 562.5)
_LEVEL = 0.12
_FADE_FRAMES = 12  # a quarter second of fade at each end
_MARGIN = 3  # AAC windows overlap their neighbours and the encoder looks ahead a frame
_CLIP_FRAMES = 2 * (_FADE_FRAMES + 2 * _MARGIN)


def render_video(
    width: int,
    height: int,
    duration: float,
    *,
    lines: Sequence[str],
    audio: bool = False,
    fps: int = DEFAULT_FPS,
) -> bytes:
    """An H.264/yuv420p MP4 (moov first) showing ``lines`` and a bar that fills each second.

    Args:
        width, height: frame size in pixels; both must be even.
        duration: seconds; the video has exactly ``round(duration * fps)`` frames.
        lines: text to show, e.g. model, prompt and settings; the first line is the title.
        audio: add a mono 48 kHz AAC track of a soft chord, as long as the video.
        fps: whole frames per second.

    Raises:
        ValueError: for odd or non-positive sizes, or a non-positive duration or fps.
    """
    _check_video_size(width, height)
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    n_frames = _frame_count(duration, fps)
    second = _encoded_second(width, height, tuple(lines), fps)

    buf = io.BytesIO()
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(av.open(io.BytesIO(second), "r"))
        out = stack.enter_context(_faststart_output(buf, "mp4"))
        vin = src.streams.video[0]
        vout = out.add_stream_from_template(vin)
        vtb = _time_base(vin)
        gop = [(_int(p.pts), _int(p.duration), p) for p in src.demux(vin) if p.size]
        step = sum(dur for _, dur, _ in gop)  # one second in the stream's time base
        # (seconds, pts, duration, packet, output stream, time base): muxed in time order.
        events: list[tuple[Fraction, int, int, av.Packet[Any], av.stream.Stream, Fraction]] = []
        for i in range(n_frames):
            start, dur, packet = gop[i % fps]
            pts = i // fps * step + start
            events.append((pts * vtb, pts, dur, packet, vout, vtb))
        if audio:
            n_samples = round(n_frames * _SAMPLE_RATE / fps)
            asrc, tone = _tone_packets(n_samples)
            stack.enter_context(asrc)
            aout = out.add_stream_from_template(asrc.streams.audio[0])
            atb = Fraction(1, _SAMPLE_RATE)
            for q, packet in enumerate(tone):
                # Packet 0 is the encoder's priming frame and starts a frame early; the mp4
                # muxer turns the negative start into an edit list so players skip it.
                pts = (q - 1) * _AAC_FRAME
                dur = max(min(q * _AAC_FRAME, n_samples) - pts, 1)
                events.append((pts * atb, pts, dur, packet, aout, atb))
            events.sort(key=lambda e: e[0])
        for _, pts, dur, pkt, stream, time_base in events:
            # One packet object is muxed many times; muxing takes its own reference and
            # rebases the timestamps to the output stream.
            pkt.time_base = time_base
            pkt.pts = pkt.dts = pts
            pkt.duration = dur
            pkt.stream = stream
            out.mux_one(pkt)
    return buf.getvalue()


def render_frame_png(
    width: int, height: int, *, lines: Sequence[str], progress: float = 1.0
) -> bytes:
    """One frame in :func:`render_video`'s look as a PNG, e.g. a cover or a last frame.

    Args:
        width, height: exact size of the PNG in pixels.
        lines: the same text the video shows.
        progress: how full the bar is, from 0.0 to 1.0.
    """
    _check_image_size(width, height)
    pixels, bar = draw_scene(width, height, lines, seed=text_seed(lines), bar=True)
    draw_bar(pixels, bar, progress)
    return encode_png(pixels)


def render_image(width: int, height: int, *, lines: Sequence[str], seed: int = 0) -> bytes:
    """A PNG with ``lines`` over a soft colour field; each seed gives other colours.

    Args:
        width, height: exact size in pixels; any ratio works, the text wraps and shrinks.
        lines: text to draw, e.g. the model name and the prompt.
        seed: picks the palette and direction of the colour field.
    """
    _check_image_size(width, height)
    pixels, _ = draw_scene(width, height, lines, seed=seed, bar=False)
    return encode_png(pixels)


def render_audio(duration: float, *, format: str = "wav") -> bytes:
    """A soft chord lasting ``duration`` seconds, as 48 kHz mono WAV (16-bit) or MP3.

    Args:
        duration: seconds.
        format: ``wav`` or ``mp3`` (needs PyAV's libmp3lame encoder).

    Raises:
        ValueError: for a non-positive duration, an unknown format, or ``mp3`` when this
            PyAV build has no MP3 encoder.
    """
    fmt = format.lower()
    if fmt not in {"wav", "mp3"}:
        raise ValueError(f"unknown audio format {format!r}; use 'wav' or 'mp3'")
    if fmt == "mp3" and "libmp3lame" not in av.codecs_available:
        raise ValueError("mp3 needs the libmp3lame encoder, which this PyAV build lacks")
    n = _frame_count(duration, _SAMPLE_RATE)
    samples = _tone(n, min(_FADE_FRAMES * _AAC_FRAME, n // 2))
    if fmt == "mp3":
        return _encode_audio(samples, "mp3", "libmp3lame", 1152)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(_SAMPLE_RATE)
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    return buf.getvalue()


def render_test_video(
    width: int, height: int, duration: float, *, fps: float = 24, container: str = "mp4"
) -> bytes:
    """A plain H.264 clip at any frame rate, in MP4 or MOV, for reference-media fixtures.

    Args:
        width, height: even frame size in pixels.
        duration: seconds; the clip has ``round(duration * fps)`` frames.
        fps: frames per second, e.g. 8, 23.976, 30 or 60.
        container: ``mp4`` or ``mov``.
    """
    _check_video_size(width, height)
    if container not in {"mp4", "mov"}:
        raise ValueError(f"container must be 'mp4' or 'mov', got {container!r}")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    n_frames = _frame_count(duration, fps)
    field = planar_field(width, height, seed=n_frames)[:, :, 1]  # green makes a fine luma
    box = max(2, min(width, height) // 6)
    top = (height - box) // 2

    buf = io.BytesIO()
    with _faststart_output(buf, container) as out:
        stream = out.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {**_X264_OPTIONS, "x264-params": "bframes=0"}
        frame = av.VideoFrame(width, height, "yuv420p")
        luma, cb, cr = _planes(frame)
        cb[:], cr[:] = 128, 128
        for i in range(n_frames):
            # A bright square sweeping across the field: motion on every frame.
            luma[:] = field
            x = (i * max(1, width // 48)) % max(1, width - box)
            luma[top : top + box, x : x + box] = 235
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return buf.getvalue()


def clear_render_cache() -> None:
    """Forget the cached one-second GOPs and tone clip, e.g. to time cold renders."""
    _encoded_second.cache_clear()
    _tone_clip.cache_clear()


def encode_png(pixels: U8Array) -> bytes:
    """An RGB PNG of an (h, w, 3) uint8 array, written for speed.

    Every row uses PNG's Up filter: the colour fields drawn here change by one constant step
    from row to row, so filtered rows are runs that zlib level 1 eats quickly. That is several
    times faster than Pillow's adaptive filtering on these pictures.
    """
    height, width, _ = pixels.shape
    flat = pixels.reshape(height, width * 3)
    rows = np.empty((height, width * 3 + 1), dtype=np.uint8)
    rows[:, 0] = 2  # filter type Up; above the first row PNG assumes zeros
    rows[0, 1:] = flat[0]
    np.subtract(flat[1:], flat[:-1], out=rows[1:, 1:])
    chunks = [
        (b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
        (b"IDAT", zlib.compress(rows.data, 1)),
        (b"IEND", b""),
    ]
    return b"\x89PNG\r\n\x1a\n" + b"".join(
        struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
        for tag, data in chunks
    )


def _check_video_size(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise ValueError(f"video size must be positive, got {width}x{height}")
    if width % 2 or height % 2:
        raise ValueError(f"yuv420p video needs an even width and height, got {width}x{height}")


def _check_image_size(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")


def _frame_count(duration: float, rate: float) -> int:
    if not math.isfinite(duration) or duration <= 0:
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    return max(1, round(duration * rate))


def _int(value: int | None) -> int:
    if value is None:
        raise ValueError("an encoded packet has no timestamp")
    return value


def _time_base(stream: av.stream.Stream) -> Fraction:
    if stream.time_base is None:
        raise ValueError("an encoded stream has no time base")
    return stream.time_base


def _faststart_output(buf: io.BytesIO, container: str) -> av.container.OutputContainer:
    """An output container that writes a moov-first file into ``buf``.

    FFmpeg's faststart pass re-opens the output to read it back while it moves the moov atom
    forward; in memory there is no file to re-open, so it gets a snapshot of the buffer.
    """

    def reopen(_url: str, _flags: int, _options: dict[str, str]) -> io.BytesIO:
        return io.BytesIO(buf.getvalue())

    options = {"movflags": "faststart"}
    return av.open(buf, "w", format=container, container_options=options, io_open=reopen)


def _yuv420(pixels: U8Array) -> av.VideoFrame:
    """(h, w, 3) RGB -> a BT.709, limited-range yuv420p frame."""
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format="rgb24")
    return frame.reformat(format="yuv420p", dst_colorspace="ITU709", dst_color_range="MPEG")


def _planes(frame: av.VideoFrame) -> tuple[U8Array, U8Array, U8Array]:
    """Writable views of a yuv420p frame's Y, U and V planes (rows may be padded)."""
    views = []
    for plane in frame.planes:
        flat = np.frombuffer(memoryview(plane), dtype=np.uint8)[: plane.height * plane.line_size]
        views.append(flat.reshape(plane.height, plane.line_size)[:, : plane.width])
    return views[0], views[1], views[2]


@functools.lru_cache(maxsize=32)
def _encoded_second(width: int, height: int, lines: tuple[str, ...], fps: int) -> bytes:
    """One second of video as a small MP4: a closed GOP of ``fps`` frames, keyframe first.

    Only the bar changes from frame to frame, so the picture is converted to YUV once and
    each frame copies a few more columns from a converted strip that shows the full bar.
    """
    pixels, bar = draw_scene(width, height, lines, seed=text_seed(lines), bar=True)
    strip = pixels[bar.y0 : bar.y1].copy()
    draw_bar(strip, bar, 1.0, dy=bar.y0)
    frame = _yuv420(pixels)
    y, u, v = _planes(frame)
    sy, su, sv = _planes(_yuv420(strip))
    r0, r1 = bar.y0 // 2, bar.y1 // 2

    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        # Closed one-second GOPs without B-frames: every prefix of the GOP decodes on its
        # own, which is what lets render_video cut a fractional last second.
        params = f"keyint={fps}:min-keyint={fps}:scenecut=0:bframes=0:open-gop=0"
        stream.options = {**_X264_OPTIONS, "x264-params": params}
        ctx = stream.codec_context
        ctx.colorspace = ctx.color_primaries = ctx.color_trc = _BT709
        ctx.color_range = _MPEG_RANGE
        # One frame, edited in place: x264 copies the picture inside encode(), so the planes
        # may change between frames.
        done = bar.x0
        for i in range(fps):
            stop = bar_stop(bar, (i + 1) / fps)
            y[bar.y0 : bar.y1, done:stop] = sy[:, done:stop]
            u[r0:r1, done // 2 : stop // 2] = su[:, done // 2 : stop // 2]
            v[r0:r1, done // 2 : stop // 2] = sv[:, done // 2 : stop // 2]
            done = stop
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return buf.getvalue()


def _tone(n_samples: int, fade: int) -> F32Array:
    """The chord, ``n_samples`` long at 48 kHz, with ``fade`` samples of fade at each end."""
    t = np.arange(n_samples, dtype=np.float64) / _SAMPLE_RATE
    chord = sum(np.sin(2 * np.pi * hz * t) for hz in _CHORD_HZ) * (_LEVEL / len(_CHORD_HZ))
    env = np.ones(n_samples)
    if fade:
        ramp = np.linspace(0.0, 1.0, fade)
        env[:fade] = ramp
        env[-fade:] = np.minimum(env[-fade:], ramp[::-1])
    return np.asarray(chord * env, dtype=np.float32)


def _encode_audio(
    samples: F32Array, container: str, codec: Literal["aac", "libmp3lame"], chunk: int
) -> bytes:
    """Mono 48 kHz ``samples`` encoded with ``codec`` into ``container``."""
    buf = io.BytesIO()
    with av.open(buf, "w", format=container) as out:
        stream = out.add_stream(codec, rate=_SAMPLE_RATE, layout="mono")
        stream.bit_rate = 64_000 if codec == "aac" else 96_000
        for start in range(0, len(samples), chunk):
            part = samples[start : start + chunk].reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(part, format="fltp", layout="mono")
            frame.sample_rate, frame.pts = _SAMPLE_RATE, start
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return buf.getvalue()


@functools.lru_cache(maxsize=1)
def _tone_clip() -> bytes:
    """A short AAC clip (fade-in, steady middle, fade-out): the source of every audio track."""
    samples = _tone(_CLIP_FRAMES * _AAC_FRAME, _FADE_FRAMES * _AAC_FRAME)
    return _encode_audio(samples, "mp4", "aac", _AAC_FRAME)


def _tone_packets(n_samples: int) -> tuple[av.container.InputContainer, list[av.Packet[Any]]]:
    """An open input container and the AAC packets that make ``n_samples`` of tone.

    Output packet ``q`` reuses clip packet ``q`` during the fade-in, the matching clip packet
    during the fade-out, and one steady packet in between. Every steady packet codes the same
    window of the same periodic signal, so the splices are seamless. Tracks too short to
    splice are encoded directly.
    """
    needed = math.ceil(n_samples / _AAC_FRAME) + 1  # + the encoder's priming packet
    head = _FADE_FRAMES + _MARGIN
    if needed <= 2 * head + 1:
        fade = min(_FADE_FRAMES * _AAC_FRAME, n_samples // 2)
        data = _encode_audio(_tone(n_samples, fade), "mp4", "aac", _AAC_FRAME)
        src = av.open(io.BytesIO(data), "r")
        return src, [p for p in src.demux(src.streams.audio[0]) if p.size][:needed]
    src = av.open(io.BytesIO(_tone_clip()), "r")
    clip = [p for p in src.demux(src.streams.audio[0]) if p.size]
    tail = needed - head
    return src, [
        clip[q] if q < head else clip[q - needed + len(clip)] if q >= tail else clip[head]
        for q in range(needed)
    ]
