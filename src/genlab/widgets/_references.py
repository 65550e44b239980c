"""The reference media editor of one list (reference_images / videos / audios).

Add an item by URL or by uploading a local file, pick its ``reference_type`` among the roles
the list accepts for the model, reorder it (order matters: ``character1`` is the first image)
or remove it. A local file becomes a URL through the client's
:meth:`~genlab.Client.reference_url`, which uploads it where the service takes uploads and
otherwise inlines it as a ``data:image/...;base64,`` value where the model's list allows those;
the editor only says which of the two will happen.

Each row shows a thumbnail: uploaded images and video posters are made from the file's bytes
(nothing is fetched back); a typed URL is shown by the browser from that URL. An uploaded
file is listed by its file name (its URL in the tooltip). The upload button counts the
uploaded files in the list, and the widget keeps no bytes of them (its state is saved in the
notebook). Where a local file cannot be sent (the list needs a public URL and the service
takes no uploads) there is no upload button.

An empty list shows nothing but its ``open_button`` (the form puts the buttons of its empty
lists on one line) until a person opens it or it gets an item: three empty lists must not
push Submit out of view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from genlab._errors import GenlabError
from genlab.catalog import OMIT, FieldSpec
from genlab.client import data_uri
from genlab.display import BORDER, ERROR, MUTED, escape, lines, styled, text
from genlab.media.preview import poster
from genlab.report import thumbnail
from genlab.widgets._fields import STYLE, FieldRow, choice_label
from genlab.widgets._protocols import StudioClient

ACCEPT = {"image": "image/*", "video": "video/*,.mp4,.mov", "audio": "audio/*,.wav,.mp3"}
# How much of a URL a row shows (data: values are long).
SHOWN_URL = 60
THUMB_PX = 48


def short_url(url: str) -> str:
    """A URL as a row shows it: data: values summarised, long ones cut."""
    if url[:5].lower() == "data:":
        head = url.split(",", 1)[0]
        return f"{head},… ({len(url) * 3 // 4 // 1024} KB inline)"
    return url if len(url) <= SHOWN_URL else url[: SHOWN_URL - 1] + "…"


class ReferenceList(FieldRow):
    """The editor of one reference list.

    ``get_value()`` is a list of ``{"url": ..., "reference_type": ...}`` objects (no
    ``reference_type`` where the list has a single role), plus per-item options
    (video-e's ``keep_original_sound``).

    Example:
        >>> import genlab
        >>> from genlab.catalog import form_fields
        >>> spec = next(s for s in form_fields(genlab.CATALOG["video-a"]) if s.kind == "references")
        >>> ReferenceList(spec).spec.name
        'reference_images'
    """

    def __init__(self, spec: FieldSpec, client: StudioClient | None = None) -> None:
        super().__init__(spec)
        self.client = client
        self._items: list[dict[str, Any]] = []
        # url -> a thumbnail made from the uploaded bytes; url -> the upload entry, bytes-free;
        # url -> the name of the file it was made from.
        self._thumbs: dict[str, str] = {}
        self._sent: dict[str, dict[str, Any]] = {}
        self._names: dict[str, str] = {}
        self._stubbing = False
        self._opened = False
        self._fold_listeners: list[Callable[[], None]] = []
        self.title = widgets.HTML(tooltip=spec.tooltip)
        self.open_button = widgets.Button(
            # On the form's "References" line: "+ Images", "+ Videos", "+ Audio".
            description=spec.label.removeprefix("Reference ").capitalize(), icon="plus",
            tooltip=f"Add {spec.label.lower()} ({spec.name}): {self._how()}",
            layout=widgets.Layout(width="auto"),
        )
        self.open_button.add_class("genlab-open-references")
        self.open_button.on_click(lambda _b: self.expand())
        self.rows = widgets.VBox()
        self.url = widgets.Text(
            placeholder="https://… public media URL",
            description="add URL",
            tooltip=spec.media,
            style=STYLE,
            layout=widgets.Layout(width="60%"),
        )
        self.add_button = widgets.Button(description="Add", icon="plus", tooltip="Add this URL",
                                         layout=widgets.Layout(width="auto"))
        self.add_button.on_click(lambda _b: self._add_typed_url())
        self.upload = widgets.FileUpload(
            accept=ACCEPT.get(spec.media_kind, ""),
            multiple=True,
            description="Upload file",
            tooltip=self._upload_tooltip(),
            layout=widgets.Layout(width="auto", min_width="9.5em"),
        )
        self.upload.observe(self._uploaded, "value")
        self.note = widgets.HTML()
        add_row = widgets.HBox([self.url, self.add_button, self.upload]
                               if self.takes_files else [self.url, self.add_button])
        self.editor = widgets.VBox([self.title, self.rows, add_row, self.note])
        self._finish([self.editor])
        self._render()

    @property
    def inline_allowed(self) -> bool:
        """Whether a local file may go inline as a ``data:`` URI (images, where allowed)."""
        return self.spec.allow_data_uri and self.spec.media_kind == "image"

    @property
    def takes_files(self) -> bool:
        """Whether a local file can be added: uploaded to the service, or sent inline."""
        if self.client is None:
            return False
        return bool(self.client.supports_uploads) or self.inline_allowed

    def _upload_tooltip(self) -> str:
        if self.client is not None and self.client.supports_uploads:
            return "The file is uploaded to the service, which gives it a URL."
        return "The file is sent inline as a data: URI."

    def _how(self) -> str:
        """What the list holds, and how an item can be given, for the title line."""
        rules = self.spec.media
        for said in ("; public URL only", "; public URL or data: URI"):
            rules = rules.removesuffix(said)
        if self.client is not None and self.client.supports_uploads:
            how = "a public URL or a local file (uploaded)"
        elif self.takes_files:
            how = "a public URL or a local image (sent inline)"
        else:
            how = "public URL only: local files cannot be sent here"
        return f"{rules}; {how}" if rules else how

    # --- opening and closing ------------------------------------------------------------

    @property
    def collapsed(self) -> bool:
        """Empty and not opened: only :attr:`open_button` stands for the list."""
        return not self._items and not self._opened

    def on_fold(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever the list folds or opens."""
        self._fold_listeners.append(callback)

    def expand(self) -> None:
        """Show the URL box (and upload button) of an empty list."""
        self._opened = True
        self._fold()

    def _fold(self) -> None:
        collapsed = self.collapsed
        wanted = "none" if collapsed else None
        if self.editor.layout.display != wanted:
            self.editor.layout.display = wanted
            self.layout.border = None if collapsed else f"1px solid {BORDER}"
            self.layout.padding = "0" if collapsed else "4px"
        for callback in list(self._fold_listeners):
            callback()

    # --- the field surface ------------------------------------------------------------

    def get_value(self) -> Any:
        return [dict(item) for item in self._items] or OMIT

    def check(self, value: Any) -> None:
        if value is OMIT or value is None:
            return
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ValueError(f"{self.spec.name} is a list of URLs or items, got {value!r}")
        for item in value:
            self._normalise(item)
        limit = self.spec.max_items
        if limit is not None and len(value) > limit:
            raise ValueError(f"{self.spec.name} holds at most {limit} items, got {len(value)}")

    def set_value(self, value: Any) -> None:
        self.check(value)
        items = [] if value is OMIT or value is None else list(value)
        self._items = [self._normalise(item) for item in items]
        self._render()
        self._edited()

    def reset(self) -> None:
        self._opened = False
        super().reset()

    # --- editing ----------------------------------------------------------------------

    @property
    def items(self) -> list[dict[str, Any]]:
        """The items, in order (copies)."""
        return [dict(item) for item in self._items]

    @property
    def full(self) -> bool:
        limit = self.spec.max_items
        return limit is not None and len(self._items) >= limit

    def add(self, url: str, reference_type: str | None = None, **options: Any) -> None:
        """Append an item; ``reference_type`` defaults to the list's first role (asset)."""
        self._items.append(
            self._normalise({"url": url, "reference_type": reference_type, **options})
        )
        self._render()
        self._edited()

    def add_file(self, data: bytes, filename: str, reference_type: str | None = None) -> str:
        """Append a local file (uploaded, or inlined where allowed); returns its URL.

        Raises:
            ValueError: the editor has no client to send files with.
            GenlabError: the file cannot be sent (``InvalidParameterError`` when the list needs
                a public URL), or its upload failed. Nothing was added.
        """
        if self.client is None:
            raise ValueError("local files cannot be added here; paste a public URL")
        url = self.client.reference_url(
            data, filename, allow_data_uri=self.inline_allowed, field=self.spec.name
        )
        thumb = self._thumbnail(data)
        if thumb:
            self._thumbs[url] = thumb
        self._names[url] = filename
        self.add(url, reference_type)
        return url

    def _thumbnail(self, data: bytes) -> str | None:
        if self.spec.media_kind == "image":
            return thumbnail(data, 2 * THUMB_PX)
        if self.spec.media_kind == "video":
            frame = poster(data, width=2 * THUMB_PX)
            return data_uri(frame, mime="image/jpeg") if frame else None
        return None

    def remove(self, index: int) -> None:
        del self._items[index]
        self._render()
        self._edited()

    def move(self, index: int, offset: int) -> None:
        """Move item ``index`` up (-1) or down (+1)."""
        target = index + offset
        if 0 <= target < len(self._items):
            items = self._items
            items[index], items[target] = items[target], items[index]
            self._render()
            self._edited()

    def set_role(self, index: int, role: str) -> None:
        self._items[index]["reference_type"] = role
        self._edited()

    def _normalise(self, item: Any) -> dict[str, Any]:
        if isinstance(item, str):
            item = {"url": item}
        if not isinstance(item, Mapping) or not isinstance(item.get("url"), str):
            raise ValueError(f"{self.spec.name} items are URLs or objects with a url, got {item!r}")
        out: dict[str, Any] = {"url": item["url"]}
        if len(self.spec.roles) > 1:
            out["reference_type"] = item.get("reference_type") or self.spec.roles[0]
        elif item.get("reference_type") not in (None, "", *self.spec.roles):
            out["reference_type"] = item["reference_type"]  # the catalog will say why not
        known = {o.name for o in self.spec.fields}
        for key, value in item.items():
            if key in ("url", "reference_type"):
                continue
            if key not in known:
                raise ValueError(f"{self.spec.name} items of this model have no {key!r} option")
            out[key] = value
        return out

    # --- events -----------------------------------------------------------------------

    def _add_typed_url(self) -> None:
        url = self.url.value.strip()
        if not url:
            return
        self.add(url)
        self.url.value = ""

    def _uploaded(self, change: Mapping[str, Any]) -> None:
        files: Sequence[Mapping[str, Any]] = change["new"]
        if self._stubbing or not files:
            return
        notes = []
        for file in files:
            if self.full:
                notes.append(f"{file['name']}: the list is full")
                continue
            try:
                url = self.add_file(bytes(file["content"]), str(file["name"]))
            except (GenlabError, ValueError) as exc:  # shown: this runs in a widget callback
                notes.append(f"{file['name']}: {exc}")
                continue
            self._sent[url] = {**file, "content": memoryview(b"")}
        self.note.value = "" if not notes else (
            styled(lines(notes), ERROR, tag="div")
        )
        self._count_uploads()

    def _count_uploads(self) -> None:
        # The button reads "Upload file (n)" from its value: the uploaded files still listed,
        # without their bytes. (The browser clears its file input on each click, so the same
        # file can be chosen again.)
        urls = {item["url"] for item in self._items}
        entries = tuple(entry for url, entry in self._sent.items() if url in urls)
        if len(entries) != len(self.upload.value):
            self._stubbing = True
            try:
                self.upload.value = entries
            finally:
                self._stubbing = False

    # --- drawing ----------------------------------------------------------------------

    def _render(self) -> None:
        for row in self.rows.children:
            row.close()
        self.rows.children = [self._row(i, item) for i, item in enumerate(self._items)]
        limit = self.spec.max_items
        count = f"{len(self._items)} / {limit}" if limit is not None else str(len(self._items))
        self.title.value = f"<b>{escape(self.spec.label)}</b> " + text(
            f"({count}) · {self._how()}", MUTED
        )
        self.add_button.disabled = self.url.disabled = self.upload.disabled = self.full
        self._count_uploads()
        self._fold()

    def _preview(self, url: str) -> str:
        """A thumbnail of an item: from its uploaded bytes, else drawn by the browser."""
        box = (f"width:{THUMB_PX}px;height:{THUMB_PX}px;object-fit:cover;border-radius:3px;"
               f"background:{BORDER};display:block")
        shown = self._thumbs.get(url)
        if shown is None and url[:5].lower() == "data:" and self.spec.media_kind == "image":
            shown = url
        if shown is not None:
            return f'<img src="{escape(shown)}" style="{box}" alt="">'
        quoted = escape(url)
        if self.spec.media_kind == "image" and url.lower().startswith(("http://", "https://")):
            return f'<img src="{quoted}" style="{box}" alt="" loading="lazy">'
        if self.spec.media_kind == "video" and url.lower().startswith(("http://", "https://")):
            return f'<video src="{quoted}#t=0.1" preload="metadata" muted style="{box}"></video>'
        symbol = "&#9835;" if self.spec.media_kind == "audio" else "&#9633;"
        return (f"<div style='{box};text-align:center;line-height:{THUMB_PX}px;"
                f"color:{MUTED}'>{symbol}</div>")

    def _row(self, index: int, item: dict[str, Any]) -> widgets.HBox:
        url = item["url"]
        # An uploaded file by its name; the URL it became is in the tooltip.
        name = self._names.get(url)
        shown = escape(name) if name else escape(short_url(url))
        tip = url if len(url) < 2000 else short_url(url)
        parts: list[widgets.Widget] = [
            widgets.HTML(self._preview(url), layout=widgets.Layout(min_width=f"{THUMB_PX}px")),
            widgets.HTML(
                "<div style='white-space:nowrap;overflow:hidden;text-overflow:ellipsis'>"
                f"<code>{index + 1}.</code> {shown}</div>",
                tooltip=f"{name}: {tip}" if name else tip,
                layout=widgets.Layout(width="45%", overflow="hidden"),
            )
        ]
        if len(self.spec.roles) > 1:
            role = widgets.Dropdown(
                options=list(self.spec.roles),
                value=item.get("reference_type", self.spec.roles[0]),
                tooltip="reference_type",
                layout=widgets.Layout(width="9em"),
            )
            role.observe(lambda c, i=index: self.set_role(i, c["new"]), "value")
            parts.append(role)
        for option in self.spec.fields:
            parts.append(self._option(index, item, option))
        for icon, tip, action in (
            ("arrow-up", "Move up", lambda _b, i=index: self.move(i, -1)),
            ("arrow-down", "Move down", lambda _b, i=index: self.move(i, +1)),
            ("trash", "Remove", lambda _b, i=index: self.remove(i)),
        ):
            button = widgets.Button(icon=icon, tooltip=tip, layout=widgets.Layout(width="3em"))
            button.on_click(action)
            parts.append(button)
        parts[-3].disabled = index == 0
        parts[-2].disabled = index == len(self._items) - 1
        return widgets.HBox(parts)

    def _option(self, index: int, item: dict[str, Any], option: FieldSpec) -> widgets.Widget:
        choices = option.choices or ((True, False) if option.kind == "bool" else ())
        options = [("(default)", OMIT)] + [(choice_label(c), c) for c in choices]
        current = item.get(option.name, OMIT)
        value = next((v for _, v in options if type(v) is type(current) and v == current), OMIT)
        control = widgets.Dropdown(
            options=options,
            value=value,
            description=option.name,
            tooltip=option.description,
            style={"description_width": "initial"},
        )

        def changed(change: Mapping[str, Any]) -> None:
            if change["new"] is OMIT:
                self._items[index].pop(option.name, None)
            else:
                self._items[index][option.name] = change["new"]
            self._edited()

        control.observe(changed, "value")
        return control
