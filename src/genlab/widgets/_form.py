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

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from genlab._errors import ErrorDetail, InvalidParameterError
from genlab.catalog import OMIT, FieldSpec, Preview, RequestBase, form_body, form_fields
from genlab.display import BORDER, MUTED, escape, styled, text
from genlab.widgets._fields import (
    LABEL_WIDTH,
    SCALAR_ROWS,
    EditNotifier,
    FieldRow,
    hint_html,
    side_label,
)
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
            f"<b>{escape(spec.label)}</b> {text(spec.description, MUTED)}",
            tooltip=spec.tooltip,
        )
        box = widgets.VBox(
            list(self.fields.values()),
            layout=widgets.Layout(border_left=f"3px solid {BORDER}", padding="0 0 0 6px"),
        )
        self._finish([title, box])

    def get_value(self) -> Any:
        return {name: row.get_value() for name, row in self.fields.items()}

    def check(self, value: Any) -> None:
        given = {} if value is OMIT or value is None else value
        if not isinstance(given, Mapping):
            raise ValueError(f"{self.spec.name} must be an object, got {value!r}")
        unknown = sorted(set(given) - set(self.fields))
        if unknown:
            raise ValueError(
                f"the form has no control for {self.spec.name} key(s) {', '.join(unknown)}; "
                f"it offers {', '.join(self.fields)} (pass other keys to client.generate)"
            )
        for name, row in self.fields.items():
            row.check(given.get(name, OMIT))

    def set_value(self, value: Any) -> None:
        self.check(value)
        given = {} if value is OMIT or value is None else value
        with self.quiet():
            for name, row in self.fields.items():
                row.set_value(given.get(name, OMIT))

    def show_errors(self, errors: Sequence[ErrorDetail]) -> None:
        """Errors inside a key (``loc`` ``("extra_params", "seed", ...)``) go under that key's
        row; the rest under the whole."""
        for name, row in self.fields.items():
            row.show_errors([e for e in errors if len(e.loc) > 1 and e.loc[1] == name])
        super().show_errors([e for e in errors if len(e.loc) < 2 or e.loc[1] not in self.fields])


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
        touched: the fields the person edited (or code set) since the last reset; only
            their messages show, until :attr:`attempted`.
        last_edited: the field the person edited last.
        attempted: a submission was tried: every message shows.

    Example:
        >>> import genlab
        >>> form = ModelForm(genlab.CATALOG["video-a"])
        >>> form.set(prompt="a fox", duration=4)
        >>> form.body
        {'model': 'video-a', 'prompt': 'a fox', 'duration': 4}
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
        # The empty reference lists, folded into one line of "+ Reference images" buttons.
        self.lists = [row for row in self.fields.values() if isinstance(row, ReferenceList)]
        self.references_bar = widgets.HBox(
            [side_label("References"), *(row.open_button for row in self.lists)],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.references_bar.add_class("genlab-references-bar")
        self._init_notifier()
        self._shown: Preview | None = None
        self.touched: set[str] = set()
        self.last_edited: str | None = None
        self.attempted = False
        for name, row in self.fields.items():
            row.on_edit(functools.partial(self._row_edited, name))
        for row in self.lists:
            row.on_fold(self._place_lists)
        rows = list(self.fields.values())
        at = rows.index(self.lists[0]) if self.lists else len(rows)
        self.children = [*rows[:at], self.references_bar, *rows[at:], self.hidden_note]
        self._place_lists()

    def attach(self, name: str, widget: widgets.Widget) -> None:
        """Show ``widget`` right under the row of field ``name`` (nowhere when the form has
        no such field); the Studio puts its saved-prompt control under the prompt."""
        children = [c for c in self.children if c is not widget]
        row = self.fields.get(name)
        if row is not None:
            children.insert(children.index(row) + 1, widget)
        if tuple(children) != tuple(self.children):
            self.children = children

    def _place_lists(self) -> None:
        """A button on the bar for each empty list the mode accepts; no bar without one."""
        shown = 0
        for row in self.lists:
            wanted = None if row.collapsed and not row.hidden else "none"
            shown += wanted is None
            if row.open_button.layout.display != wanted:
                row.open_button.layout.display = wanted
        bar = None if shown else "none"
        if self.references_bar.layout.display != bar:
            self.references_bar.layout.display = bar

    def _row_edited(self, name: str) -> None:
        if not self._quiet:  # a person's edit; reset() and set() decide for themselves
            self.touched.add(name)
            self.last_edited = name
        self._edited()

    # --- values -----------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """Each field's value as its control holds it (:data:`~genlab.catalog.OMIT`: left out)."""
        return {name: row.get_value() for name, row in self.fields.items()}

    @property
    def body(self) -> dict[str, Any]:
        """The request body the form stands for."""
        return form_body(self.cls, self.values())

    def check(self, **fields: Any) -> None:
        """Whether :meth:`set` would take these values; changes nothing.

        Raises:
            InvalidParameterError: the model has no such field, or a control cannot hold a
                value (an enum value it does not offer, an integer outside the model's
                bounds); its ``errors`` name each field.
        """
        problems = [
            ErrorDetail((name,), f"{self.model} has no field {name!r}; "
                                 f"its fields are {', '.join(self.fields)}")
            for name in fields if name not in self.fields
        ]
        for name, value in fields.items():
            if name in self.fields:
                try:
                    self.fields[name].check(value)
                except ValueError as exc:
                    problems.append(ErrorDetail((name,), f"{self.model}: {exc}"))
        if problems:
            error = InvalidParameterError.from_details(problems)
            advice = "Nothing in the form was changed; set again with values the form offers."
            raise InvalidParameterError(f"{error.message}\n{advice}", errors=problems)

    def set(self, **fields: Any) -> None:
        """Set controls by field name; other fields keep their values. Either every value
        is taken or none is.

        Raises:
            InvalidParameterError: the model has no such field, or a control cannot hold the
                value (see :meth:`check`); nothing was changed.
        """
        self.check(**fields)
        self.touched.update(fields)
        with self.quiet():
            for name, value in fields.items():
                self.fields[name].set_value(value)

    def reset(self) -> None:
        """Every field back to its default; reference lists and shots emptied; no message
        shows until a field is touched again."""
        self.touched.clear()
        self.attempted = False
        self._shown = None
        with self.quiet():
            for row in self.fields.values():
                row.reset()

    def attempt(self) -> None:
        """A submission was tried: show every message, touched or not."""
        if not self.attempted:
            self.attempted = True
            self._shown = None

    # --- showing what the catalog says ------------------------------------------------

    def shows_messages_of(self, name: str) -> bool:
        """Whether the row ``name`` shows its messages now (touched, or a submission tried)."""
        return self.attempted or name in self.touched

    def unshown(self, preview: Preview) -> tuple[list[str], list[str]]:
        """What the rows do not show: (messages located at no visible row, names of untouched
        rows the catalog objects to). The Studio shows these once, above Submit."""
        visible = {n for n, row in self.fields.items() if n not in preview.hidden}
        loose = [
            e.message for e in preview.errors if not e.loc or str(e.loc[0]) not in visible
        ]
        waiting = [
            n for n in visible
            if not self.shows_messages_of(n) and preview.messages_for(n)
        ]
        return list(dict.fromkeys(loose)), waiting

    def show(self, preview: Preview) -> None:
        """Messages under their fields (once touched); fields the mode refuses or ignores
        hidden; required choices not made yet carry a neutral hint."""
        if preview is self._shown:
            return
        self._shown = preview
        for name, row in self.fields.items():
            row.hidden = name in preview.hidden
            if self.shows_messages_of(name):
                row.show_errors([e for e in preview.errors if e.loc and e.loc[0] == name])
            elif hint := row.hint():
                row.show_line(hint_html(hint))
            else:
                row.show_errors([])  # the rows inside (extra_params' keys) are emptied too
        self._place_lists()
        note = ""
        if preview.hidden:
            items = "; ".join(
                f"<code>{escape(name)}</code> {escape(reason)}"
                for name, reason in preview.hidden.items()
            )
            note = styled(f"Hidden: {items}", MUTED, size="90%")
        if self.hidden_note.value != note:
            self.hidden_note.value = note
