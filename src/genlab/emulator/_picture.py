"""The pictures the emulator's media show: a soft colour field, the request's text on a dark
panel, and a progress bar. Pure numpy and Pillow; encoding lives in ``_render``."""

from __future__ import annotations

import colorsys
import functools
import math
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

U8Array = np.ndarray[Any, np.dtype[np.uint8]]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

_FLOOR = 72  # every channel of the colour field stays at or above this ...
_PANEL = 64  # ... so the text panel can darken it by subtraction without clipping
_TRACK, _FILL = (24, 26, 34), (250, 250, 250)
_TITLE_RGB, _BODY_RGB = (255, 255, 255), (226, 230, 238)
_REF_SIZE = 100  # words are measured once at this font size; widths scale with the size
_MIN_SIZE = 6
MAX_CHARS = 2000  # no longer line could be read at any size; this caps the layout work


def text_seed(lines: Sequence[str]) -> int:
    """A stable seed for the colours of a picture showing ``lines``."""
    return zlib.crc32("\n".join(lines).encode())


@dataclass(frozen=True, slots=True)
class Bar:
    """The progress bar: columns ``x0`` to ``x0 + width``, rows ``y0`` to ``y1``, all even
    so that it lines up with yuv420p's half-size chroma planes."""

    x0: int
    width: int
    y0: int
    y1: int


def bar_stop(bar: Bar, progress: float) -> int:
    return bar.x0 + 2 * round(bar.width * min(max(progress, 0.0), 1.0) / 2)


def draw_bar(pixels: U8Array, bar: Bar, progress: float, *, dy: int = 0) -> None:
    """Fill ``progress`` (0.0 to 1.0) of the bar; ``pixels`` starts at row ``dy``."""
    pixels[bar.y0 - dy : bar.y1 - dy, bar.x0 : bar_stop(bar, progress)] = _FILL


def planar_field(width: int, height: int, *, seed: int) -> U8Array:
    """An (h, w, 3) colour field whose palette and direction depend on ``seed``.

    The colour is planar, c00 + dx * x + dy * y, so each row differs from the one above by one
    constant step: rows are built as blocks of copies, and PNG's Up filter turns them into
    runs. Every channel stays within [_FLOOR, 251].
    """
    rng = random.Random(seed)
    hue = rng.random()

    def rgb(h: float, s: float, v: float) -> np.ndarray[Any, np.dtype[np.float64]]:
        return np.array(colorsys.hsv_to_rgb(h % 1.0, s, v)) * 255.0

    c00 = rgb(hue, 0.55, 0.70)
    dx = rgb(hue + rng.uniform(0.06, 0.2), 0.50, 0.88) - c00
    dy = rgb(hue - rng.uniform(0.06, 0.2), 0.65, 0.50) - c00
    if rng.random() < 0.5:  # flip left and right for variety
        c00, dx = c00 + dx, -dx
    while np.any(np.abs(c00 + dx + dy - 127.5) > 127.5):
        dy *= 0.8  # the fourth corner is implied; shrink until it is a colour
    scale = (250.0 - _FLOOR) / 255.0  # pastel tones, and room for the panel to darken
    c00, dx, dy = _FLOOR + c00 * scale, dx * scale, dy * scale
    hx = np.rint(c00 + np.outer(np.linspace(0.0, 1.0, width), dx))
    vy = np.rint(np.outer(np.linspace(0.0, 1.0, height), dy))
    low = vy.min(axis=0)
    row, offsets = (hx + low).astype(np.uint8), (vy - low).astype(np.uint8)
    out = np.empty((height, width, 3), dtype=np.uint8)
    starts = [0, *(np.flatnonzero(np.any(offsets[1:] != offsets[:-1], axis=1)) + 1), height]
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        out[a:b] = row + offsets[a]
    return out


def draw_scene(
    width: int, height: int, lines: Sequence[str], *, seed: int, bar: bool, watermark: bool = False
) -> tuple[U8Array, Bar]:
    """The colour field with ``lines`` on a dark panel, if ``bar`` an empty bar track, and if
    ``watermark`` a watermark in the top right corner."""
    pixels = planar_field(width, height, seed=seed)
    short = min(width, height)
    margin, pad = max(2, round(short * 0.06)), max(2, round(short * 0.025))
    thick = max(2, 2 * round(short * 0.009))
    y1 = max(thick, (height - margin) // 2 * 2)
    x0 = min(margin // 2 * 2, width // 4 * 2)
    geometry = Bar(x0=x0, width=(width - 2 * x0) // 2 * 2, y0=y1 - thick, y1=y1)
    bottom = height - margin
    if bar:
        pixels[geometry.y0 : y1, x0 : x0 + geometry.width] = _TRACK
        bottom = geometry.y0 - margin // 2
    box = (margin + pad, margin + pad, width - margin - pad, bottom - pad)
    if box[2] - box[0] >= 8 and box[3] - box[1] >= 8:
        _draw_text(pixels, layout(lines, box[2] - box[0], box[3] - box[1]), box, pad)
    if watermark:
        draw_watermark(pixels)
    return pixels, geometry


WATERMARK = "AI generated · genlab"


def draw_watermark(pixels: U8Array) -> None:
    """Stamp :data:`WATERMARK` in white with a dark outline in the top right corner, sized to
    the picture, as a service's visible watermark is."""
    height, width, _ = pixels.shape
    size = max(_MIN_SIZE, round(min(width, height) * 0.045))
    face = font(size)
    stroke = max(1, size // 8)
    text_w = math.ceil(face.getlength(WATERMARK)) + 2 * stroke
    text_h = line_height(size) + 2 * stroke
    margin = max(2, round(min(width, height) * 0.02))
    x0, y0 = max(0, width - margin - text_w), min(margin, max(0, height - text_h))
    region = pixels[y0 : y0 + text_h, x0 : x0 + text_w]
    img = Image.fromarray(region)
    ImageDraw.Draw(img).text(
        (stroke, stroke), WATERMARK, font=face, fill=_FILL, stroke_width=stroke,
        stroke_fill=_TRACK,
    )
    region[:] = np.asarray(img)


def _draw_text(
    pixels: U8Array, laid: list[tuple[str, int]], box: tuple[int, int, int, int], pad: int
) -> None:
    if not laid:
        return
    x0, y0, _, y1 = box
    total = sum(line_height(size) for _, size in laid)
    widest = max(font(size).getlength(text) for text, size in laid)
    top = y0 + (y1 - y0 - total) // 2
    height, width, _ = pixels.shape
    r0, r1 = max(0, top - pad), min(height, top + total + pad)
    c0, c1 = max(0, x0 - pad), min(width, x0 + math.ceil(widest) + pad)
    # Only the panel goes through Pillow; copying the whole frame costs more than the text.
    panel = pixels[r0:r1, c0:c1]
    np.subtract(panel, _PANEL, out=panel)
    img = Image.fromarray(panel)
    draw = ImageDraw.Draw(img)
    y = top - r0
    for i, (text, size) in enumerate(laid):
        draw.text((x0 - c0, y), text, font=font(size), fill=_TITLE_RGB if i == 0 else _BODY_RGB)
        y += line_height(size)
    panel[:] = np.asarray(img)


def layout(lines: Sequence[str], box_w: int, box_h: int) -> list[tuple[str, int]]:
    """Wrapped ``(text, font size)`` rows that fit the box: shrink until they fit, then cut.

    The first line is a title, 1.3 times larger. Words of up to 20 characters never break;
    longer ones (URLs, hashes) break anywhere rather than shrink all the text.
    """
    texts = [t for t in (" ".join(line.split())[:MAX_CHARS] for line in lines) if t]
    if not texts:
        return []
    ref = font(_REF_SIZE)
    space = ref.getlength(" ")
    words = [[(w, ref.getlength(w)) for w in text.split(" ")] for text in texts]
    size = max(_MIN_SIZE, min(round(math.sqrt(box_w * box_h) / 17), box_h // 5))
    while True:
        laid: list[tuple[str, int]] = []
        whole = True
        for i, row in enumerate(words):
            s = round(size * 1.3) if i == 0 and len(words) > 1 else size
            limit = box_w * _REF_SIZE / s * 0.97
            whole = whole and all(w <= limit for word, w in row if len(word) <= 20)
            laid += [(t, s) for t in _wrap(row, limit, space)]
        fits = whole and sum(line_height(s) for _, s in laid) <= box_h
        if fits and all(font(s).getlength(t) <= box_w for t, s in laid):
            return laid
        if size == _MIN_SIZE:
            break
        size = max(_MIN_SIZE, int(size * 0.85))
    kept: list[tuple[str, int]] = []
    used = 0
    for text, s in laid:
        used += line_height(s)
        if used > box_h:
            break
        kept.append((text, s))
    if kept and len(kept) < len(laid):
        text, s = kept[-1]
        kept[-1] = (text[: max(0, len(text) - 2)] + "…", s)
    return kept


def _wrap(words: list[tuple[str, float]], limit: float, space: float) -> list[str]:
    """Greedy word wrap; ``limit`` and the widths are in reference-size pixels."""
    out: list[str] = []
    current: list[str] = []
    used = 0.0
    for word, width in words:
        if width > limit:  # wider than a line on its own: break it between characters
            if current:
                out.append(" ".join(current))
                current, used = [], 0.0
            *full, word = _split_word(word, limit)
            out += full
            width = font(_REF_SIZE).getlength(word)
        grown = used + space + width if current else width
        if current and grown > limit:
            out.append(" ".join(current))
            current, used = [word], width
        else:
            current.append(word)
            used = grown
    if current:
        out.append(" ".join(current))
    return out


def _split_word(word: str, limit: float) -> list[str]:
    ref = font(_REF_SIZE)
    pieces, start, used = [], 0, 0.0
    for i, char in enumerate(word):
        w = ref.getlength(char)
        if used + w > limit and i > start:
            pieces.append(word[start:i])
            start, used = i, 0.0
        used += w
    return [*pieces, word[start:]]


def line_height(size: int) -> int:
    return math.ceil(size * 1.25)


@functools.lru_cache(maxsize=64)
def font(size: int) -> Font:
    return ImageFont.load_default(size=size)
