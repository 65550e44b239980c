"""The compare action: the current prompt on several chosen models, shown as a gallery.

It runs :func:`genlab.comparison.compare` (blocking, with bounded concurrency) on the widgets'
:class:`~genlab.widgets.Background` pool and puts the comparison's gallery, media embedded,
into an HTML widget. The credit line of the grid is shown before anything is sent.
"""

from __future__ import annotations

import concurrent.futures
import html
from collections.abc import Callable, Sequence

import ipywidgets as widgets

from genlab.catalog import CATALOG
from genlab.client import Client
from genlab.comparison import Comparison, compare, plan
from genlab.widgets._background import Background
from genlab.widgets._protocols import StudioClient


class ComparePanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Choose models, run the prompt on each, see the results side by side.

    Example:
        panel = ComparePanel(client, prompt=lambda: "a red kite")
        panel.run(["video-a", "video-f"]).result()   # the Comparison
    """

    def __init__(self, client: StudioClient, prompt: Callable[[], str]) -> None:
        super().__init__()
        self.add_class("genlab-compare")
        self.client = client
        self.prompt = prompt
        self._work = Background.shared()
        self.models = widgets.SelectMultiple(
            options=list(CATALOG),
            rows=min(10, len(CATALOG)),
            description="models",
            tooltip="Ctrl/Cmd-click to choose several",
        )
        self.button = widgets.Button(
            description="Compare", icon="columns", tooltip="Send the current prompt to each model"
        )
        self.button.on_click(lambda _b: self._clicked())
        self.status = widgets.HTML()
        self.gallery = widgets.HTML()
        self.future: concurrent.futures.Future[Comparison] | None = None
        self.children = [widgets.HBox([self.models, self.button]), self.status, self.gallery]

    def choose(self, models: Sequence[str]) -> None:
        """Select models (unknown names raise ValueError)."""
        unknown = [m for m in models if m not in CATALOG]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; use names from genlab.CATALOG")
        self.models.value = tuple(models)

    def run(self, models: Sequence[str] | None = None) -> concurrent.futures.Future[Comparison]:
        """Start the comparison in the background; the future resolves to the Comparison.

        Raises:
            ValueError: no model chosen, or no prompt written.
            TypeError: the client is not a :class:`genlab.Client` (comparisons block on one).
        """
        if models is not None:
            self.choose(models)
        chosen = list(self.models.value)
        prompt = self.prompt()
        if not chosen:
            raise ValueError("choose at least one model to compare")
        if not prompt.strip():
            raise ValueError("write a prompt first: the comparison sends it to every model")
        client = self.client
        if not isinstance(client, Client):
            raise TypeError(f"comparing needs a genlab.Client, got {type(client).__name__}")
        grid = plan([prompt], chosen)
        self.status.value = html.escape(f"{grid.money_line}; running…")
        self.gallery.value = ""
        self.button.disabled = True

        def work() -> Comparison:
            result = compare(client, [prompt], chosen, progress=False, quiet=True)
            self.gallery.value = str(result.gallery())
            return result

        def done(_result: Comparison) -> None:
            self.status.value = html.escape(f"{grid.money_line}; done")
            self.button.disabled = False

        def failed(exc: BaseException) -> None:
            self.status.value = (
                "<b>The comparison failed</b><br>" + html.escape(f"{type(exc).__name__}: {exc}")
            )
            self.button.disabled = False

        self.future = self._work.run(work, on_done=done, on_error=failed)
        return self.future

    def _clicked(self) -> None:
        try:
            self.run()
        except Exception as exc:  # a widget callback: show, do not raise
            self.status.value = html.escape(str(exc))
