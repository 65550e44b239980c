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
import zlib
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

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
from genlab.emulator._sound import (
    AAC_FRAME,
    SAMPLE_RATE,
    add_tone_track,
    clear_sound_cache,
    render_audio,
    track_packets,
)

__all__ = [
    "clear_render_cache",
    "render_audio",
    "render_frame_png",
    "render_image",
    "render_test_video",
    "render_video",
]

# Constant QP rather than CRF: near-identical P-frames then stay all-skip, which halves the
# encode time and the size; keyframes get QP ~21 through x264's default I/P ratio.
_X264_OPTIONS = {"preset": "ultrafast", "tune": "zerolatency", "qp": "24"}
_BT709 = 1  # AVCOL_SPC/PRI/TRC_BT709 share the value 1; tagging tells players the matrix.
_MPEG_RANGE = 1  # AVCOL_RANGE_MPEG: the limited range swscale produces for yuv420p.



def render_video(
    width: int,
    height: int,
    duration: float,
    *,
    lines: Sequence[str],
    audio: bool = False,
    fps: int = DEFAULT_FPS,
    seed: int | None = None,
    watermark: bool = False,
    audio_track: bytes | None = None,
) -> bytes:
    """An H.264/yuv420p MP4 (moov first) showing ``lines`` and a bar that fills each second.

    Args:
        width, height: frame size in pixels; both must be even.
        duration: seconds; the video has exactly ``round(duration * fps)`` frames.
        lines: text to show, e.g. model, prompt and settings; the first line is the title.
        audio: add a mono 48 kHz AAC track of a soft chord, as long as the video.
        fps: whole frames per second.
        seed: picks the colours; None derives them from ``lines``. The same arguments always
            give the same bytes.
        watermark: draw a visible watermark in the top right corner of every frame.
        audio_track: with ``audio``, this track (from ``_sound.input_audio_track``) instead
            of the chord, cut to the video's length.

    Raises:
        ValueError: for odd or non-positive sizes, or a non-positive duration or fps.
    """
    _check_video_size(width, height)
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    n_frames = _frame_count(duration, fps)
    look = text_seed(lines) if seed is None else seed
    second = _encoded_second(width, height, tuple(lines), fps, look, watermark)

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
            n_samples = round(n_frames * SAMPLE_RATE / fps)
            asrc, tone = track_packets(n_samples, audio_track)
            stack.enter_context(asrc)
            aout = out.add_stream_from_template(asrc.streams.audio[0])
            atb = Fraction(1, SAMPLE_RATE)
            for q, packet in enumerate(tone):
                # Packet 0 is the encoder's priming frame and starts a frame early; the mp4
                # muxer turns the negative start into an edit list so players skip it.
                pts = (q - 1) * AAC_FRAME
                dur = max(min(q * AAC_FRAME, n_samples) - pts, 1)
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
    width: int,
    height: int,
    *,
    lines: Sequence[str],
    progress: float = 1.0,
    seed: int | None = None,
    watermark: bool = False,
) -> bytes:
    """One frame in :func:`render_video`'s look as a PNG, e.g. a cover or a last frame.

    Args:
        width, height: exact size of the PNG in pixels.
        lines: the same text the video shows.
        progress: how full the bar is, from 0.0 to 1.0.
        seed, watermark: as for :func:`render_video`.
    """
    _check_image_size(width, height)
    look = text_seed(lines) if seed is None else seed
    pixels, bar = draw_scene(width, height, lines, seed=look, bar=True, watermark=watermark)
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


def render_test_video(
    width: int,
    height: int,
    duration: float,
    *,
    fps: float = 24,
    container: str = "mp4",
    tone_hz: float | None = None,
) -> bytes:
    """A plain H.264 clip at any frame rate, in MP4 or MOV, for reference-media fixtures.

    Args:
        width, height: even frame size in pixels.
        duration: seconds; the clip has ``round(duration * fps)`` frames.
        fps: frames per second, e.g. 8, 23.976, 30 or 60.
        container: ``mp4`` or ``mov``.
        tone_hz: add a mono AAC track of a pure tone of this frequency, as long as the clip.
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
        tone = add_tone_track(out, n_frames / fps, tone_hz) if tone_hz is not None else None
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
        if tone is not None:
            tone()
    return buf.getvalue()


def clear_render_cache() -> None:
    """Forget the cached one-second GOPs and tone clip, e.g. to time cold renders."""
    _encoded_second.cache_clear()
    clear_sound_cache()


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
def _encoded_second(
    width: int, height: int, lines: tuple[str, ...], fps: int, seed: int, watermark: bool
) -> bytes:
    """One second of video as a small MP4: a closed GOP of ``fps`` frames, keyframe first.

    Only the bar changes from frame to frame, so the picture is converted to YUV once and
    each frame copies a few more columns from a converted strip that shows the full bar.
    """
    pixels, bar = draw_scene(width, height, lines, seed=seed, bar=True, watermark=watermark)
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


