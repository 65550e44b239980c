"""Real media files in the formats a service may send, made with PyAV and Pillow.

One function per format, each returning the whole file's bytes, cached for the test session.
Clips are tiny (a fraction of a second, small frames) so the set is made in a few seconds;
the 4K 60 fps one is a third of a second. Each function's docstring says what it makes, and
:data:`VIDEOS` / :data:`IMAGES` list them with the facts a probe must read back.
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

FPS = 24
os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner unless told errors only


@functools.cache
def _gradient(width: int, height: int) -> np.ndarray:
    image = np.zeros((height, width, 3), np.uint8)
    image[:, :, 0] = (np.arange(width) * 255 // max(1, width - 1)).astype(np.uint8)
    image[:, :, 1] = (np.arange(height) * 255 // max(1, height - 1)).astype(np.uint8)[:, None]
    return image


def _frame(i: int, width: int, height: int) -> np.ndarray:
    """A moving gradient with a bright square: frames an encoder cannot make nothing of."""
    image = np.roll(_gradient(width, height), 2 * i, axis=1)
    image[:, :, 2] = (40 * i) % 256
    side = max(2, min(width, height) // 4)
    x = (i * 3) % max(1, width - side)
    image[height // 3:height // 3 + side, x:x + side] = 255
    return image


def _video(
    *,
    codec: str = "libx264",
    fmt: str = "mp4",
    width: int = 64,
    height: int = 48,
    fps: int = FPS,
    frames: int = 12,
    pix_fmt: str = "yuv420p",
    options: dict[str, str] | None = None,
    audio: str | None = None,
    container_options: dict[str, str] | None = None,
    to_file: bool = False,
) -> bytes:
    import av

    folder = tempfile.mkdtemp(prefix="genlab-formats-")
    path = os.path.join(folder, f"clip.{fmt}")
    target: Any = path if to_file else io.BytesIO()
    try:
        with av.open(target, mode="w", format=fmt, options=container_options or {}) as out:
            stream: Any = out.add_stream(codec, rate=fps)
            stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
            if options:
                stream.options = options
            sound: Any = None
            if audio is not None:
                sound = out.add_stream(audio, rate=48000)
                sound.layout = "stereo"
            for i in range(frames):
                frame = av.VideoFrame.from_ndarray(_frame(i, width, height), format="rgb24")
                frame = frame.reformat(format=pix_fmt)
                frame.pts, frame.time_base = i, Fraction(1, fps)
                for packet in stream.encode(frame):
                    out.mux(packet)
            for packet in stream.encode(None):
                out.mux(packet)
            if sound is not None:
                samples = int(48000 * frames / fps)
                t = np.arange(samples) / 48000
                tone = (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
                chunk = 1024
                for start in range(0, samples, chunk):
                    part = np.stack([tone[start:start + chunk]] * 2)
                    piece = av.AudioFrame.from_ndarray(part, format="fltp", layout="stereo")
                    piece.sample_rate = 48000
                    piece.pts = start
                    piece.time_base = Fraction(1, 48000)
                    for packet in sound.encode(piece):
                        out.mux(packet)
                for packet in sound.encode(None):
                    out.mux(packet)
        if to_file:
            with open(path, "rb") as done:
                return done.read()
        assert isinstance(target, io.BytesIO)
        return target.getvalue()
    finally:
        if os.path.exists(path):
            os.remove(path)
        os.rmdir(folder)


@functools.cache
def h264_aac_mp4() -> bytes:
    """H.264 MP4 with AAC audio (what most services send; VS Code plays no AAC)."""
    return _video(audio="aac")


@functools.cache
def h264_mp3_mp4() -> bytes:
    """H.264 MP4 with MP3 audio, at a preview's bitrate: plays everywhere as it is."""
    return _video(audio="libmp3lame", options={"profile": "main"})


@functools.cache
def h264_opus_mp4() -> bytes:
    """H.264 MP4 with Opus audio."""
    return _video(audio="libopus")


@functools.cache
def moov_at_end_mp4() -> bytes:
    """H.264 MP4 whose index (``moov``) comes after the media data."""
    data = _video(frames=6)
    assert data.index(b"moov") > data.index(b"mdat")
    return data


@functools.cache
def fragmented_mp4() -> bytes:
    """Fragmented H.264 MP4 (``moof`` boxes), as streaming services write it."""
    return _video(container_options={"movflags": "frag_keyframe+empty_moov+default_base_moof"})


@functools.cache
def hevc_mp4() -> bytes:
    """HEVC (H.265) MP4: most browsers show a blank player."""
    return _video(codec="libx265", options={"x265-params": "log-level=error"})


@functools.cache
def h264_10bit_mp4() -> bytes:
    """H.264 High 10 (yuv420p10le) MP4: no browser decodes it."""
    return _video(pix_fmt="yuv420p10le")


@functools.cache
def h264_444_mp4() -> bytes:
    """H.264 High 4:4:4 (yuv444p) MP4: no browser decodes it."""
    return _video(pix_fmt="yuv444p")


@functools.cache
def vp9_odd_webm() -> bytes:
    """VP9 WebM with odd dimensions (65 x 49)."""
    return _video(codec="libvpx-vp9", fmt="webm", width=65, height=49, frames=6,
                  options={"deadline": "realtime", "cpu-used": "8"})


@functools.cache
def av1_mp4() -> bytes:
    """AV1 MP4 (SVT-AV1, the AV1 encoder this PyAV has)."""
    return _video(codec="libsvtav1", width=64, height=64, frames=6,
                  options={"preset": "12"})


@functools.cache
def prores_mov() -> bytes:
    """ProRes 422 in a QuickTime movie, as editing tools export it."""
    return _video(codec="prores_ks", fmt="mov", pix_fmt="yuv422p10le", frames=6)


@functools.cache
def h264_4k60_mp4() -> bytes:
    """4K (3840 x 2160) at 60 fps, a third of a second."""
    return _video(width=3840, height=2160, fps=60, frames=20,
                  options={"preset": "ultrafast", "crf": "30"})


def _image(array: np.ndarray, mode: str | None, fmt: str, **save: Any) -> bytes:
    from PIL import Image

    image = Image.fromarray(array, mode) if mode else Image.fromarray(array)
    out = io.BytesIO()
    image.save(out, fmt, **save)
    return out.getvalue()


def _picture(width: int = 60, height: int = 40) -> np.ndarray:
    return _frame(3, width, height)


@functools.cache
def png_16bit() -> bytes:
    """A 16-bit greyscale PNG (scientific and HDR tools write them)."""
    from PIL import Image

    ramp = (np.mgrid[0:40, 0:60][1] * 1000).astype(np.uint16)
    out = io.BytesIO()
    Image.fromarray(ramp).save(out, "PNG")
    data = out.getvalue()
    assert data[24] == 16  # IHDR bit depth
    return data


@functools.cache
def png_rgba() -> bytes:
    """An RGBA PNG with transparency."""
    rgba = np.concatenate([_picture(), np.full((40, 60, 1), 128, np.uint8)], axis=-1)
    return _image(rgba, None, "PNG")


@functools.cache
def jpeg_cmyk() -> bytes:
    """A CMYK JPEG, as print workflows write it."""
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(_picture()).convert("CMYK").save(out, "JPEG")
    return out.getvalue()


@functools.cache
def jpeg_exif_rotated() -> bytes:
    """A 60 x 40 JPEG whose EXIF orientation (6) says: turn it a quarter, so it shows 40 x 60."""
    from PIL import Image

    image = Image.fromarray(_picture())
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif)
    return out.getvalue()


@functools.cache
def jpeg_progressive() -> bytes:
    """A progressive JPEG."""
    return _image(_picture(), None, "JPEG", progressive=True)


@functools.cache
def jpeg_grayscale() -> bytes:
    """A greyscale JPEG."""
    return _image(_picture()[:, :, 0], None, "JPEG")


def _animation(fmt: str, **save: Any) -> bytes:
    from PIL import Image

    frames = [Image.fromarray(_frame(i, 60, 40)) for i in range(4)]
    out = io.BytesIO()
    frames[0].save(out, fmt, save_all=True, append_images=frames[1:], duration=100, loop=0,
                   **save)
    return out.getvalue()


@functools.cache
def webp_animated() -> bytes:
    """An animated WebP: four frames of 100 ms."""
    return _animation("WEBP")


@functools.cache
def gif_animated() -> bytes:
    """An animated GIF: four frames of 100 ms."""
    return _animation("GIF")


@functools.cache
def avif() -> bytes:
    """An AVIF still (Pillow's AVIF encoder)."""
    return _image(_picture(), None, "AVIF")


@functools.cache
def tiff() -> bytes:
    """A TIFF, as scanners and image tools write it."""
    return _image(_picture(), None, "TIFF", compression="tiff_deflate")


@functools.cache
def heic() -> bytes:
    """A HEIC still, as phones take photos (pillow-heif's HEVC encoder; Pillow has none)."""
    import pytest
    from PIL import Image

    pillow_heif = pytest.importorskip("pillow_heif")
    out = io.BytesIO()  # through pillow-heif's own API: Pillow is not taught to read HEIC here
    pillow_heif.from_pillow(Image.fromarray(_picture())).save(out, quality=80)
    return out.getvalue()


@dataclass(frozen=True)
class Format:
    """A format's maker and what a probe must find in it."""

    name: str
    make: Callable[[], bytes]
    mime: str
    extension: str
    facts: dict[str, Any] = field(default_factory=dict)


_BASE = {"width": 64, "height": 48, "fps": 24.0}
VIDEOS = [
    Format("h264+aac", h264_aac_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "audio_codec": "aac", "has_audio": True,
                    "frames": 12, "duration": 0.5}),
    Format("h264+mp3", h264_mp3_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "audio_codec": "mp3", "has_audio": True}),
    Format("h264+opus", h264_opus_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "audio_codec": "opus", "has_audio": True}),
    Format("moov-at-end", moov_at_end_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "has_audio": False, "frames": 6, "duration": 0.25}),
    Format("fragmented", fragmented_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "has_audio": False}),
    Format("hevc", hevc_mp4, "video/mp4", ".mp4", _BASE | {"video_codec": "hevc"}),
    Format("h264-10bit", h264_10bit_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "pix_fmt": "yuv420p10le", "bit_depth": 10}),
    Format("h264-444", h264_444_mp4, "video/mp4", ".mp4",
           _BASE | {"video_codec": "h264", "pix_fmt": "yuv444p", "bit_depth": 8}),
    Format("vp9-odd", vp9_odd_webm, "video/webm", ".webm",
           {"width": 65, "height": 49, "video_codec": "vp9", "fps": 24.0}),
    Format("av1", av1_mp4, "video/mp4", ".mp4",
           {"width": 64, "height": 64, "video_codec": "av1", "fps": 24.0}),
    Format("prores", prores_mov, "video/quicktime", ".mov",
           _BASE | {"video_codec": "prores", "bit_depth": 10}),
    Format("4k60", h264_4k60_mp4, "video/mp4", ".mp4",
           {"width": 3840, "height": 2160, "fps": 60.0, "video_codec": "h264", "frames": 20}),
]
IMAGES = [
    Format("png-16bit", png_16bit, "image/png", ".png",
           {"width": 60, "height": 40, "bit_depth": 16}),
    Format("png-rgba", png_rgba, "image/png", ".png",
           {"width": 60, "height": 40, "pix_fmt": "RGBA"}),
    Format("jpeg-cmyk", jpeg_cmyk, "image/jpeg", ".jpg",
           {"width": 60, "height": 40, "pix_fmt": "CMYK"}),
    Format("jpeg-rotated", jpeg_exif_rotated, "image/jpeg", ".jpg",
           {"width": 40, "height": 60}),
    Format("jpeg-progressive", jpeg_progressive, "image/jpeg", ".jpg",
           {"width": 60, "height": 40}),
    Format("jpeg-grey", jpeg_grayscale, "image/jpeg", ".jpg",
           {"width": 60, "height": 40, "pix_fmt": "L"}),
    Format("webp-animated", webp_animated, "image/webp", ".webp",
           {"width": 60, "height": 40, "images": 4, "duration": 0.4}),
    Format("gif-animated", gif_animated, "image/gif", ".gif",
           {"width": 60, "height": 40, "images": 4, "duration": 0.4}),
    Format("avif", avif, "image/avif", ".avif", {"width": 60, "height": 40}),
    Format("tiff", tiff, "image/tiff", ".tiff", {"width": 60, "height": 40}),
    Format("heic", heic, "image/heic", ".heic", {"width": 60, "height": 40}),
]
FORMATS = VIDEOS + IMAGES
