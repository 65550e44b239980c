"""Sample media to use as references offline: images, video clips and audio, made locally.

Example:
    >>> from genlab.emulator import samples
    >>> png = samples.image(640, 480, "a character")
    >>> png[:4]
    b'\\x89PNG'
"""

from __future__ import annotations

from genlab.emulator._render import render_audio, render_image, render_test_video


def image(width: int = 720, height: int = 720, text: str = "sample") -> bytes:
    """A PNG of ``width`` x ``height`` with ``text`` drawn on it."""
    return render_image(width, height, lines=[text])


def video(
    width: int = 720,
    height: int = 720,
    seconds: float = 4.0,
    *,
    fps: float = 24,
    container: str = "mp4",
    tone_hz: float | None = None,
) -> bytes:
    """An H.264 clip (``mp4`` or ``mov``) of the given size, length and frame rate; with
    ``tone_hz``, it carries an audio track of that pure tone."""
    return render_test_video(
        width, height, seconds, fps=fps, container=container, tone_hz=tone_hz
    )


def audio(seconds: float = 4.0, *, format: str = "wav") -> bytes:
    """A tone of ``seconds`` as ``wav`` or ``mp3``."""
    return render_audio(seconds, format=format)


__all__ = ["audio", "image", "video"]
