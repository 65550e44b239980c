"""One control per field kind: each maps a :class:`~genlab.catalog.FieldSpec` to widgets.

Every field row is a ``VBox`` of its control(s) and a message line under them, with the same
small surface: ``get_value()`` (what the body would carry, :data:`~genlab.catalog.OMIT` to
leave the field out), ``check()`` (whether a control can hold a value, changing nothing),
``set_value()``, ``reset()``, ``on_edit()`` and ``show_errors()``. Nothing here judges a
request; the catalog does, and the form shows its messages. Controls are labelled with the
catalog's label (``spec.label``); the wire name opens their tooltip.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import ipywidgets as widgets

from genlab._errors import ErrorDetail
from genlab.catalog import OMIT, FieldSpec
from genlab.display import ERROR, MUTED, escape, lines, styled, text

LABEL_WIDTH = "10em"
STYLE = {"description_width": LABEL_WIDTH}
# ToggleButtons when an enum has at most this many options, each at most this long.
TOGGLE_MAX_OPTIONS = 4
TOGGLE_MAX_LABEL = 10
# Integer ranges wider than this get a number box instead of a slider.
SLIDER_MAX_SPAN = 1000


def choice_label(value: Any) -> str:
    """How a choice is labelled: ``true``/``false`` for booleans, else the value itself."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def error_lines_html(messages: Sequence[str]) -> str:
    """Error lines, one per message (⚠, escaped): under a field, or above Submit for the
    messages no field shows (the card's account of a failed task is
    :func:`genlab.widgets._card.failure_html`)."""
    if not messages:
        return ""
    return styled(lines(messages, mark="&#9888; "), ERROR, tag="div", size="90%",
                  cls="genlab-error")


def hint_html(hint: str) -> str:
    """A neutral hint (not an error) for the line under a field, e.g. "required: choose one"."""
    return text(hint, MUTED, tag="div", size="90%", cls="genlab-hint")


def side_label(text: str, tooltip: str = "") -> widgets.HTML:
    """A label in the description column, for controls whose own description wraps above
    them (ToggleButtons)."""
    # The catalog's labels are short enough for the column: one line, like the other labels.
    return widgets.HTML(
        f"<div style='text-align:right;padding-right:8px;white-space:nowrap;"
        f"overflow:hidden;text-overflow:ellipsis'>{escape(text)}</div>",
        tooltip=tooltip or None,
        layout=widgets.Layout(width=LABEL_WIDTH, min_width=LABEL_WIDTH),
    )


def toggle_buttons(tooltip: str, options: Sequence[Any]) -> widgets.ToggleButtons:
    """ToggleButtons without a description (put :func:`side_label` beside them)."""
    return widgets.ToggleButtons(
        options=options,
        tooltip=tooltip,
        tooltips=[tooltip] * len(options),
        style={"button_width": "auto"},
    )


class EditNotifier:
    """Tells listeners about edits; ``quiet()`` folds several changes into one report."""

    def _init_notifier(self) -> None:
        self._listeners: list[Callable[[], None]] = []
        self._quiet = 0

    def on_edit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every edit."""
        self._listeners.append(callback)

    def _edited(self, _change: object = None) -> None:
        if self._quiet:
            return
        for callback in list(self._listeners):
            callback()

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Change several controls and report one edit at the end."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1
        self._edited()

    @contextmanager
    def silently(self) -> Iterator[None]:
        """Change controls and report no edit: the caller acts on the change itself."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1


class FieldRow(EditNotifier, widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Base of the field rows: a control area and a message line.

    Subclasses build their controls, call :meth:`_finish` and report edits with
    :meth:`_edited`.
    """

    def __init__(self, spec: FieldSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # CSS hooks for styling and browser tests: .genlab-field-duration, ...
        self.add_class("genlab-field")
        self.add_class(f"genlab-field-{spec.name}")
        self.spec = spec
        self.message = widgets.HTML()
        self._init_notifier()

    def _finish(self, controls: Sequence[widgets.Widget]) -> None:
        self.children = [*controls, self.message]

    # --- the surface the form uses ----------------------------------------------------

    # Every row type defines these two. ABCMeta cannot be combined with the widgets'
    # traitlets metaclass, so the abstractness is checked by mypy, which needs no metaclass.
    @abstractmethod
    def get_value(self) -> Any:
        """The control's value as a body value (``OMIT`` to leave the field out)."""

    @abstractmethod
    def set_value(self, value: Any) -> None:
        """Show ``value`` in the control; ``OMIT`` restores the default.

        Raises:
            ValueError: the control cannot hold ``value`` (as :meth:`check` says).
        """

    @abstractmethod
    def check(self, value: Any) -> None:
        """Whether :meth:`set_value` could show ``value``, changing nothing.

        Raises:
            ValueError: it could not; the message names the field and what it takes.
        """

    def reset(self) -> None:
        """Back to the field's default (or "(default)" / empty)."""
        self.set_value(OMIT)

    def show_errors(self, errors: Sequence[ErrorDetail]) -> None:
        """Show the catalog's errors located at this row under it (nothing when none)."""
        self.show_line(error_lines_html([self.readable(e) for e in errors]))

    def readable(self, error: ErrorDetail) -> str:
        """A catalog error as the row shows it: an item of a list, located by the error's
        ``loc`` (``("reference_images", 1, "url")``), is counted from 1, as the rows number
        them ("reference_images[1].url ..." -> "item 2 of reference images: url ...")."""
        loc = error.loc
        if len(loc) < 2 or loc[0] != self.spec.name or not isinstance(loc[1], int):
            return error.message
        item = f"{self.spec.name}[{loc[1]}]"
        label = f"item {loc[1] + 1} of {self.spec.label.lower() or self.spec.name}"
        key = loc[2] if len(loc) > 2 and isinstance(loc[2], str) else None
        if key is not None and f"{item}.{key}" in error.message:
            item, label = f"{item}.{key}", f"{label}: {key}"
        return error.message.replace(item, label, 1)

    def show_line(self, markup: str) -> None:
        """Put ``markup`` (an error or a neutral hint) under the row."""
        if self.message.value != markup:
            self.message.value = markup

    def hint(self) -> str:
        """The neutral hint an untouched row shows while the catalog objects ("" for none)."""
        return ""

    @property
    def hidden(self) -> bool:
        return bool(self.layout.display == "none")

    @hidden.setter
    def hidden(self, value: bool) -> None:
        wanted = "none" if value else None
        if self.layout.display != wanted:
            self.layout.display = wanted


class PromptField(FieldRow):
    """A Textarea with a live ``n / max characters`` counter."""

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec)
        self.control = widgets.Textarea(
            description=spec.label,
            tooltip=spec.tooltip,
            placeholder="Describe what to generate",
            rows=4,
            style=STYLE,
            layout=widgets.Layout(width="100%"),
        )
        self.counter = widgets.HTML(layout=widgets.Layout(margin=f"0 0 0 {LABEL_WIDTH}"))
        self.control.observe(self._typed, "value")
        self._finish([self.control, self.counter])
        self._count()

    def _count(self) -> None:
        n = len(self.control.value)
        limit = self.spec.max
        count = f"{n} / {limit} characters" if limit is not None else f"{n} characters"
        over = limit is not None and n > limit
        self.counter.value = text(count, ERROR if over else MUTED, size="85%")

    def _typed(self, _change: object) -> None:
        self._count()
        self._edited()

    def get_value(self) -> Any:
        return self.control.value

    def check(self, value: Any) -> None:
        if not (value is OMIT or value is None or isinstance(value, str)):
            raise ValueError(f"{self.spec.name} must be a string, got {value!r}")

    def set_value(self, value: Any) -> None:
        self.check(value)
        self.control.value = "" if value is OMIT or value is None else value


class ChoiceField(FieldRow):
    """An enum: ToggleButtons for a few short options, else a Dropdown.

    Optional fields with no stated default start at "(default)", which leaves them out;
    required ones with no default start at "(choose)".
    """

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec)
        options: list[tuple[str, Any]] = [(choice_label(c), c) for c in spec.choices]
        if spec.omittable:
            options.insert(0, ("(default)", OMIT))
        elif spec.required:
            options.insert(0, ("(choose)", OMIT))
        self.choices = [value for _, value in options]
        short = all(len(label) <= TOGGLE_MAX_LABEL for label, _ in options)
        shown: widgets.Widget
        if len(options) <= TOGGLE_MAX_OPTIONS and short:
            self.control = toggle_buttons(spec.tooltip, options)
            shown = widgets.HBox([side_label(spec.label, spec.tooltip), self.control])
        else:
            self.control = widgets.Dropdown(
                options=options, description=spec.label, tooltip=spec.tooltip, style=STYLE
            )
            shown = self.control
        self.control.value = self._initial()
        self.control.observe(self._edited, "value")
        self._finish([shown])

    def _initial(self) -> Any:
        return OMIT if self.spec.default is None else self.spec.default

    def hint(self) -> str:
        if self.spec.required and self.control.value is OMIT:
            return "required: choose one"
        return ""

    def get_value(self) -> Any:
        return self.control.value

    def _choice(self, value: Any) -> Any:
        if value is OMIT or value is None:
            return self._initial()
        # Compared by type too: True must not pick a 1, nor "1" a 1.
        for choice in self.choices:
            if type(choice) is type(value) and choice == value:
                return choice
        shown = ", ".join(choice_label(c) for c in self.spec.choices)
        raise ValueError(f"{self.spec.name} cannot be {value!r} in the form; choose one of {shown}")

    def check(self, value: Any) -> None:
        self._choice(value)

    def set_value(self, value: Any) -> None:
        self.control.value = self._choice(value)


class IntField(FieldRow):
    """An integer: a slider within the model's bounds beside a number box, a number box for
    wide ranges, or a text box (empty = "(default)") for optional integers with no stated
    default.

    The slider and its box always agree. A value typed in the box outside the model's bounds
    goes to the nearest one, as a bounded ipywidgets box or a slider's readout does, but never
    silently: a line under the field says what was typed and what it became, until the next
    edit. A box without a slider keeps what is typed and the catalog's message says what is
    wrong (Submit waits). ``control`` is the slider (or the box, where there is no slider);
    ``entry`` the box whose value the body carries.
    """

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec)
        low = spec.min if spec.min is not None else -(2**31)
        high = spec.max if spec.max is not None else 2**31 - 1
        self.low, self.high = low, high
        self.moved = ""  # what a typed value out of bounds became, said until the next edit
        self._moving = False
        common = {"description": spec.label, "tooltip": spec.tooltip, "style": STYLE}
        self.free_text = spec.omittable
        self.control: widgets.Widget
        self.entry: widgets.Widget
        if self.free_text:
            hint = f"(default) {low} to {high}" if spec.min is not None else "(default)"
            # Wide enough for its placeholder: the range must not be cut.
            width = f"calc({LABEL_WIDTH} + {len(hint) + 4}ch)"
            self.control = self.entry = widgets.Text(
                placeholder=hint, layout=widgets.Layout(width=width, max_width="100%"),
                **common,
            )
            controls: list[widgets.Widget] = [self.control]
        elif high - low <= SLIDER_MAX_SPAN:
            # Wide enough to pick a single second on a 2-30 range with the mouse.
            self.control = widgets.IntSlider(
                min=low, max=high, value=self._start(), readout=False,
                layout=widgets.Layout(width="36em", max_width="70%"), **common
            )
            self.entry = widgets.IntText(
                value=self._start(), tooltip=f"{spec.name}: {low} to {high}",
                layout=widgets.Layout(width="6em"),
            )
            self.control.observe(self._slid, "value")
            controls = [widgets.HBox([self.control, self.entry],
                                     layout=widgets.Layout(align_items="center"))]
        else:
            self.control = self.entry = widgets.IntText(value=self._start(), **common)
            controls = [self.control]
        self.entry.observe(self._typed, "value")
        self._finish(controls)

    def _start(self) -> int:
        default = self.spec.default
        if isinstance(default, int) and not isinstance(default, bool):
            return default
        return self.spec.min if self.spec.min is not None else 0

    def _slid(self, change: dict[str, Any]) -> None:
        if self.entry.value != change["new"]:
            self.entry.value = change["new"]  # reported by _typed

    def _typed(self, change: dict[str, Any]) -> None:
        value = change["new"]
        if self.control is not self.entry:
            if not self.low <= value <= self.high:
                nearest = min(max(value, self.low), self.high)
                self.moved = (f"{self.spec.name} must be from {self.low} to {self.high}: "
                              f"{value} was set to {nearest}")
                self._moving = True
                try:
                    self.entry.value = nearest  # reported by the nested call
                finally:
                    self._moving = False
                return
            if not self._moving:
                self.moved = ""
            self.control.value = value
        self._edited()

    def hint(self) -> str:
        return self.moved

    def show_errors(self, errors: Sequence[ErrorDetail]) -> None:
        if errors or not self.moved:
            super().show_errors(errors)
        else:
            self.show_line(hint_html(self.moved))

    def get_value(self) -> Any:
        if not self.free_text:
            return self.entry.value
        text = self.entry.value.strip()
        if not text:
            return OMIT
        try:
            return int(text)
        except ValueError:
            return text  # sent as typed: the catalog says what is wrong with it

    def check(self, value: Any) -> None:
        if self.free_text or value is OMIT or value is None:
            return
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{self.spec.name} must be a whole number, got {value!r}")
        # The slider would clamp it; refuse instead.
        if not (self.low <= value <= self.high):
            raise ValueError(
                f"{self.spec.name} must be from {self.low} to {self.high} for this model, "
                f"got {value}"
            )

    def set_value(self, value: Any) -> None:
        self.check(value)
        if self.free_text:
            self.entry.value = "" if value is OMIT or value is None else str(value)
            return
        self.entry.value = self._start() if value is OMIT or value is None else value


class BoolField(FieldRow):
    """A checkbox."""

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec)
        self.control = widgets.Checkbox(
            value=bool(spec.default),
            description=spec.label,
            tooltip=spec.tooltip,
            indent=True,
            style=STYLE,
        )
        self.control.observe(self._edited, "value")
        self._finish([self.control])

    def get_value(self) -> Any:
        return self.control.value

    def check(self, value: Any) -> None:
        if not (value is OMIT or value is None or isinstance(value, bool)):
            raise ValueError(f"{self.spec.name} must be true or false, got {value!r}")

    def set_value(self, value: Any) -> None:
        self.check(value)
        self.control.value = bool(self.spec.default) if value is OMIT or value is None else value


class TextField(FieldRow):
    """Free text; empty leaves an optional field out."""

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec)
        default = spec.default if isinstance(spec.default, str) else ""
        self.control = widgets.Text(
            value=default,
            description=spec.label,
            tooltip=spec.tooltip,
            placeholder="(default)" if spec.omittable else "",
            style=STYLE,
        )
        self.control.observe(self._edited, "value")
        self._finish([self.control])

    def get_value(self) -> Any:
        value = self.control.value
        return OMIT if value == "" and not self.spec.required else value

    def check(self, value: Any) -> None:
        """Any value: shown as text, judged by the catalog."""

    def set_value(self, value: Any) -> None:
        if value is OMIT or value is None:
            value = self.spec.default if isinstance(self.spec.default, str) else ""
        self.control.value = str(value)


SCALAR_ROWS: dict[str, type[FieldRow]] = {
    "prompt": PromptField,
    "enum": ChoiceField,
    "int": IntField,
    "bool": BoolField,
    "text": TextField,
}
