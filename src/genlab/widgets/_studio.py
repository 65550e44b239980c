"""The Studio: pick a model, fill its form, submit, watch cards, browse history, compare.

Example:
    import genlab
    client = genlab.connect()
    studio = genlab.studio(client)              # or genlab.widgets.Studio(client)
    studio                                      # display it

The Studio can be driven from code as well as by hand::

    studio.set(model="video-c", prompt="a lighthouse", resolution="720P",
               reference_images=[{"url": "https://example.com/a.png",
                                  "reference_type": "first_frame"}])
    studio.validation.mode.label   # 'image-to-video, first frame'
    studio.body                    # the request body the form stands for
    card = studio.submit()         # returns at once; card.future resolves to the record
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from genlab._errors import InvalidParameterError
from genlab.catalog import CATALOG, Preview, preview
from genlab.display import BORDER, MUTED, TEXT, WARNING, escape, lines, styled, text
from genlab.widgets._background import Background
from genlab.widgets._browser import reveal_newest_card
from genlab.widgets._card import TaskCard
from genlab.widgets._compare import ComparePanel
from genlab.widgets._fields import (
    STYLE,
    error_lines_html,
    hint_html,
    side_label,
    toggle_buttons,
)
from genlab.widgets._form import ModelForm
from genlab.widgets._history import HistoryPanel
from genlab.widgets._money import ReuseOffer, money_line
from genlab.widgets._offline import OFFLINE_HTML
from genlab.widgets._prompt_versions import PromptVersions
from genlab.widgets._protocols import StudioClient
from genlab.widgets._references import ReferenceList
from genlab.widgets._task import media_dir_or_temp
from genlab.widgets._tasks import TaskList

if TYPE_CHECKING:
    import concurrent.futures

    from genlab.comparison import Comparison

# Controls whose values mean the same in every model that has them: they follow the person.
SHARED_KINDS = frozenset({"prompt", "enum", "int", "bool", "text"})
SUBMIT_TIP = "Send the request; a task card appears under Tasks"


def _genlab_client(client: StudioClient) -> StudioClient:
    if not isinstance(client, StudioClient):
        raise TypeError(
            f"Studio needs a genlab.Client (its tasks run on the client's runner thread), "
            f"got {type(client).__name__}"
        )
    return client


def _known_model(model: str) -> str:
    if model not in CATALOG:
        raise ValueError(f"unknown model {model!r}; use one of {', '.join(CATALOG)}")
    return model


class StudioState(traitlets.HasTraits):
    """What a Studio stands for, apart from its widgets: the model shown (observe ``model``)
    and the person's latest values of the fields that mean the same in every model."""

    model = traitlets.Unicode()
    shared = traitlets.Dict()
    """Field name -> (its kind, the person's latest value), for :data:`SHARED_KINDS`."""

    def remember(self, form: ModelForm, only: str | None = None) -> None:
        """The values of the shared-meaning fields the person edited in ``form`` (``only``:
        that one field, if edited)."""
        for name in form.touched if only is None else {only} & form.touched:
            row = form.fields.get(name)
            if row is not None and row.spec.kind in SHARED_KINDS:
                self.shared[name] = (row.spec.kind, row.get_value())

    def forget(self, names: Iterable[str]) -> None:
        """Those fields follow nobody any more (a reset form)."""
        for name in names:
            self.shared.pop(name, None)


def studio(
    client: StudioClient,
    *,
    model: str | None = None,
    media_dir: str | Path | None = None,
    history_rows: int = 20,
    developer: bool = True,
) -> Studio:
    """A :class:`Studio` on ``client``; also ``genlab.studio(client)``.

    Args:
        client: a :class:`genlab.Client` (the synchronous one: tasks run on its runner).
        model: the model shown first (default: the catalog's first).
        media_dir: where results are saved for embedding, a folder or a storage URL
            (default: ``GENLAB_MEDIA``, else a temporary folder removed when the kernel exits;
            results the client keeps, as it does by default, are shown from its store).
        history_rows: how many recent tasks the history panel shows.
        developer: show the service's address and each card's developer controls (the
            folder, Download, Copy as code); ``False`` for a page people use without code
            (``genlab app``).

    Example:
        import genlab
        client = genlab.connect()
        genlab.studio(client, model="image-d")   # the last expression of a cell: displayed

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> with genlab.Client("http://localhost:1", "key", history=history) as client:
        ...     shown = studio(client, model="image-b")  # a notebook cell shows the Studio
        ...     shown.form.body
        {'model': 'image-b'}
        >>> history.close()
    """
    return Studio(client, model=model, media_dir=media_dir, history_rows=history_rows,
                  developer=developer)


class Studio(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """A notebook studio for every model in the catalog; ``genlab.studio(client)`` makes one.

    Args:
        client: a :class:`genlab.Client` (the synchronous one: tasks run on its runner), or
            anything else with the :class:`~genlab.widgets.StudioClient` surface.
        model: the model shown first (default: the catalog's first).
        media_dir: where results are saved for embedding, a folder or a storage URL
            (default: ``GENLAB_MEDIA``, else a temporary folder removed when the kernel exits;
            results the client keeps, as it does by default, are shown from its store).
        history_rows: how many recent tasks the history panel shows.
        developer: show the service's address and the cards' developer controls.

    Attributes:
        state: the :class:`StudioState` (``state.model``: observe it to follow the model).
        forms: model -> its form, built the first time the model is shown.
        cards: the task cards, oldest first (shown newest first, in a scrolling list); each
            draws its :class:`~genlab.widgets._task.Submission`, which talks to the client.
        submit_button, kind_picker, model_picker (the shown kind's; ``pickers``: one per
        kind), mode_label, credits_label, errors, hint, notices, reuse_offer, tabs (tasks,
        compare, history), card_box, clear_button, history_panel, compare_panel,
        prompt_versions (under the prompt field: save its text as a version of a named
        prompt, load a version): the parts, for tests and custom layouts. ``__init__`` lists
        the rows in the order shown.

    Fields with the same meaning in several models (prompt, resolution, duration,
    aspect_ratio, generate_audio: the scalar fields that share a name and a control) follow
    the person from model to model once edited, wherever the next model can hold the value;
    the other fields keep each model's own values. Messages show under a field once it was
    touched, or after Submit was tried.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> with genlab.Client("http://localhost:1", "key", history=history) as client:
        ...     view = Studio(client, model="video-a")
        ...     view.form.set(prompt="a fox", duration=4)
        ...     view.form.body
        {'model': 'video-a', 'prompt': 'a fox', 'duration': 4}
        >>> history.close()
    """

    def __init__(
        self,
        client: StudioClient,
        *,
        model: str | None = None,
        media_dir: str | Path | None = None,
        history_rows: int = 20,
        developer: bool = True,
    ) -> None:
        super().__init__()
        self.add_class("genlab-studio")
        self.developer = developer
        self.client = _genlab_client(client)
        self.media_dir = media_dir_or_temp(media_dir)
        self.state = StudioState(model=_known_model(model or next(iter(CATALOG))))
        self.forms: dict[str, ModelForm] = {}
        self._checked: Preview | None = None
        self._work = Background.shared()
        self._build_pickers()
        self._build_checks()
        self._build_actions()
        self._build_tabs(history_rows)
        self.children = [
            # One line: the title and the service; the form below must leave Submit in view.
            widgets.HTML(text("genlab studio", TEXT, tag="h3",
                              css="margin:0 0.6em 0 0;display:inline")
                         + (text(client.base_url, MUTED) if developer else "")
                         + OFFLINE_HTML),
            self.picker_row,
            self.summary,
            self.form_box,
            widgets.HBox([self.mode_label, self.credits_label],
                         layout=widgets.Layout(flex_flow="row wrap")),
            self.errors,
            self.hint,
            self.notices,
            # The offer sits beside Submit (see ReuseOffer: a choice leaves its place kept).
            widgets.HBox([self.submit_button, self.reset_button, self.reuse_offer],
                         layout=widgets.Layout(flex_flow="row wrap", align_items="center")),
            self._reveal,
            self.tabs,
        ]
        self.layout.border_top = f"1px solid {BORDER}"
        self.state.observe(lambda change: self._show(change["new"]), "model")
        self._show(self.model)

    # --- the parts -----------------------------------------------------------------------

    def _build_pickers(self) -> None:
        """The kind (video, image) and, per kind, a model picker that remembers its choice;
        the shown one is the kind picker's."""
        by_kind: dict[str, list[str]] = {}
        for name, cls in CATALOG.items():
            by_kind.setdefault(cls.KIND, []).append(name)
        first = self.model
        self.kind_picker = toggle_buttons("video or image models", list(by_kind))
        self.kind_picker.value = CATALOG[first].KIND
        self.kind_picker.add_class("genlab-kind-picker")
        self.pickers: dict[str, widgets.Dropdown] = {}
        for kind, names in by_kind.items():
            picker = widgets.Dropdown(options=names, value=first if first in names else names[0],
                                      description="model", style=STYLE)
            picker.add_class("genlab-model-picker")
            picker.observe(functools.partial(self._model_picked, kind), "value")
            self.pickers[kind] = picker
        self._kind_label = side_label("kind")
        self.picker_row = widgets.HBox([self._kind_label, self.kind_picker, self.model_picker],
                                       layout=widgets.Layout(flex_flow="row wrap"))
        self.kind_picker.observe(lambda change: self.select(self.pickers[change["new"]].value),
                                 "value")

    def _build_checks(self) -> None:
        """What the catalog says about the form, around it."""
        self.summary = widgets.HTML()
        self.form_box = widgets.VBox()
        self.mode_label = widgets.HTML()
        self.credits_label = widgets.HTML()
        self.credits_label.add_class("genlab-money")
        self.errors = widgets.HTML()
        self.hint = widgets.HTML()
        self.notices = widgets.HTML()

    def _build_actions(self) -> None:
        """Submit, Reset and the offer to reuse a result this request already has."""
        self.reuse_offer = ReuseOffer(self.client, self._submit_clicked)
        self.submit_button = widgets.Button(
            description="Submit", icon="play", button_style="primary",
            tooltip=SUBMIT_TIP,
            layout=widgets.Layout(width="auto", min_width="8em", flex="0 0 auto"),
        )
        self.submit_button.add_class("genlab-submit")
        self.submit_button.on_click(lambda _b: self._submit_clicked())
        self.reset_button = widgets.Button(
            description="Reset form", icon="undo",
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
        )
        self.reset_button.on_click(lambda _b: self.reset())

    def _build_tabs(self, history_rows: int) -> None:
        """Tasks, Compare and History, beside each other (never all below the cards)."""
        # Under the prompt field of every form: save its text as a version, load one back.
        self.prompt_versions = PromptVersions(self.client.history, self._prompt_text,
                                              self._put_prompt)
        self.tasks = TaskList()
        self.card_box, self.clear_button = self.tasks.card_box, self.tasks.clear_button
        self.history_panel = HistoryPanel(self.client.history, limit=history_rows)
        self.compare_panel = ComparePanel(self.client, settings=lambda: self.body)
        self.tabs = widgets.Tab(
            children=[self.tasks, self.compare_panel, self.history_panel],
            titles=("Tasks", "Compare models", "History"),
        )
        self.tabs.add_class("genlab-tabs")
        self._reveal = widgets.HTML()  # brings a new card into view (empty: no height)
        # The history shows what just happened: refreshed when its tab opens, after a compare.
        self.history_panel.follow(self.tabs)
        self.compare_panel.on_finished = self.history_panel.refresh

    # --- the model ---------------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model shown."""
        return str(self.state.model)

    @property
    def model_picker(self) -> widgets.Dropdown:
        """The model picker shown: the one of the kind picked."""
        return self.pickers[self.kind_picker.value]

    @property
    def form(self) -> ModelForm:
        """The form of the model shown."""
        return self.forms[self.model]

    def select(self, model: str) -> None:
        """Show ``model``'s form (built once, then reused)."""
        self.state.model = _known_model(model)

    def _model_picked(self, kind: str, change: dict[str, Any]) -> None:
        if kind == self.kind_picker.value:  # the other kind's picker follows silently
            self.select(change["new"])

    def _form_for(self, model: str) -> ModelForm:
        form = self.forms.get(model)
        if form is None:
            form = self.forms[model] = ModelForm(CATALOG[model], self.client)
            form.on_edit(functools.partial(self._edited, form))
        return form

    def _show(self, model: str) -> None:
        # The pickers follow the model: its kind's picker first, so the kind picker's own
        # report finds the model already chosen there.
        kind = CATALOG[model].KIND
        self.pickers[kind].value = model
        self.kind_picker.value = kind
        shown = (self._kind_label, self.kind_picker, self.model_picker)
        if self.picker_row.children != shown:
            self.picker_row.children = shown
        form = self._form_for(model)
        self._carry(form)
        form.attach("prompt", self.prompt_versions)
        self.form_box.children = [form]
        self.summary.value = text(CATALOG[model].SUMMARY, MUTED, tag="div", size="90%",
                                  css="line-height:1.4;margin:2px 0 6px")
        self._refresh()

    def _edited(self, form: ModelForm) -> None:
        # An edit may reach a form just replaced: the browser still showed it when the person
        # typed, a moment after switching models. It goes to the form shown now, wherever
        # that form has the same field.
        if form is self.form:
            self.state.remember(form)
        else:  # only the field just edited: the rest of that form is older than this one
            self.state.remember(form, only=form.last_edited)
            self._carry(self.form)
        self._refresh()

    def _carry(self, form: ModelForm) -> None:
        """Give ``form`` the person's values of the fields it shares (same name and control);
        a value its control cannot hold (a duration past its range) leaves its own."""
        for name, (kind, value) in self.state.shared.items():
            row = form.fields.get(name)
            if row is None or row.spec.kind != kind or row.get_value() == value:
                continue
            try:
                with form.silently():  # the Studio refreshes once, after
                    row.set_value(value)
            except ValueError:
                continue
            form.touched.add(name)

    # --- reading and setting the form --------------------------------------------------

    def _prompt_text(self) -> str:
        row = self.form.fields.get("prompt")
        value = row.get_value() if row is not None else ""
        return value if isinstance(value, str) else ""

    def _put_prompt(self, value: str) -> None:
        if "prompt" not in self.form.fields:
            raise ValueError(f"{self.model} has no prompt field")
        self.set(prompt=value)

    def set(self, model: str | None = None, **fields: Any) -> None:
        """Switch model (optional) and set fields; all of it, or nothing.

        Fields not named keep their values. The catalog judges the request; a field the model
        does not have, or a value its control cannot hold, refuses the whole call.

        Raises:
            ValueError: an unknown model.
            InvalidParameterError: a field the model does not have, or a value a control
                cannot hold (a duration past the model's range, a resolution it does not
                offer); neither the model nor any field was changed.

        Example:
            studio.set(model="video-a", prompt="a fox", duration=10)
        """
        if model is not None:
            _known_model(model)
        self._form_for(model or self.model).check(**fields)
        if model is not None:
            self.select(model)
        self.form.set(**fields)

    def reset(self) -> None:
        """The shown form back to its defaults, with no message until a field is touched."""
        self.state.forget(self.form.fields)
        self.form.reset()

    def add_file(
        self, list_name: str, data: bytes, filename: str, reference_type: str | None = None
    ) -> str:
        """Add a local file to a reference list, as the Upload button does; returns its URL.

        Raises:
            ValueError: the model has no such list.
            GenlabError: the file cannot be sent (``InvalidParameterError`` when the list needs
                a public URL), or its upload failed.
        """
        row = self.form.fields.get(list_name)
        if not isinstance(row, ReferenceList):
            raise ValueError(f"{self.model} has no reference list {list_name!r}")
        return row.add_file(data, filename, reference_type)

    @property
    def body(self) -> dict[str, Any]:
        """The request body the form stands for."""
        return self.form.body

    @property
    def validation(self) -> Preview:
        """What the catalog says about :attr:`body`: valid, mode, errors, notices, credits."""
        if self._checked is None:
            self._refresh()
        assert self._checked is not None
        return self._checked

    def _refresh(self) -> None:
        form = self.form
        self.state.remember(form)
        checked = preview(form.body)
        self._checked = checked
        form.show(checked)
        mode = checked.mode.label if checked.mode is not None else "unknown"
        self._assign(self.mode_label, f"mode: <b>{escape(mode)}</b>&nbsp;&nbsp;")
        self._show_money()
        # Each message once: under its field; here only those no visible field shows.
        loose, waiting = form.unshown(checked)
        shown = loose if (form.touched or form.attempted) else []
        self._assign(self.errors, error_lines_html(shown))
        todo = "" if checked.valid or not waiting else (
            "To submit, fill in: " + ", ".join(form.fields[n].spec.label for n in waiting)
        )
        self._assign(self.hint, hint_html(todo) if todo else "")
        # What the catalog will change is said apart from what it merely notes.
        changed = [c.message for c in checked.request.adjustments] if checked.request else []
        notes = lines([n for n in checked.notices if n not in changed], mark="&#8505; ")
        said = lines([f"changed: {c}" for c in changed], mark="&#9888; ")
        self._assign(self.notices, (styled(said, WARNING, tag="div", size="90%") if said else "")
                     + (styled(notes, MUTED, tag="div", size="90%") if notes else ""))
        self.compare_panel.refresh()
        self.reuse_offer.check(form.body if checked.valid else None)

    def _show_money(self) -> None:
        """The money line (what the request reserves, what is left) and Submit's state, off
        with the budget's reason before the click. Traits only: also run on the client's
        runner as a task of this Studio is reserved, refused or ends."""
        checked = self._checked
        if checked is None:
            return
        try:
            line, refusal = money_line(self.client, checked)
        except Exception as exc:  # the line must never break the form
            line, refusal = text(f"the budget could not be asked: {exc}", MUTED), None
        self._assign(self.credits_label, line)
        allowed = checked.valid and refusal is None
        if self.submit_button.disabled == allowed:
            self.submit_button.disabled = not allowed
        tip = SUBMIT_TIP if refusal is None else f"Submit is off: {refusal}"
        if self.submit_button.tooltip != tip:
            self.submit_button.tooltip = tip

    @staticmethod
    def _assign(widget: widgets.HTML, value: str) -> None:
        if widget.value != value:  # unchanged values send nothing to the browser
            widget.value = value

    # --- submitting --------------------------------------------------------------------

    def submit(self, *, reuse: bool | None = None) -> TaskCard:
        """Send the current request; returns its card at once (``card.future``).

        ``reuse`` is ``Client.generate``'s: ``True`` is the offer's "Reuse it" (the card shows
        the earlier result at zero credits), ``False`` its "Generate again".

        Raises:
            InvalidParameterError: the request is invalid (the form now shows every message
                under its field, touched or not).
        """
        self.form.attempt()
        self._refresh()
        checked = self.validation
        if not checked.valid:
            raise InvalidParameterError.from_details(checked.errors)
        card = TaskCard(self.client, self.body, media_dir=self.media_dir, checked=checked,
                        reuse=reuse, developer=self.developer)
        # The person just chose: no offer until an edit, and never this card's own result.
        self.reuse_offer.withdraw()
        card.on_finished(functools.partial(self._made, card))
        # Each new status (reserved, refused, ended) moves the money line.
        card.badge.observe(lambda _change: self._show_money(), "value")
        self.tasks.add(card)
        self.tabs.selected_index = 0
        self._reveal.value = reveal_newest_card(len(self.cards))
        card.start()
        if card.future is not None and self.history_panel.available:
            # Runs on the client's runner thread: the history is read on a worker instead.
            card.future.add_done_callback(lambda _f: self._work.run(self.history_panel.refresh))
        self.history_panel.refresh()
        return card

    def _made(self, card: TaskCard) -> None:
        if card.record is not None:
            self.reuse_offer.made_here(card.record.task_id)

    def _submit_clicked(self, reuse: bool | None = None) -> None:
        try:
            self.submit(reuse=reuse)
        except InvalidParameterError:
            pass  # every message is shown under its field now
        except Exception as exc:  # a widget callback: shown, never raised
            self.errors.value = error_lines_html([f"{type(exc).__name__}: {exc}"])

    # --- the task cards ----------------------------------------------------------------

    @property
    def cards(self) -> list[TaskCard]:
        """The task cards, oldest first (shown newest first)."""
        return self.tasks.cards

    def clear_finished(self) -> list[TaskCard]:
        """Remove the cards of tasks that ended; returns them (the history keeps them)."""
        return self.tasks.clear_finished()

    # --- comparing ---------------------------------------------------------------------

    def compare(self, models: list[str]) -> concurrent.futures.Future[Comparison]:
        """Send the form's current settings to ``models``; a future of the Comparison.

        Every field the form sets goes to each model that has it; fields a model lacks are
        dropped for it, and the compare panel says which.

        Raises:
            ValueError: no model given, or no prompt written.
            TypeError: the client is not a :class:`genlab.Client` (comparisons block on one).
        """
        self.tabs.selected_index = 1
        return self.compare_panel.run(models)
