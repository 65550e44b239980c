"""Degraded copies of a result, for gold pairs: the original is known to be the better side.

A gold pair shows a result against a copy of itself made worse here, on this machine (weight-free,
nothing sent to the service): ``"frozen"`` (a video's first frame held for its whole length),
``"blur"`` (a heavy Gaussian blur, a tenth of the width) or ``"black"`` (a video's middle
half black; an image's lower half). An image has no frames to freeze: ``"frozen"`` blurs it.
Videos are re-encoded as H.264 (yuv420p) MP4 at most :data:`WIDTH` px wide, as previews are;
audio is dropped (a gold pair is judged on its picture).

Example:
    >>> import io
    >>> from PIL import Image
    >>> buffer = io.BytesIO(); Image.new("RGB", (64, 32), "white").save(buffer, "PNG")
    >>> worse = Image.open(io.BytesIO(degrade(buffer.getvalue(), "black")))
    >>> worse.size, worse.getpixel((10, 30)), worse.getpixel((10, 2))
    ((64, 32), (0, 0, 0), (255, 255, 255))
"""

from __future__ import annotations

import io
import os
import tempfile
from fractions import Fraction
from typing import Any, Literal, get_args

from genlab.media._sniff import SNIFF_BYTES, sniff

Degradation = Literal["frozen", "blur", "black"]
DEGRADATIONS: tuple[Degradation, ...] = get_args(Degradation)
"""The ways a gold pair's copy is made worse."""

WIDTH = 640
"""A degraded video's widest side, as a preview's (it is only ever shown)."""


def degrade(data: bytes, how: Degradation) -> bytes:
    """``data`` (a whole image or video file) made worse in the way ``how`` names.

    Returns PNG bytes for an image, MP4 bytes for a video.

    Raises:
        ValueError: ``how`` is not one of :data:`DEGRADATIONS`, or ``data`` is neither an
            image nor a video.
    """
    if how not in DEGRADATIONS:
        raise ValueError(f"how must be one of {list(DEGRADATIONS)}, got {how!r}")
    found = sniff(data[:SNIFF_BYTES])
    if found is not None and found.mime.startswith("video/"):
        return _video(data, how)
    if found is not None and found.mime.startswith("image/"):
        return _image(data, how)
    raise ValueError("only an image or a video can be degraded")


def _worse(picture: Any, how: Degradation, black: bool) -> Any:
    from PIL import Image, ImageFilter

    if how == "black":
        if not black:
            return picture
        out = picture.copy()
        out.paste(Image.new(out.mode, out.size), (0, 0))
        return out
    return picture.filter(ImageFilter.GaussianBlur(max(2.0, picture.width / 10)))


def _image(data: bytes, how: Degradation) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as opened:
        picture = opened.convert("RGB")
    if how == "black":  # the lower half black: the rest still says what the result was
        half = picture.copy()
        lower = half.crop((0, half.height // 2, half.width, half.height))
        half.paste(_worse(lower, "black", True), (0, half.height // 2))
        picture = half
    else:
        picture = _worse(picture, "blur", False)
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


def _even(value: float) -> int:
    return max(2, int(value) // 2 * 2)


def _video(data: bytes, how: Degradation) -> bytes:
    import av

    with tempfile.TemporaryDirectory(prefix="genlab-gold-") as folder:
        target_path = os.path.join(folder, "gold.mp4")
        with av.open(io.BytesIO(data), mode="r") as source:
            vin = source.streams.video[0]
            frames = [f.to_image() for f in source.decode(vin)]  # type: ignore[no-untyped-call]
            rate = Fraction(vin.average_rate or vin.guessed_rate or 24)
        if not frames:
            raise ValueError("no video frame could be decoded")
        scale = min(1.0, WIDTH / frames[0].width)
        size = (_even(frames[0].width * scale), _even(frames[0].height * scale))
        count = len(frames)
        with av.open(target_path, mode="w", format="mp4",
                     options={"movflags": "+faststart"}) as target:
            out: Any = target.add_stream("libx264", rate=rate)
            out.width, out.height, out.pix_fmt = size[0], size[1], "yuv420p"
            out.options = {"crf": "30", "preset": "veryfast", "profile": "main"}
            for index, picture in enumerate(frames):
                shown = frames[0] if how == "frozen" else picture
                middle = count // 4 <= index < count - count // 4
                if how != "frozen":
                    shown = _worse(shown, how, black=middle)
                frame = av.VideoFrame.from_image(  # type: ignore[no-untyped-call]
                    shown.resize(size)).reformat(format="yuv420p")
                frame.pts = index
                frame.time_base = 1 / rate
                for packet in out.encode(frame):
                    target.mux(packet)
            for packet in out.encode(None):
                target.mux(packet)
        with open(target_path, "rb") as done:
            return done.read()
