"""The multi-shot editor: rows of prompt + duration, added and removed, for ``multi_prompt``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from genlab.catalog import OMIT, FieldSpec
from genlab.display import MUTED, escape, styled
from genlab.widgets._fields import LABEL_WIDTH, FieldRow

NEW_SHOT_SECONDS = 5.0


class ShotList(FieldRow):
    """Shots in order; each row a prompt and a duration in seconds (index follows the order).

    ``get_value()`` is ``[{"prompt": ..., "duration": ...}, ...]`` (the body gets each shot's
    ``index`` from its position).
    """

    def __init__(self, spec: FieldSpec) -> None:
        super().__init__(spec, layout=widgets.Layout(margin=f"0 0 0 {LABEL_WIDTH}"))
        self.title = widgets.HTML(
            f"<b>{escape(spec.label)}</b> {styled('(shots, in order)', MUTED)}",
            tooltip=spec.tooltip,
        )
        self.rows = widgets.VBox()
        self.add_button = widgets.Button(description="Add shot", icon="plus")
        self.add_button.on_click(lambda _b: self.add())
        self._shots: list[tuple[widgets.Textarea, widgets.BoundedFloatText]] = []
        self._finish([self.title, self.rows, self.add_button])

    def get_value(self) -> Any:
        if not self._shots:
            return OMIT
        return [{"prompt": p.value, "duration": _seconds(d.value)} for p, d in self._shots]

    def check(self, value: Any) -> None:
        for shot in [] if value is OMIT or value is None else list(value):
            if not isinstance(shot, Mapping):
                raise ValueError(f"each shot is an object with prompt and duration: {shot!r}")
            _checked_seconds(shot.get("duration", NEW_SHOT_SECONDS))

    def set_value(self, value: Any) -> None:
        self.check(value)
        shots = [] if value is OMIT or value is None else list(value)
        with self.quiet():
            for prompt, duration in self._shots:
                prompt.close()
                duration.close()
            self._shots = []
            for shot in shots:
                self._append(str(shot.get("prompt", "")), shot.get("duration", NEW_SHOT_SECONDS))
            self._render()

    def add(self, prompt: str = "", duration: float = NEW_SHOT_SECONDS) -> None:
        """Append a shot."""
        self._append(prompt, duration)
        self._render()
        self._edited()

    def remove(self, index: int) -> None:
        prompt, duration = self._shots.pop(index)
        prompt.close()
        duration.close()
        self._render()
        self._edited()

    def _append(self, prompt: str, duration: Any) -> None:
        seconds = _checked_seconds(duration)
        text = widgets.Textarea(
            value=prompt,
            placeholder="What happens in this shot",
            rows=2,
            layout=widgets.Layout(width="60%"),
        )
        length = widgets.BoundedFloatText(
            value=seconds,
            min=0.0,
            max=3600.0,
            step=0.5,
            description="seconds",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="11em"),
        )
        text.observe(self._edited, "value")
        length.observe(self._edited, "value")
        self._shots.append((text, length))

    def _render(self) -> None:
        for row in self.rows.children:  # the row chrome goes; the shots' own controls stay
            for child in row.children:
                if isinstance(child, widgets.Button | widgets.HTML):
                    child.close()
            row.close()
        rows = []
        for i, (text, length) in enumerate(self._shots):
            remove = widgets.Button(icon="trash", tooltip="Remove this shot",
                                    layout=widgets.Layout(width="3em"))
            remove.on_click(lambda _b, i=i: self.remove(i))
            number = widgets.HTML(f"<code>{i + 1}.</code>")  # counted from 1, as messages are
            rows.append(widgets.HBox([number, text, length, remove]))
        self.rows.children = rows
        limit = self.spec.max_items
        self.add_button.disabled = limit is not None and len(self._shots) >= limit


def _checked_seconds(duration: Any) -> float:
    try:
        return float(duration)
    except (TypeError, ValueError):
        raise ValueError(f"a shot's duration is a number of seconds, got {duration!r}") from None


def _seconds(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
