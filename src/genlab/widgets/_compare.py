"""The compare action: the form's current settings on several chosen models, as a gallery.

Models are chosen with chips (toggle buttons, one per model: no hidden Ctrl-click). Every
field the form sets (prompt, resolution, duration, references…) goes to each chosen model that
has that field; a field a model lacks is dropped for it, and the panel says so before anything
is sent, together with the grid's credit line and any run the catalog would refuse (such a
run costs nothing and shows the catalog's message in its cell).

It runs :func:`genlab.comparison.compare` (blocking, with bounded concurrency) on the widgets'
:class:`~genlab.widgets.Background` pool, shows each model's status while it runs (a
:class:`RunBoard`), and puts the comparison's gallery, media embedded and wrapping to the
width, into an HTML widget. The cost line is said once, above the Compare button.
"reuse earlier results" passes ``reuse=True``: cells whose exact request
already has a result are filled from it at zero credits.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from genlab.catalog import CATALOG
from genlab.client import Client, TaskRecord
from genlab.comparison import Comparison, Plan, compare, plan
from genlab.display import ERROR, MUTED, escape, lines, styled, text
from genlab.widgets._background import Background
from genlab.widgets._protocols import StudioClient
from genlab.widgets._runboard import RunBoard


def compare_settings(
    body: Mapping[str, Any], models: Sequence[str]
) -> tuple[str, dict[str, Any], dict[str, list[str]]]:
    """Split a form's body into the prompt, the params for ``compare`` and, per model, the
    fields it lacks (dropped for it).

    Example:
        >>> body = {"model": "video-a", "prompt": "a fox", "resolution": "480P", "duration": 4}
        >>> prompt, params, dropped = compare_settings(body, ["video-a", "image-b"])
        >>> prompt, params, dropped
        ('a fox', {'resolution': '480P', 'duration': 4}, {'image-b': ['duration']})
    """
    prompt = str(body.get("prompt", ""))
    fields = {k: v for k, v in body.items() if k not in ("model", "prompt")}
    params = {k: v for k, v in fields.items() if any(k in CATALOG[m].model_fields for m in models)}
    dropped = {
        m: [k for k in fields if k not in CATALOG[m].model_fields] for m in models
    }
    return prompt, params, {m: names for m, names in dropped.items() if names}


class ComparePanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Choose models, send the form's settings to each, see the results side by side.

    Args:
        client: a :class:`genlab.Client` (comparisons block on one).
        settings: returns the request body the form stands for (the Studio's ``body``).

    Example:
        panel = ComparePanel(client, settings=lambda: {"model": "image-b", "prompt": "a kite"})
        panel.run(["image-b", "image-d"]).result()   # the Comparison

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> with genlab.Client("http://localhost:1", "key", history=history) as client:
        ...     panel = ComparePanel(client, lambda: {"model": "image-b", "prompt": "a kite"})
        ...     type(panel).__name__
        'ComparePanel'
        >>> history.close()
    """

    def __init__(self, client: StudioClient, settings: Callable[[], Mapping[str, Any]]) -> None:
        super().__init__()
        self.add_class("genlab-compare")
        self.client = client
        self.settings = settings
        self._work = Background.shared()
        self.chips: dict[str, widgets.ToggleButton] = {}
        rows = []
        kinds: dict[str, list[str]] = {}
        for name, cls in CATALOG.items():
            kinds.setdefault(cls.KIND, []).append(name)
        for kind, names in kinds.items():
            chips = []
            for name in names:
                chip = widgets.ToggleButton(
                    description=name, tooltip=CATALOG[name].SUMMARY, icon="",
                    layout=widgets.Layout(width="auto", min_width="6.5em"),
                )
                chip.add_class("genlab-chip")
                chip.observe(self._chosen, "value")
                self.chips[name] = chip
                chips.append(chip)
            rows.append(widgets.HBox(
                [widgets.HTML(text(kind, MUTED),
                              layout=widgets.Layout(width="4em")), *chips],
                layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
            ))
        self.button = widgets.Button(
            description="Compare", icon="columns", button_style="primary", disabled=True,
            tooltip="Send the form's settings to each chosen model",
            layout=widgets.Layout(width="auto"),
        )
        self.button.on_click(lambda _b: self._clicked())
        self.reuse_box = widgets.Checkbox(
            value=False, description="reuse earlier results", indent=False,
            tooltip="Fill cells from earlier results of the same request at zero credits; "
                    "unticked, only runs with a seed are reused (the client's default)",
            layout=widgets.Layout(width="auto"),
        )
        self.plan_note = widgets.HTML()
        self.status = widgets.HTML()
        self.gallery = widgets.HTML(layout=widgets.Layout(max_width="100%"))
        self.future: concurrent.futures.Future[Comparison] | None = None
        self.children = [
            widgets.HTML(text("Choose models; the form's current settings go to each.", MUTED)),
            *rows, self.plan_note, widgets.HBox([self.button, self.reuse_box]), self.status,
            self.gallery,
        ]
        self.refresh()

    @property
    def chosen(self) -> list[str]:
        """The chosen models, in catalog order."""
        return [name for name, chip in self.chips.items() if chip.value]

    def choose(self, models: Sequence[str]) -> None:
        """Choose exactly ``models`` (unknown names raise ValueError)."""
        unknown = [m for m in models if m not in CATALOG]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; use names from genlab.CATALOG")
        self._holding = True
        try:
            for name, chip in self.chips.items():
                chip.value = name in models
        finally:
            self._holding = False
        self.refresh()

    _holding = False
    on_finished: Callable[[], object] | None = None
    """Called (on a worker thread) when a comparison ends; the Studio refreshes its history."""

    def _chosen(self, _change: object) -> None:
        if not self._holding:
            self.refresh()

    def _plan(self) -> tuple[str, dict[str, Any], dict[str, list[str]], Plan | None]:
        chosen = self.chosen
        prompt, params, dropped = compare_settings(self.settings(), chosen)
        grid = plan([prompt], chosen, params) if chosen else None
        return prompt, params, dropped, grid

    def refresh(self) -> None:
        """Say what Compare would send, to which model, and what it would cost."""
        for chip in self.chips.values():
            icon = "check" if chip.value else ""
            if chip.icon != icon:
                chip.icon = icon
        if not self.chosen:
            self._show_note("")
            self.button.disabled = True
            return
        try:
            prompt, params, dropped, grid = self._plan()
        except Exception as exc:  # shown, never raised: this runs on every edit
            self._show_note(text(exc, ERROR))
            self.button.disabled = True
            return
        if grid is None:
            self._show_note("")
            self.button.disabled = True
            return
        sent = ", ".join(f"{k}={_short(v)}" for k, v in params.items()) or "model defaults"
        notes = [f"Sends: {sent}"]
        notes += [f"{m} has no {', '.join(names)}: dropped for it" for m, names in dropped.items()]
        refused = [r for r in grid.runs if r.invalid]
        notes += [f"{r.model} would refuse this: {r.invalid}" for r in refused]
        notes.append(grid.money_line)
        self._show_note(lines(notes))
        self.button.disabled = not prompt.strip() or len(refused) == len(grid.runs)

    def _show_note(self, markup: str) -> None:
        value = styled(markup, MUTED, tag="div", size="90%") if markup else ""
        if self.plan_note.value != value:
            self.plan_note.value = value

    def run(self, models: Sequence[str] | None = None) -> concurrent.futures.Future[Comparison]:
        """Start the comparison in the background; the future resolves to the Comparison.

        Raises:
            ValueError: no model chosen, or no prompt written.
            TypeError: the client is not a :class:`genlab.Client` (comparisons block on one).
        """
        if models is not None:
            self.choose(models)
        chosen = self.chosen
        prompt, params, _dropped, grid = self._plan()
        if not chosen or grid is None:
            raise ValueError("choose at least one model to compare")
        if not prompt.strip():
            raise ValueError("write a prompt first: the comparison sends it to every model")
        client = self.client
        if not isinstance(client, Client):
            raise TypeError(f"comparing needs a genlab.Client, got {type(client).__name__}")
        self.gallery.value = ""
        self.button.disabled = True
        reuse = True if self.reuse_box.value else None
        board = RunBoard(grid)
        self.status.value = board.html()

        def seen(record: TaskRecord) -> None:  # the client's runner thread: assign, no more
            if board.seen(record):
                self.status.value = board.html()

        def work() -> Comparison:
            result = compare(client, [prompt], chosen, params, progress=False, quiet=True,
                             reuse=reuse, on_update=seen)
            self.gallery.value = str(result.gallery(layout="wrap"))
            return result

        def done(result: Comparison) -> None:
            self.status.value = board.ended(result)
            self.button.disabled = False
            if self.on_finished is not None:
                self.on_finished()

        def failed(exc: BaseException) -> None:
            self.status.value = (
                "<b>The comparison failed</b><br>" + escape(f"{type(exc).__name__}: {exc}")
            )
            self.button.disabled = False
            if self.on_finished is not None:
                self.on_finished()

        self.future = self._work.run(work, on_done=done, on_error=failed)
        return self.future

    def _clicked(self) -> None:
        try:
            self.run()
        except Exception as exc:  # a widget callback: show, do not raise
            self.status.value = escape(exc)


def _short(value: Any) -> str:
    if isinstance(value, list):
        return f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"
