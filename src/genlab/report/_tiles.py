"""Media tiles: the markup of one embedded video or image, compact, enlarged on demand.

A tile shows its media at :data:`TILE_WIDTH` pixels; "enlarge" (or a click on an image) widens
it to the output area. The switch is a hidden checkbox and CSS, not a script, so it works in a
widget, in a trusted or untrusted notebook output and in a saved report alike. Colours are
genlab's theme colours (:mod:`genlab.display`): JupyterLab's CSS variables, with fallbacks
for pages outside JupyterLab.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from genlab.display import LINK, MUTED, escape
from genlab.media import MEDIA_SUFFIXES, VIDEO_SUFFIXES, media_location, media_name
from genlab.report._media import TILE_WIDTH, Embed, embed_file

MEDIA_CSS = f"""
.genlab-medias {{ display: flex; flex-wrap: wrap; gap: 6px; align-items: flex-start; }}
.genlab-media {{ flex: 0 1 auto; max-width: 100%; margin: 0; }}
.genlab-media:has(.genlab-zoom:checked) {{ flex-basis: 100%; }}
.genlab-media video, .genlab-media img {{ display: block; width: {TILE_WIDTH}px;
  max-width: 100%; height: auto; background: #000; }}
.genlab-media img {{ background: none; cursor: zoom-in; }}
.genlab-media .genlab-zoom:checked ~ video,
.genlab-media .genlab-zoom:checked ~ label > img {{ width: 100%; max-width: 960px;
  cursor: zoom-out; }}
.genlab-media .genlab-links {{ font-size: 0.8em; color: {MUTED};
  margin-top: 2px; overflow-wrap: anywhere; }}
.genlab-media .genlab-links label {{ cursor: pointer; color: {LINK}; }}
.genlab-media .genlab-links a {{ color: {LINK}; }}
.genlab-media .genlab-zoom:checked ~ .genlab-links .genlab-grow,
.genlab-media .genlab-zoom:not(:checked) ~ .genlab-links .genlab-shrink {{ display: none; }}
"""
"""The tiles' stylesheet; :func:`media_html` and the gallery include it once per page."""


def _key(uri: str, salt: str) -> str:
    digest = hashlib.blake2b(digest_size=6)
    digest.update(salt.encode())
    digest.update(uri[:4096].encode())
    digest.update(str(len(uri)).encode())
    return "genlab-z-" + digest.hexdigest()


def original_link(path: Path) -> str:
    """Where the original is: a link when the path is relative (notebooks resolve it), and the
    path as text, e.g. ``original: genlab-output/t1.mp4``."""
    shown = escape(path)
    if path.is_absolute():
        return f"original: <code title='{shown}'>{escape(path.name)}</code>"
    href = escape(path.as_posix())
    return f"original: <a href=\"{href}\" target=\"_blank\" download>{shown}</a>"


def tile_html(embed: Embed, *, salt: str = "", caption: str = "", alt: str = "",
              extra: str = "") -> str:
    """One media item as a compact tile with an enlarge switch (``caption`` is HTML).

    ``extra`` is added to the ``<video>`` element's attributes (the gallery's sync handlers).

    Example:
        >>> page = tile_html(Embed("img", "data:image/png;base64,AA=="), alt="a kite")
        >>> '<img src="data:image/png;base64,AA=="' in page, "genlab-zoom" in page
        (True, True)
    """
    if embed.tag is None:
        return f'<div class="genlab-media"><div class="genlab-links">{caption}</div></div>'
    key = _key(embed.uri, salt)
    toggle = f'<input type="checkbox" class="genlab-zoom" id="{key}" hidden>'
    grow = (
        f'<label for="{key}"><span class="genlab-grow">&#10530; enlarge</span>'
        f'<span class="genlab-shrink">&#10529; smaller</span></label>'
    )
    if embed.tag == "video":
        # The poster shows where the front end cannot play H.264 (VS Code's, PyCharm's).
        cover = f' poster="{embed.poster}"' if embed.poster else ""
        element = (
            f'<video controls loop src="{embed.uri}"{cover} playsinline preload="auto"{extra}>'
            "</video>"
        )
    else:
        label = escape(alt)
        element = (
            f'<label for="{key}" title="click to enlarge">'
            f'<img src="{embed.uri}" alt="{label}"></label>'
        )
    links = " · ".join(part for part in (grow, caption) if part)
    return (
        f'<figure class="genlab-media">{toggle}{element}'
        f'<figcaption class="genlab-links">{links}</figcaption></figure>'
    )


def media_html(paths: Sequence[Path | str]) -> str:
    """Saved results as HTML: compact ``<video>`` previews and images, each enlargeable.

    ``paths`` are what ``client.download`` returned: local paths, or storage URLs
    (``s3://bucket/runs/t1.mp4``) read back through :func:`genlab.media.read_media`.

    The one way genlab embeds saved files (task cards use it). Videos are embedded as their
    display-size preview with a link to the original; covers serve only as stand-ins for
    videos too large even as a preview; other files (the JSON sidecar) are skipped.

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> (folder / "t1.png").write_bytes(b"\\x89PNG\\r\\n\\x1a\\n")
        8
        >>> (folder / "t1.json").write_text("{}")
        2
        >>> page = media_html([folder / "t1.png", folder / "t1.json"])
        >>> page.count('<img src="data:image/png;base64,'), "json" in page
        (1, False)
    """
    located = [media_location(p) for p in paths]
    names = {Path(media_name(p)).stem: p for p in located}
    videos: list[str] = []
    images: list[str] = []
    for where in located:
        path = Path(media_name(where))  # its name: suffix and stem decide what it is
        if path.suffix.lower() not in MEDIA_SUFFIXES or path.stem.endswith("_cover"):
            continue
        is_video = path.suffix.lower() in VIDEO_SUFFIXES
        shown = embed_file(where, names.get(f"{path.stem}_cover"))
        parts = []
        if path.stem.endswith("_last_frame"):
            parts.append("last frame")
        if shown.note:
            parts.append(escape(f"{path.name}: {shown.note}"))
        if is_video:
            parts.append(_original(where))
        tile = tile_html(shown, salt=str(where), caption=" · ".join(parts), alt=path.name)
        (videos if is_video else images).append(tile)
    if not videos and not images:
        return ""
    return (
        f'<div class="genlab-medias"><style>{MEDIA_CSS}</style>'
        f'{"".join(videos)}{"".join(images)}</div>'
    )


def _original(path: Path | str) -> str:
    if isinstance(path, str):  # in a store: the browser cannot open it, so it is named
        return f"original: <code>{escape(path)}</code>"
    try:
        size = f" ({path.stat().st_size / 1e6:.1f} MB)"
    except OSError:
        size = ""
    try:
        shown = Path(os.path.relpath(path)) if not path.is_absolute() else path
    except ValueError:  # another drive on Windows
        shown = path
    return original_link(shown) + size
