"""The emulator's sound: a soft chord as WAV, MP3 or AAC packets, and an input's own audio
re-encoded as the AAC track of an output.

One steady AAC packet of a periodic chord is repeated between a fade-in and a fade-out, so a
track of any length costs a few packets of encoding.
"""

from __future__ import annotations

import functools
import io
import math
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import av
import numpy as np

__all__ = [
    "AAC_FRAME",
    "SAMPLE_RATE",
    "add_tone_track",
    "clear_sound_cache",
    "input_audio_track",
    "render_audio",
    "track_packets",
]

F32Array = np.ndarray[Any, np.dtype[np.float32]]

_SAMPLE_RATE = 48_000
_AAC_FRAME = 1024
# A soft major triad (4:5:6) whose partials are whole multiples of 48000/1024 Hz, so the
# signal repeats exactly every AAC frame and one steady packet can stand in for any other.
_CHORD_HZ = (375.0, 468.75, 562.5)
_LEVEL = 0.12
_FADE_FRAMES = 12  # a quarter second of fade at each end
_MARGIN = 3  # AAC windows overlap their neighbours and the encoder looks ahead a frame
_CLIP_FRAMES = 2 * (_FADE_FRAMES + 2 * _MARGIN)

SAMPLE_RATE, AAC_FRAME = _SAMPLE_RATE, _AAC_FRAME


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


def add_tone_track(
    out: av.container.OutputContainer, seconds: float, hz: float
) -> Callable[[], None]:
    """Add a mono AAC stream to ``out`` (before anything is muxed); the function returned
    encodes ``seconds`` of a pure ``hz`` sine into it."""
    stream = out.add_stream("aac", rate=_SAMPLE_RATE, layout="mono")

    def encode() -> None:
        n = _frame_count(seconds, _SAMPLE_RATE)
        t = np.arange(n, dtype=np.float64) / _SAMPLE_RATE
        _mux_samples(out, stream, np.asarray(0.3 * np.sin(2 * np.pi * hz * t), np.float32))

    return encode


def _mux_samples(out: av.container.OutputContainer, stream: Any, samples: F32Array) -> None:
    n = len(samples)
    for start in range(0, n, _AAC_FRAME):
        part = samples[start : start + _AAC_FRAME].reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(part, format="fltp", layout="mono")
        frame.sample_rate, frame.pts = _SAMPLE_RATE, start
        out.mux(stream.encode(frame))
    out.mux(stream.encode(None))


def clear_sound_cache() -> None:
    """Forget the cached chord clip."""
    _tone_clip.cache_clear()


def input_audio_track(path: Path, seconds: float) -> bytes | None:
    """The first ``seconds`` of a media file's own audio, as a mono 48 kHz AAC track in MP4.

    Returns None when the file has no audio stream. Reads and decodes only what is needed.

    Args:
        path: a video (or audio) file.
        seconds: how much of its audio to keep.
    """
    wanted = _frame_count(seconds, _SAMPLE_RATE)
    parts: list[F32Array] = []
    got = 0
    with av.open(str(path), "r") as src:
        if not src.streams.audio:
            return None
        stream = src.streams.audio[0]
        resampler = av.AudioResampler(format="fltp", layout="mono", rate=_SAMPLE_RATE)
        for frame in src.decode(stream):
            for out in resampler.resample(frame):
                samples = out.to_ndarray().reshape(-1).astype(np.float32)
                parts.append(samples[: wanted - got])
                got += len(parts[-1])
            if got >= wanted:
                break
    if not got:
        return None
    return _encode_audio(np.concatenate(parts), "mp4", "aac", _AAC_FRAME)


def track_packets(
    n_samples: int, track: bytes | None = None
) -> tuple[av.container.InputContainer, list[av.Packet[Any]]]:
    """An open input container and the AAC packets of ``n_samples`` of audio: the chord, or
    ``track`` (from :func:`input_audio_track`) cut to length. Packet 0 is the encoder's
    priming frame."""
    if track is None:
        return _tone_packets(n_samples)
    needed = math.ceil(n_samples / _AAC_FRAME) + 1
    src = av.open(io.BytesIO(track), "r")
    return src, [p for p in src.demux(src.streams.audio[0]) if p.size][:needed]


def _frame_count(duration: float, rate: float) -> int:
    if not math.isfinite(duration) or duration <= 0:
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    return max(1, round(duration * rate))


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
