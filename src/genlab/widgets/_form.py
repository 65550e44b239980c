"""The form of one model, built from the catalog: one field row per field spec.

The form maps :func:`genlab.catalog.form_fields` to controls, turns its values into a body
with :func:`genlab.catalog.form_body`, and shows a :class:`genlab.catalog.Preview`: the
catalog's messages under each field, and the fields the mode refuses or ignores hidden.
It holds no rule of its own.

Example:
    >>> import genlab
    >>> from genlab.widgets import ModelForm
    >>> form = ModelForm(genlab.CATALOG["video-c"])
    >>> form.set(prompt="a lighthouse", resolution="720P")
    >>> form.body
    {'model': 'video-c', 'prompt': 'a lighthouse', 'resolution': '720P'}
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from genlab._errors import ErrorDetail
from genlab.catalog import OMIT, FieldSpec, Preview, RequestBase, form_body, form_fields
from genlab.widgets._fields import LABEL_WIDTH, SCALAR_ROWS, EditNotifier, FieldRow
from genlab.widgets._protocols import StudioClient
from genlab.widgets._references import ReferenceList
from genlab.widgets._shots import ShotList


def build_row(spec: FieldSpec, client: StudioClient | None = None) -> FieldRow:
    """The row for one field spec (``client`` sends the local files of reference lists)."""
    if spec.kind == "references":
        return ReferenceList(spec, client)
    if spec.kind == "extra":
        return ExtraField(spec)
    if spec.kind == "shots":
        return ShotList(spec)
    return SCALAR_ROWS[spec.kind](spec)


class ExtraField(FieldRow):
    """``extra_params``: one row per key the catalog names (seed, multi_shot, ...)."""

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec)
        self.fields: dict[str, FieldRow] = {s.name: build_row(s, None) for s in spec.fields}
        for row in self.fields.values():
            row.on_edit(self._edited)
        title = widgets.HTML(
            f"<b>{html.escape(spec.name)}</b> <span style='color:#666'>"
            f"{html.escape(spec.description)}</span>",
            tooltip=spec.description,
        )
        box = widgets.VBox(
            list(self.fields.values()),
            layout=widgets.Layout(border_left="3px solid #eee", padding="0 0 0 6px"),
        )
        self._finish([title, box])

    def get_value(self) -> Any:
        return {name: row.get_value() for name, row in self.fields.items()}

    def set_value(self, value: Any) -> None:
        given = {} if value is OMIT or value is None else value
        if not isinstance(given, Mapping):
            raise ValueError(f"{self.spec.name} must be an object, got {value!r}")
        unknown = sorted(set(given) - set(self.fields))
        if unknown:
            raise ValueError(
                f"the form has no control for {self.spec.name} key(s) {', '.join(unknown)}; "
                f"it offers {', '.join(self.fields)} (pass other keys to client.generate)"
            )
        with self.quiet():
            for name, row in self.fields.items():
                row.set_value(given.get(name, OMIT))

    def show_details(self, errors: Sequence[ErrorDetail]) -> None:
        """Errors inside a key go under that key's row; the rest under the whole."""
        for name, row in self.fields.items():
            row.show_errors([e.message for e in errors if len(e.loc) > 1 and e.loc[1] == name])
        own = [e.message for e in errors if len(e.loc) < 2 or e.loc[1] not in self.fields]
        self.show_errors(own)


class ModelForm(EditNotifier, widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """The form of one request class.

    Args:
        cls: the request class.
        client: sends the local files added to reference lists; without one, reference
            lists take URLs only.

    Attributes:
        cls: the request class.
        model: its model name.
        fields: field name -> its row (``fields["duration"].control`` is the slider).
    """

    def __init__(self, cls: type[RequestBase], client: StudioClient | None = None) -> None:
        super().__init__()
        self.add_class("genlab-form")
        self.cls = cls
        self.model: str = cls.model_id()
        self.fields: dict[str, FieldRow] = {
            spec.name: build_row(spec, client) for spec in form_fields(cls)
        }
        self.hidden_note = widgets.HTML(layout=widgets.Layout(margin=f"0 0 0 {LABEL_WIDTH}"))
        self._init_notifier()
        self._shown: Preview | None = None
        for row in self.fields.values():
            row.on_edit(self._edited)
        self.children = [*self.fields.values(), self.hidden_note]

    # --- values -----------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """Each field's value as its control holds it (:data:`~genlab.catalog.OMIT`: left out)."""
        return {name: row.get_value() for name, row in self.fields.items()}

    @property
    def body(self) -> dict[str, Any]:
        """The request body the form stands for."""
        return form_body(self.cls, self.values())

    def set(self, **fields: Any) -> None:
        """Set controls by field name; other fields keep their values.

        Raises:
            ValueError: the model has no such field, or a control cannot hold the value (an
                enum value it does not offer, an integer outside the slider's bounds).
        """
        unknown = [name for name in fields if name not in self.fields]
        if unknown:
            raise ValueError(
                f"{self.model} has no field {', '.join(map(repr, unknown))}; "
                f"its fields are {', '.join(self.fields)}"
            )
        with self.quiet():
            for name, value in fields.items():
                self.fields[name].set_value(value)

    def reset(self) -> None:
        """Every field back to its default; reference lists and shots emptied."""
        with self.quiet():
            for row in self.fields.values():
                row.reset()

    # --- showing what the catalog says ------------------------------------------------

    def show(self, preview: Preview) -> None:
        """Messages under their fields; fields the mode refuses or ignores hidden."""
        if preview is self._shown:
            return
        self._shown = preview
        for name, row in self.fields.items():
            row.hidden = name in preview.hidden
            if isinstance(row, ExtraField):
                row.show_details([e for e in preview.errors if e.loc and e.loc[0] == name])
            else:
                row.show_errors(preview.messages_for(name))
        note = ""
        if preview.hidden:
            items = "; ".join(
                f"<code>{html.escape(name)}</code> {html.escape(reason)}"
                for name, reason in preview.hidden.items()
            )
            note = f"<span style='color:#666;font-size:90%'>Hidden: {items}</span>"
        if self.hidden_note.value != note:
            self.hidden_note.value = note
