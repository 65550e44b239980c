"""What one video result adds to a notebook: the embedded preview, on camera-like input.

The emulator renders flat frames that compress to almost nothing, so they prove nothing about
notebook size. This benchmark makes clips the way a camera or a generator would deliver them
(a panning textured scene, moving objects and sensor grain, H.264 at a camera-like bitrate),
then measures the markup a task card embeds for each (:func:`genlab.report.media_html`, which
embeds a preview re-encoded at display size and links the original).

Goals: at most ~400 KB added per 5 s 720p result and ~1 MB per 15 s 1080p result. Then the
time to make a preview (:func:`genlab.media.preview.video_preview`, median of 3 runs, cache
cleared each time) of a 3 s 4K 60 fps H.264 clip (goal under 3 s) and of a 5 s 720p clip,
both with AAC sound as services send it, and the preview's size (H.264 with MP3) against the
original's. ``video_preview`` exists before and after previews were chosen by codec, so the
same script measures both (``PYTHONPATH=<checkout>/src``).

Run it::

    .venv/bin/python -m benchmarks.bench_embed
"""

from __future__ import annotations

import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from benchmarks._util import print_table, row

CLIPS = (
    # name, width, height, seconds, goal in KB
    ("5 s 720p", 1280, 720, 5.0, 400.0),
    ("15 s 1080p", 1920, 1080, 15.0, 1000.0),
)
FPS = 25
SOURCE_CRF = "20"  # a camera-like 720p clip lands around 4-8 Mbit/s with the grain below


PREVIEWED = (
    # name, width, height, fps, seconds, goal in seconds
    ("3 s 4K 60 fps", 3840, 2160, 60, 3.0, 3.0),
    ("5 s 720p", 1280, 720, 25, 5.0, None),
)


def camera_clip(path: Path, width: int, height: int, seconds: float, *, seed: int = 7,
                fps: int = FPS, sound: bool = False, grain_frames: int = 0) -> Path:
    """Write a clip with camera-like detail and motion (not flat frames) to ``path``.

    ``sound`` adds an AAC track (a tone with noise); ``grain_frames`` > 0 reuses that many
    grain patterns instead of drawing new grain for every frame (4K frames draw slowly)."""
    import av
    import numpy as np

    rng = np.random.default_rng(seed)
    # A textured scene larger than the frame, panned across: detail an encoder must keep.
    scene_h, scene_w = height + 200, width + 400
    yy, xx = np.mgrid[0:scene_h, 0:scene_w].astype(np.float32)
    texture = (
        96 + 60 * np.sin(xx / 37.0) * np.cos(yy / 23.0)
        + 40 * np.sin((xx + yy) / 11.0)
        + rng.normal(0, 18, (scene_h, scene_w))
    )
    scene = np.stack([texture, texture * 0.8 + 30, 200 - texture * 0.6], axis=-1)
    frames = int(seconds * fps)
    grains = [rng.normal(0, 6, (height, width, 3)).astype(np.float32)
              for _ in range(grain_frames)]
    with av.open(str(path), mode="w") as out:
        stream: Any = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": SOURCE_CRF, "preset": "ultrafast" if grains else "veryfast"}
        track = _aac_track(out) if sound else None
        for i in range(frames):
            dx, dy = int(i * 400 / frames), int(100 + 90 * np.sin(i / 20))
            view = scene[dy:dy + height, dx:dx + width].copy()
            for k in range(3):  # moving objects
                cx = int((0.2 + 0.3 * k) * width + 150 * np.sin(i / (9.0 + k)))
                cy = int(0.5 * height + 120 * np.cos(i / (7.0 + k)))
                view[max(0, cy - 60):cy + 60, max(0, cx - 60):cx + 60] = (230, 80 + 50 * k, 40)
            view += grains[i % len(grains)] if grains else rng.normal(0, 6, view.shape)
            image = np.clip(view, 0, 255).astype(np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
        if track is not None:
            _aac(out, track, seconds, rng)
    return path


def _aac_track(out: Any) -> Any:
    track = out.add_stream("aac", rate=48000)
    track.layout = "stereo"
    track.bit_rate = 128_000
    return track


def _aac(out: Any, track: Any, seconds: float, rng: Any) -> None:
    """``seconds`` of AAC stereo sound: a tone with a little noise."""
    import av
    import numpy as np

    rate = 48000
    total = int(seconds * rate)
    t = np.arange(total) / rate
    tone = (0.2 * np.sin(2 * np.pi * 330 * t) + rng.normal(0, 0.02, total)).astype(np.float32)
    for start in range(0, total, 1024):
        part = tone[start:start + 1024]
        frame = av.AudioFrame.from_ndarray(np.stack([part, part]), format="fltp",
                                           layout="stereo")
        frame.sample_rate, frame.pts, frame.time_base = rate, start, Fraction(1, rate)
        for packet in track.encode(frame):
            out.mux(packet)
    for packet in track.encode(None):
        out.mux(packet)


def preview_rows(folder: Path) -> list[dict[str, Any]]:
    """Seconds to make each clip's preview (median of 3, uncached) and its size."""
    import io
    import statistics

    import av

    from genlab.media import preview

    rows = []
    for name, width, height, fps, seconds, goal in PREVIEWED:
        clip = camera_clip(Path(folder) / f"preview_{width}x{height}.mp4", width, height,
                           seconds, fps=fps, sound=True, grain_frames=4 if width > 2000 else 0)
        data = clip.read_bytes()
        times = []
        shown = data
        for _ in range(3):
            preview._cache.clear()
            started = time.perf_counter()
            shown = preview.video_preview(data)
            times.append(time.perf_counter() - started)
        with av.open(io.BytesIO(shown)) as made:
            audio = made.streams.audio[0].codec_context.name if made.streams.audio else "none"
        rows.append(row(f"{name}: preview time (median of 3)", statistics.median(times), "s",
                        goal))
        rows.append(row(f"{name}: original ({len(data) / 1e6:.1f} MB, AAC)",
                        len(data) / 1000, "KB", None))
        rows.append(row(f"{name}: preview (audio {audio})", len(shown) / 1000, "KB", None))
    return rows


def run() -> list[dict[str, Any]]:
    from genlab.report import media_html

    rows = []
    with tempfile.TemporaryDirectory(prefix="genlab-bench-embed-") as folder:
        for name, width, height, seconds, goal in CLIPS:
            clip = camera_clip(Path(folder) / f"task_{width}x{height}.mp4", width, height, seconds)
            size = clip.stat().st_size
            started = time.perf_counter()
            markup = media_html([clip])
            took = time.perf_counter() - started
            added = len(markup.encode()) / 1000
            kbps = size * 8 / seconds / 1000
            rows.append(row(f"{name}: embedded ({size / 1e6:.1f} MB in, {kbps:,.0f} kbit/s)",
                            added, "KB", goal))
            rows.append(row(f"{name}: preview encoding time", took, "s", None))
        rows.extend(preview_rows(Path(folder)))
    return rows


if __name__ == "__main__":
    print_table("Embedded size per video result (notebook bytes)", run())
