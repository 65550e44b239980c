"""The one card of a result, and the media tiles every view is built of.

:func:`result_html` draws a :class:`~genlab.Result`: model and status, task, time, date and
credits, the measured facts of its media and what differs from the request, the reuse note,
the prompt and settings, and its media, embedded (display-size previews chosen by what
browsers decode, :func:`genlab.media.preview.embed`) with a poster and a link to each
original. A cell (``_repr_html_``), the Studio, the History tab, galleries and reports all
draw a result with it, so a task looks the same wherever it appears.

A card's video plays once, muted, when the card appears (browsers allow muted autoplay);
its controls replay it with sound. Galleries and reports wait for a click. After each video
an image of its first frame follows, hidden by the card's style while the video is there:
where a host strips ``<video>`` (GitHub's notebook view), the poster and the link remain.

Tiles enlarge on demand: "enlarge" (or a click on an image) widens a tile to the output
area. The switch is a hidden checkbox and CSS, not a script, so it works in a widget, in a
trusted or untrusted output and in a saved report alike. Colours are JupyterLab's CSS
variables (:mod:`genlab.display`), with fallbacks outside JupyterLab.

Example:
    >>> from genlab.media import Result
    >>> page = result_html(Result(task_id="t1", status="failed", model="video-a",
    ...                           error={"code": "OOM", "message": "<b>out</b>"}))
    >>> "OOM: &lt;b&gt;out&lt;/b&gt;" in page
    True
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, urlsplit

from genlab._errors import GenlabError, MediaError
from genlab.display import (
    ERROR,
    LINK,
    MUTED,
    WARNING,
    card,
    escape,
    grid,
    status_badge,
    text,
)
from genlab.jupyter import served_url
from genlab.media import (
    MEDIA_SUFFIXES,
    SNIFF_BYTES,
    VIDEO_SUFFIXES,
    media_location,
    media_name,
    media_size,
    sniff,
)
from genlab.media._storage import read_media
from genlab.media.preview import MAX_EMBED_BYTES, embed, image_preview, video_preview

if TYPE_CHECKING:  # a Result draws itself with this module: no import back at run time
    from genlab.media._result import Result

SHOWN_FIELDS = 6
"""Settings shown beside the prompt; the full request is in the JSON sidecar."""
TILE_WIDTH = 320
"""How wide a video or image is shown in a card or a gallery tile before it is enlarged."""
MAX_READ_BYTES = 64 * 1024 * 1024
"""No kept video larger than this is read to make a preview; its cover stands in."""
THUMB_WIDTH = 480
"""Images wider than this (in pixels) may be embedded as a smaller copy (shown at 320 px,
enlarged on click)."""
TILE_THUMB = 240
"""How wide (in pixels) a grid tile's thumbnail is made: an image tile is a WebP copy this
wide, a video tile its first frame this wide until it is clicked."""
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
_SIDE_STEMS = ("_cover", "_last_frame")

Play = Literal["once", "click"]
Frame = Literal["card", "tile"]
"""How media are drawn: ``"card"`` (a cell's or the Studio's card: display-size previews that
enlarge) or ``"tile"`` (a grid's tile: thumbnails at tile size, loaded lazily, a video its
poster until clicked)."""

MEDIA_CSS = f"""
.genlab-medias {{ display: flex; flex-wrap: wrap; gap: 6px; align-items: flex-start; }}
.genlab-media {{ flex: 0 1 auto; max-width: 100%; margin: 0; }}
.genlab-media:has(.genlab-zoom:checked) {{ flex-basis: 100%; }}
.genlab-media video, .genlab-media img {{ display: block; width: {TILE_WIDTH}px;
  max-width: 100%; height: auto; background: #000; }}
.genlab-media img {{ background: none; cursor: zoom-in; }}
.genlab-media video ~ img.genlab-poster {{ display: none; }}
.genlab-media .genlab-zoom:checked ~ video,
.genlab-media .genlab-zoom:checked ~ label > img {{ width: 100%; max-width: 960px;
  cursor: zoom-out; }}
.genlab-media .genlab-links {{ font-size: 0.8em; color: {MUTED};
  margin-top: 2px; overflow-wrap: anywhere; }}
.genlab-media .genlab-links label {{ cursor: pointer; color: {LINK}; }}
.genlab-media .genlab-links a {{ color: {LINK}; }}
.genlab-media.genlab-tile img {{ cursor: default; }}
.genlab-media.genlab-tile video, .genlab-media.genlab-tile img {{ width: 100%; }}
.genlab-media .genlab-zoom:checked ~ .genlab-links .genlab-grow,
.genlab-media .genlab-zoom:not(:checked) ~ .genlab-links .genlab-shrink {{ display: none; }}
"""
"""The tiles' stylesheet; every page of tiles includes it once."""


@dataclass(frozen=True, slots=True)
class Shown:
    """One media item ready for a page: its element and data URI, and/or a note for people.

    ``tag`` is None when nothing can be shown; ``note`` then says why. ``poster`` is a
    video's first frame as a data URI.

    Example:
        >>> shown = Shown("img", data_uri(b"...", "image/png"))
        >>> shown.tag, shown.uri.startswith("data:image/png;base64,")
        ('img', True)
        >>> Shown(None, note="media unavailable (HTTP 404)").note
        'media unavailable (HTTP 404)'
    """

    tag: Literal["video", "img"] | None
    uri: str = ""
    note: str = ""
    poster: str = ""


def data_uri(data: bytes, mime: str) -> str:
    """``data`` as a ``data:`` URI.

    Example:
        >>> data_uri(b"hi", "text/plain")
        'data:text/plain;base64,aGk='
    """
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def reason(exc: BaseException) -> str:
    """Why media could not be read, for people, without echoing its (possibly local) URL.

    Example:
        >>> from genlab._errors import MediaError
        >>> reason(MediaError("HTTP 404", url="http://127.0.0.1:8000/media/x.mp4", status=404))
        'HTTP 404'
        >>> reason(ValueError("no answer from http://127.0.0.1:8000/media/x.mp4"))
        'no answer from the media URL'
    """
    if isinstance(exc, MediaError):
        return exc.reason
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = _URL.sub("the media URL", str(exc)).strip()
    return text or type(exc).__name__


def shown_bytes(
    data: bytes, *, cover: Callable[[], bytes | None] | None = None,
    max_bytes: int = MAX_EMBED_BYTES, image_width: int = THUMB_WIDTH, fit_images: bool = False,
) -> Shown:
    """What a page shows for ``data`` (a whole media file): :func:`genlab.media.preview.embed`'s
    choice as data URIs (a video as the preview every front end plays, with its poster; an
    image as it is when browsers show it and it is small, else a ``image_width`` copy); for a
    video too large to embed even as a preview, its cover (``cover()``), else its first
    frame, else a note.

    Example:
        >>> shown_bytes(b"not media").note
        'media in an unrecognised format'
    """
    made = embed(data, image_width=image_width, max_bytes=max_bytes, fit_images=fit_images)
    if made.kind is None and _is_video(data):
        return _large_video(len(data), cover, image_width, made.poster)
    note = made.note or ""
    if made.kind is None or made.kind == "audio" or not made.mime:
        return Shown(None, note=note or "audio only: open the original")
    tag: Literal["video", "img"] = "img" if made.kind == "image" else "video"
    poster = data_uri(made.poster, "image/jpeg") if made.poster else ""
    return Shown(tag, data_uri(made.data, made.mime), note=note, poster=poster)


def shown_file(
    path: Path | str, cover: Path | str | None = None, *, max_bytes: int = MAX_EMBED_BYTES,
    image_width: int = THUMB_WIDTH,
) -> Shown:
    """:func:`shown_bytes` of one kept file (a path, or a storage URL such as
    ``s3://bucket/runs/t1.mp4``); a file that cannot be read becomes a note."""
    def read_cover() -> bytes | None:
        return read_media(cover) if cover else None

    try:
        size = media_size(path)
        video = Path(media_name(path)).suffix.lower() in VIDEO_SUFFIXES
        if video and size > MAX_READ_BYTES:
            return _large_video(size, read_cover, image_width)
        data = read_media(path)
    except (OSError, GenlabError) as exc:  # missing, unreadable, or its store unreachable
        return Shown(None, note=f"could not be read ({reason(exc)})")
    return shown_bytes(data, cover=read_cover, max_bytes=max_bytes, image_width=image_width)


def _is_video(data: bytes) -> bool:
    """True for a video: when it is too large to embed, its cover stands in."""
    found = sniff(data[:SNIFF_BYTES])
    return found is not None and found.mime.startswith("video/")


def _large_video(
    size: int, cover: Callable[[], bytes | None] | None, image_width: int,
    first_frame: bytes | None = None,
) -> Shown:
    """A video over the embedding limit: its cover as a smaller copy, else its own first
    frame, else a note."""
    note = f"video is {size / 1e6:.1f} MB, too large to embed"
    missing = ", and it has no cover"
    data = None
    try:
        data = cover() if cover is not None else None
    except Exception as exc:  # a cover that cannot be read becomes part of the note
        missing = f"; its cover is unavailable ({reason(exc)})"
    small = image_preview(data, width=image_width) if data else None
    if small is not None:
        return Shown("img", data_uri(small[0], small[1]), note=f"{note}; showing its cover")
    if first_frame:
        return Shown("img", data_uri(first_frame, "image/jpeg"),
                     note=f"{note}; showing its first frame")
    return Shown(None, note=note + missing)


def _key(uri: str, salt: str) -> str:
    digest = hashlib.blake2b(digest_size=6)
    digest.update(salt.encode())
    digest.update(uri[:4096].encode())
    digest.update(str(len(uri)).encode())
    return "genlab-z-" + digest.hexdigest()


def tile_html(shown: Shown, *, salt: str = "", caption: str = "", alt: str = "",
              extra: str = "", play: Play = "click", frame: Frame = "card") -> str:
    """One media item as a compact tile with an enlarge switch (``caption`` is HTML).

    ``extra`` is added to the ``<video>`` element's attributes (a gallery's sync handlers);
    ``play="once"`` plays a video once, muted, when it appears. ``frame="tile"`` is a
    grid's tile: its image loads lazily and does not enlarge (it is a thumbnail; the link
    opens the original), its video shows its poster and loads nothing until it is played.

    Example:
        >>> page = tile_html(Shown("img", "data:image/png;base64,AA=="), alt="a kite")
        >>> '<img src="data:image/png;base64,AA=="' in page, "genlab-zoom" in page
        (True, True)
    """
    if shown.tag is None:
        return f'<div class="genlab-media"><div class="genlab-links">{caption}</div></div>'
    label = escape(alt)
    if frame == "tile":
        return _thumb_tile(shown, caption, label, extra)
    key = _key(shown.uri, salt)
    toggle = f'<input type="checkbox" class="genlab-zoom" id="{key}" hidden>'
    grow = (
        f'<label for="{key}"><span class="genlab-grow">&#10530; enlarge</span>'
        f'<span class="genlab-shrink">&#10529; smaller</span></label>'
    )
    if shown.tag == "video":
        cover = f' poster="{shown.poster}"' if shown.poster else ""
        how = ' autoplay muted preload="auto"' if play == "once" else ' preload="metadata"'
        element = (f'<video controls playsinline{how} src="{shown.uri}"{cover}{extra}>'
                   "</video>")
        if shown.poster:  # stays where a host strips <video>; hidden by the style otherwise
            element += f'<img class="genlab-poster" src="{shown.poster}" alt="{label}">'
    else:
        element = (
            f'<label for="{key}" title="click to enlarge">'
            f'<img src="{shown.uri}" alt="{label}"></label>'
        )
    links = " · ".join(part for part in (grow, caption) if part)
    return (
        f'<figure class="genlab-media">{toggle}{element}'
        f'<figcaption class="genlab-links">{links}</figcaption></figure>'
    )


def run_tile_html(media: str, *, status: str, facts: Sequence[str] = (),
                  notes: Sequence[str] = (), task_id: str | None = None,
                  within: str = "") -> str:
    """The tile frame: one result in a grid (an experiment's, a comparison's gallery) as its
    media (``media``: HTML from :func:`media_html` or :func:`tile_html`), its status as a
    badge where it did not succeed or shows no media, ``notes`` (an error, why media are
    missing) and one line of ``facts`` (seed, seconds, scores, credits), titled with its
    task. ``within`` names the grid it belongs to (a class its page styles). Every text is
    escaped here.

    Example:
        >>> page = run_tile_html("", status="failed", facts=["seed 1", "2.0 s"],
        ...                      notes=["<b>refused</b>"], task_id="t1")
        >>> "&lt;b&gt;refused&lt;/b&gt;" in page, "seed 1 · 2.0 s" in page, "task t1" in page
        (True, True, True)
    """
    parts = [media]
    if status != "succeeded" or not media:
        parts.append(f'<div class="status">{status_badge(status)}</div>')
    parts += [f'<div class="note">{escape(n)}</div>' for n in notes if n]
    if facts:
        title = f' title="task {escape(task_id)}"' if task_id else ""
        parts.append(f'<div class="meta"{title}>{escape(" · ".join(facts))}</div>')
    where = f" {within}" if within else ""
    return (f'<div class="genlab-run run run-{escape(status)}{where}">{"".join(parts)}'
            "</div>")


def _thumb_tile(shown: Shown, caption: str, label: str, extra: str) -> str:
    """A grid's tile: a lazily loaded thumbnail, or a video's poster that loads its preview
    only when played (``preload="none"``)."""
    if shown.tag == "video":
        cover = f' poster="{shown.poster}"' if shown.poster else ""
        element = (f'<video controls playsinline preload="none" src="{shown.uri}"{cover}'
                   f"{extra}></video>")
        if shown.poster:  # stays where a host strips <video>; hidden by the style otherwise
            element += (f'<img class="genlab-poster" src="{shown.poster}" alt="{label}" '
                        'loading="lazy">')
    else:
        element = f'<img src="{shown.uri}" alt="{label}" loading="lazy">'
    said = f'<figcaption class="genlab-links">{caption}</figcaption>' if caption else ""
    return f'<figure class="genlab-media genlab-tile">{element}{said}</figure>'


_THUMBS: OrderedDict[tuple[str, int, int, int], Shown] = OrderedDict()
_THUMBS_LOCK = threading.Lock()
_THUMBS_KEPT = 4096  # thumbnails of a few kB each: a few thousand tiles redraw at once


def thumbnail_bytes(data: bytes, *, width: int = TILE_THUMB) -> tuple[bytes, str] | None:
    """An image (or a video's first frame) as a small thumbnail at most ``width`` px wide,
    upright by its EXIF orientation, as WebP (transparency kept); None when it cannot be
    read.

    Example:
        >>> from genlab.emulator import samples
        >>> small, mime = thumbnail_bytes(samples.image(1024, 1024), width=240)
        >>> mime, len(small) < 20_000
        ('image/webp', True)
        >>> thumbnail_bytes(b"not an image") is None
        True
    """
    from PIL import Image, ImageOps

    from genlab.media._info import pillow_reads
    from genlab.media.preview import poster

    pillow_reads(data)
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.draft("RGB", (width, width))  # a JPEG decodes at the size it is shown
            image = ImageOps.exif_transpose(opened) or opened
            factor = min(image.width // width, image.height // width)
            if factor >= 2:  # a box reduction first: resizing the whole picture is slow
                image = image.reduce(factor)
            if image.width > width:
                image = image.resize((width, max(1, round(image.height * width
                                                          / image.width))),
                                     Image.Resampling.BILINEAR)
            alpha = image.mode in ("RGBA", "LA", "PA") or (
                image.mode == "P" and "transparency" in image.info)
            if image.mode.startswith("I;16") or image.mode == "I":
                image = image.point(lambda v: v / 256).convert("L")
            out = io.BytesIO()
            # WebP: a third of a JPEG's bytes at this size, transparency kept; method 1 is
            # its quick encoder (a few ms a tile).
            image.convert("RGBA" if alpha else "RGB").save(out, "WEBP", quality=70,
                                                           method=1)
            return out.getvalue(), "image/webp"
    except (OSError, ValueError, Image.DecompressionBombError):
        pass
    frame = poster(data, width=width)  # a video, or a still only FFmpeg reads
    return (frame, "image/jpeg") if frame else None


def prepare_thumbnails(paths: Iterable[Path | str], *, width: int = TILE_THUMB) -> None:
    """Make the thumbnails of these kept files side by side (decoding and scaling a picture
    leave Python's lock, so a page of tiles takes about as many times less as there are
    cores); a grid calls it before it draws a page, :func:`prepare_previews` when a result
    is kept.

    Example:
        >>> prepare_thumbnails(["no-such-file.png"])
    """
    from concurrent.futures import ThreadPoolExecutor

    wanted = [media_location(p) for p in paths]
    wanted = [p for p in wanted if Path(media_name(p)).suffix.lower() in MEDIA_SUFFIXES
              and not Path(media_name(p)).stem.endswith("_cover")]
    if len(wanted) < 2:
        for where in wanted:
            thumbnail_file(where, width=width)
        return
    with ThreadPoolExecutor(max_workers=min(len(wanted), os.cpu_count() or 1)) as pool:
        list(pool.map(lambda where: thumbnail_file(where, width=width), wanted))


def thumbnail_file(path: Path | str, cover: Path | str | None = None, *,
                   width: int = TILE_THUMB) -> Shown:
    """What a grid's tile shows for one kept file: an image as a :func:`thumbnail_bytes`
    copy; a video as its browser-playable preview (:func:`shown_file`) with a thumbnail of
    its first frame as the poster. Kept in memory by file, size and time: a page of tiles
    drawn again is not made again.

    Example:
        >>> import pathlib, tempfile
        >>> from genlab.emulator import samples
        >>> kept = pathlib.Path(tempfile.mkdtemp()) / "t1.png"
        >>> _ = kept.write_bytes(samples.image(1024, 1024))
        >>> thumbnail_file(kept).uri.startswith("data:image/webp;base64,")
        True
        >>> thumbnail_file(kept.with_name("gone.png")).note
        'could not be read (No such file or directory)'
    """
    try:
        size = media_size(path)
        when = Path(path).stat().st_mtime_ns if isinstance(path, Path) else 0
    except (OSError, GenlabError) as exc:
        return Shown(None, note=f"could not be read ({reason(exc)})")
    key = (str(path), size, when, width)
    with _THUMBS_LOCK:
        if key in _THUMBS:
            _THUMBS.move_to_end(key)
            return _THUMBS[key]
    if Path(media_name(path)).suffix.lower() in VIDEO_SUFFIXES:
        shown = shown_file(path, cover, image_width=width)
        if shown.tag == "video" and shown.poster:
            small = thumbnail_bytes(base64.b64decode(shown.poster.partition(",")[2]),
                                    width=width)
            if small is not None:
                shown = Shown("video", shown.uri, shown.note, data_uri(*small))
    else:
        try:
            data = read_media(path)
        except (OSError, GenlabError) as exc:
            return Shown(None, note=f"could not be read ({reason(exc)})")
        small = thumbnail_bytes(data, width=width)
        shown = (Shown("img", data_uri(*small)) if small is not None
                 else Shown(None, note="an image that cannot be read"))
    with _THUMBS_LOCK:
        _THUMBS[key] = shown
        while len(_THUMBS) > _THUMBS_KEPT:
            _THUMBS.popitem(last=False)
    return shown


def original_link(path: Path | str, *, served: bool = False,
                  page_folder: str | os.PathLike[str] | None = None, brief: bool = False
                  ) -> str:
    """Where the original is: a link when the browser can open it, else the path as text;
    with its size when known. ``brief`` (a grid's tile): the link reads "original", its
    file's name in its title.

    A cell's output and an export link the file relative to the notebook's folder (the
    working directory): JupyterLab and Notebook 7 turn that into the server's ``files/``
    URL, and an export finds the file beside it; a file outside that folder, which the
    server does not serve, is named instead. A saved page (a report) links it relative to
    ``page_folder``, the folder the page is read from, ``../`` included. ``served=True`` is
    for widgets, whose HTML no front end rewrites (a relative link there resolves against
    the page, ``/lab/tree/...``): the link is the server's own URL for the file
    (:func:`genlab.jupyter.served_url`, under any base URL), and relative only where no
    server said where it serves files.

    Example:
        >>> original_link(Path("genlab-media/t1.mp4"))
        'original: <a href="genlab-media/t1.mp4" target="_blank" download>t1.mp4</a>'
        >>> original_link(Path("genlab-media/t1.mp4"), brief=True)
        '<a href="genlab-media/t1.mp4" target="_blank" download title="t1.mp4">original</a>'
        >>> original_link(Path("genlab-media/t1.mp4"), page_folder="genlab-output")
        'original: <a href="../genlab-media/t1.mp4" target="_blank" download>t1.mp4</a>'
    """
    if isinstance(path, str):  # in a store: the browser cannot open it, so it is named
        return f"original: <code>{escape(path)}</code>"
    try:
        size = f" ({_size(path.stat().st_size)})"
    except OSError:
        size = ""
    url = served_url(path) if served else None
    said = (f' title="{escape(path.name)}">original</a>' if brief
            else f">{escape(path.name)}</a>")
    lead = "" if brief else "original: "
    if url is not None:
        return f'{lead}<a href="{escape(url)}" target="_blank" download{said}{size}'
    try:
        if page_folder is not None:
            shown = Path(os.path.relpath(path.resolve(), Path(page_folder).resolve()))
        else:
            shown = Path(os.path.relpath(path)) if path.is_absolute() else path
    except ValueError:  # another drive on Windows
        shown = path
    if shown.is_absolute() or (page_folder is None and shown.as_posix().startswith("../")):
        return f"original: <code title='{escape(path)}'>{escape(path.name)}</code>{size}"
    href = escape(quote(shown.as_posix()))
    said = (f' title="{escape(shown.name)}">original</a>' if brief
            else f">{escape(shown.name)}</a>")
    return f'{lead}<a href="{href}" target="_blank" download{said}{size}'


def _size(count: int) -> str:
    # A no-break space: a narrow tile never wraps "135" away from its "kB".
    if count < 1_000_000:
        return f"{count / 1000:.0f}\u00a0kB"
    return f"{count / 1e6:.1f}\u00a0MB"


def media_html(paths: Sequence[Path | str], *, play: Play = "click",
               links: bool = True, served: bool = False,
               page_folder: str | os.PathLike[str] | None = None, frame: Frame = "card",
               extra: str = "", style: bool = True) -> str:
    """Kept files as tiles: videos as their browser-playable preview with a poster and a
    link to the original (``served``, ``page_folder``: as :func:`original_link` says),
    images enlargeable;
    covers stand in only for videos too large to embed, and other files (the JSON sidecar)
    are skipped. ``frame="tile"`` draws a grid's tiles (:func:`thumbnail_file`, loaded
    lazily); ``extra`` is added to each ``<video>``'s attributes (a row's sync handlers);
    ``style=False`` leaves out :data:`MEDIA_CSS` for a page that includes it once.

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> (folder / "t1.json").write_text("{}")
        2
        >>> media_html([folder / "t1.json"])
        ''
    """
    located = [media_location(p) for p in paths]
    names = {Path(media_name(p)).stem: p for p in located}
    videos: list[str] = []
    images: list[str] = []
    for where in located:
        path = Path(media_name(where))
        if path.suffix.lower() not in MEDIA_SUFFIXES or path.stem.endswith("_cover"):
            continue
        is_video = path.suffix.lower() in VIDEO_SUFFIXES
        cover = names.get(f"{path.stem}_cover")
        shown = (thumbnail_file(where, cover) if frame == "tile"
                 else shown_file(where, cover))
        parts = []
        if path.stem.endswith("_last_frame"):
            parts.append("last frame")
        if shown.note:
            parts.append(escape(f"{path.name}: {shown.note}"))
        if links:
            parts.append(original_link(where, served=served, page_folder=page_folder,
                                       brief=frame == "tile"))
        tile = tile_html(shown, salt=str(where), caption=" · ".join(parts), alt=path.name,
                         play=play if is_video else "click", frame=frame,
                         extra=extra if is_video else "")
        (videos if is_video else images).append(tile)
    if not videos and not images:
        return ""
    css = f"<style>{MEDIA_CSS}</style>" if style else ""
    return f'<div class="genlab-medias">{css}{"".join(videos)}{"".join(images)}</div>'



def prepare_previews(paths: Sequence[Path | str]) -> None:
    """Make the previews the cards of these kept files will embed, so a card drawn later
    is drawn from them (:func:`genlab.media.preview.video_preview` caches each, and a card
    drawn while one is being made waits for it rather than making it again).

    The client calls it when it keeps a result, on a thread of its own: a camera-like video
    needs a display-size re-encode that takes a good part of a second, and a notebook draws
    the card soon after. It makes each file's grid tile too (:func:`thumbnail_file`). Files
    it cannot read are left to the card, which says why.

    Example:
        >>> prepare_previews(["no-such-file.mp4"])
    """
    for where in (media_location(p) for p in paths):
        path = Path(media_name(where))
        if path.suffix.lower() in MEDIA_SUFFIXES and not path.stem.endswith("_cover"):
            thumbnail_file(where)  # its tile, for a grid drawn later (small, kept in memory)
        if path.suffix.lower() not in VIDEO_SUFFIXES or path.stem.endswith(_SIDE_STEMS):
            continue
        try:
            if media_size(where) > MAX_READ_BYTES:
                continue  # its card shows the cover: no preview to make
            data = read_media(where)
        except (OSError, GenlabError):
            continue
        video_preview(data)


def media_facts(result: Result) -> str:
    """The measured facts of a result's first media file, as one line.

    Example:
        >>> from genlab.media import MediaInfo, Result
        >>> media_facts(Result(task_id="t", status="succeeded", media=(MediaInfo(
        ...     kind="video", width=1280, height=720, duration=5.0, fps=24.0,
        ...     video_codec="h264", has_audio=False),)))
        '1280×720 · 5.0 s · 24 fps · h264 · no audio'
    """
    if not result.media:
        return ""
    first = result.media[0]
    parts: list[str] = []
    if first.width and first.height:
        parts.append(f"{first.width}×{first.height}")
    if first.kind == "video":
        if first.duration is not None:
            parts.append(f"{first.duration:.1f} s")
        if first.fps:
            parts.append(f"{first.fps:g} fps")
        if first.video_codec:
            parts.append(first.video_codec)
        parts.append(f"audio {first.audio_codec}" if first.has_audio and first.audio_codec
                     else ("audio" if first.has_audio else "no audio"))
    elif first.mime:
        parts.append(first.mime.removeprefix("image/"))
    images = [m for m in result.media if m.kind == "image"]
    if len(images) > 1:
        parts.append(f"{len(images)} images")
    return " · ".join(parts)


def result_html(result: Result, *, play: Play = "once", links: bool = True,
                media: bool = True, served: bool = False,
                frame: Literal["cell", "studio"] = "cell") -> str:
    """The card of one result (see the module docstring): ``play`` says whether its video
    plays once when shown or waits for a click; ``links`` whether originals are linked;
    ``media=False`` leaves the media out (a view that shows them elsewhere); ``served`` for
    a card inside a widget (see :func:`original_link`).

    ``frame`` is what surrounds it: ``"cell"``, the whole card with its header (a cell, the
    History tab, reports); ``"studio"``, the card inside the Studio's task card, whose header,
    badge and buttons are widgets of its own (no header, no prompt: the Studio shows them;
    links served). A grid's tile is :func:`media_html` with ``frame="tile"`` in
    :func:`run_tile_html`.

    Example:
        >>> from genlab.media import Result
        >>> done = Result(task_id="t1", status="succeeded", model="image-b", prompt="a kite")
        >>> "task t1" in result_html(done), "task t1" in result_html(done, frame="studio")
        (True, False)
    """
    if frame == "studio":
        return result_body_html(result, play=play, links=links, media=media, prompt=False,
                                served=True)
    facts = [f"task {result.task_id}"]
    if result.seconds is not None:
        facts.append(f"{result.seconds:.1f} s")
    if result.completed_at is not None:
        facts.append(f"{result.completed_at:%Y-%m-%d %H:%M} UTC")
    if result.credits is not None:
        facts.append(f"{result.credits:,} credits")
    told = text(result.note, MUTED, tag="div", cls="genlab-note") if result.note else ""
    if result.error is not None:
        whole = card(result.model, result.status, facts,
                     f"{result.error.code}: {result.error.message}", note_colour=ERROR)
        return f"<div class='genlab-record'>{told}{whole}</div>"
    request = result.request or {}
    settings = [f"{k} {v}" for k, v in request.items()
                if k not in ("model", "prompt") and isinstance(v, str | int | float | bool)
                and v is not False]
    note = ""
    if settings:
        note = " · ".join(settings[:SHOWN_FIELDS]) + (" …" if len(settings) > SHOWN_FIELDS
                                                      else "")
    body = result_body_html(result, play=play, links=links, media=media, served=served)
    whole = card(result.model, result.status, facts, note, body=body)
    return f"<div class='genlab-record'>{told}{whole}</div>"


def result_body_html(result: Result, *, play: Play = "once", links: bool = True,
                     media: bool = True, prompt: bool = True, served: bool = False) -> str:
    """What a card shows under its header: the media's measured facts, what differs from
    the request, the prompt and the media; for views that draw their own header (the
    Studio's task cards, ``served=True``: see :func:`original_link`)."""
    body = ""
    measured = media_facts(result)
    if measured:
        body += text(measured, MUTED, tag="div", size="85%", cls="genlab-facts")
    if result.mismatches:
        body += text("not as asked: " + "; ".join(result.mismatches), WARNING, tag="div",
                     size="85%", cls="genlab-mismatch")
    if result.adjusted:  # the catalog changed the request, as the interface allows
        body += text("changed: " + " · ".join(result.adjusted), WARNING, tag="div",
                     size="85%", cls="genlab-adjusted")
    said = result.prompt
    if prompt and said:
        body += text(said, tag="div", css="white-space:pre-wrap;overflow-wrap:anywhere;"
                     "max-width:60em;margin-top:4px")
    if media:
        shown = (media_html(result.paths, play=play, links=links, served=served)
                 if result.paths else "")
        if not shown and result.succeeded:
            shown = linked_html(result, play=play, links=links)
        body += shown
    return body


def linked_html(result: Result, *, play: Play = "once", links: bool = True) -> str:
    """A result that was not kept, shown from the service's own links (signed URLs, never
    the API key), with when they expire (:attr:`~genlab.TaskRecord.links_expire`, when the
    URLs say) and how to keep it; only ``http(s)`` links are shown.

    Example:
        >>> from genlab.media import Result
        >>> page = linked_html(Result(task_id="t1", status="succeeded", images=[
        ...     {"url": "https://cdn.example/t1.png?Expires=1767225600&sig=a"}]))
        >>> '<img src="https://cdn.example/t1.png?Expires=1767225600&amp;sig=a"' in page
        True
        >>> "links expired 2026-01-01 00:00 UTC" in page
        True
    """
    videos: list[str] = []
    images: list[str] = []
    for item in result.videos or ():
        if _linkable(item.url):
            cover = item.cover_url if item.cover_url and _linkable(item.cover_url) else ""
            videos.append(_linked_tile("video", item.url, cover, play=play, links=links))
        if item.last_frame_url and _linkable(item.last_frame_url):
            images.append(_linked_tile("img", item.last_frame_url, label="last frame",
                                       links=links))
    for image in result.images or ():
        if _linkable(image.url):
            images.append(_linked_tile("img", image.url, links=links))
    keep = ("client.download(result) saves its media, and a client with a history "
            "(genlab.connect()) keeps every result")
    if not videos and not images:
        return text(f"not kept here, and no link to show: {keep}", MUTED, tag="div",
                    size="85%")
    expires = result.links_expire
    if expires is None:  # the interface names no expiry, and these links do not say
        when = "the service's links expire"
    elif expires <= datetime.now(UTC):
        when = f"the service's links expired {expires.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        keep = "client.download(result) fetches fresh links and saves its media"
    else:
        when = f"the service's links expire {expires.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    told = text(f"not kept here: {when}; {keep}", MUTED, tag="div", size="85%",
                cls="genlab-links-expire")
    return (f'<div class="genlab-medias"><style>{MEDIA_CSS}</style>'
            f'{"".join(videos)}{"".join(images)}</div>{told}')


_LOOPBACK = ("localhost", "::1")


def _linkable(url: str) -> bool:
    """Only the service's http(s) links go into a page."""
    try:
        return urlsplit(url).scheme.lower() in ("http", "https")
    except ValueError:
        return False


def _linked_tile(tag: Literal["video", "img"], url: str, cover: str = "", *,
                 play: Play = "click", links: bool = True, label: str = "") -> str:
    """One service link as a tile: the URL (escaped) as the element's source, the cover as
    a video's poster; a link to open it that sends no referrer."""
    parts = urlsplit(url)
    name = PurePosixPath(parts.path).name or "media"
    host = parts.hostname or ""
    caption = [label] if label else []
    if host in _LOOPBACK or host.startswith("127."):
        caption.append("a link to this machine: only a browser here opens it")
    said = [escape(c) for c in caption]
    if links:
        said.append(f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer">'
                    f"{escape(name)}</a>")
    shown = Shown(tag, escape(url), poster=escape(cover))
    return tile_html(shown, salt=url, caption=" · ".join(said), alt=label or name,
                     play=play if tag == "video" else "click")


def results_html(results: Iterable[Result], *, play: Play = "click") -> str:
    """Several results as a grid of cards (their videos wait for a click)."""
    return grid(result_html(r, play=play) for r in results)


def outcomes_html(outcomes: Iterable[Any]) -> str:
    """A ``map`` (or ``compare``) outcome list as a grid: each result's card, or the error
    that kept a request from one, escaped (each outcome draws itself).

    Example:
        >>> from genlab.media import Result
        >>> html = outcomes_html([
        ...     Result(task_id="t1", status="succeeded", model="image-b"),
        ...     Result(task_id="t2", status="failed", model="video-a", error="refused")])
        >>> html.count("class='genlab-record'"), "task t2" in html, "refused" in html
        (2, True, True)
    """
    return grid(outcome._repr_html_() for outcome in outcomes)


__all__ = [
    "MEDIA_CSS",
    "THUMB_WIDTH",
    "TILE_THUMB",
    "TILE_WIDTH",
    "Frame",
    "Shown",
    "data_uri",
    "linked_html",
    "media_facts",
    "media_html",
    "original_link",
    "outcomes_html",
    "prepare_previews",
    "prepare_thumbnails",
    "reason",
    "result_body_html",
    "result_html",
    "results_html",
    "run_tile_html",
    "shown_bytes",
    "shown_file",
    "thumbnail_bytes",
    "thumbnail_file",
    "tile_html",
]
