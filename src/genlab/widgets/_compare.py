"""The compare action: the current prompt on several chosen models, shown as a gallery.

It runs :func:`genlab.comparison.compare` (blocking, with bounded concurrency) in a worker
thread and puts the comparison's gallery, media embedded, into an HTML widget. The credit
line of the grid is shown before anything is sent.
"""

from __future__ import annotations

import concurrent.futures
import html
import importlib.util
import threading
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets

from genlab.catalog import CATALOG


def compare_available() -> bool:
    """Whether genlab's comparison module is installed with this genlab."""
    try:
        return importlib.util.find_spec("genlab.comparison") is not None
    except (ImportError, ValueError):
        return False


class ComparePanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Choose models, run the prompt on each, see the results side by side.

    Example:
        panel = ComparePanel(client, prompt=lambda: "a red kite")
        panel.run(["video-a", "video-f"]).result()   # the Comparison
    """

    def __init__(self, client: Any, prompt: Callable[[], str]) -> None:
        super().__init__()
        self.add_class("genlab-compare")
        self.client = client
        self.prompt = prompt
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
        self.future: concurrent.futures.Future[Any] | None = None
        self.children = [widgets.HBox([self.models, self.button]), self.status, self.gallery]

    def choose(self, models: Sequence[str]) -> None:
        """Select models (unknown names raise ValueError)."""
        unknown = [m for m in models if m not in CATALOG]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; use names from genlab.CATALOG")
        self.models.value = tuple(models)

    def run(self, models: Sequence[str] | None = None) -> concurrent.futures.Future[Any]:
        """Start the comparison in a worker thread; the future resolves to the Comparison."""
        from genlab.comparison import compare, plan

        if models is not None:
            self.choose(models)
        chosen = list(self.models.value)
        prompt = self.prompt()
        if not chosen:
            raise ValueError("choose at least one model to compare")
        if not prompt.strip():
            raise ValueError("write a prompt first: the comparison sends it to every model")
        grid = plan([prompt], chosen)
        self.status.value = html.escape(f"{grid.money_line}; running…")
        self.gallery.value = ""
        self.button.disabled = True
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.future = future

        def work() -> None:
            try:
                result = compare(self.client, [prompt], chosen, progress=False, quiet=True)
                self.gallery.value = str(result.gallery())
                self.status.value = html.escape(f"{grid.money_line}; done")
                future.set_result(result)
            except BaseException as exc:  # shown in the panel, never raised in a thread
                self.status.value = (
                    "<b>The comparison failed</b><br>" + html.escape(f"{type(exc).__name__}: {exc}")
                )
                future.set_exception(exc)
            finally:
                self.button.disabled = False

        threading.Thread(target=work, name="genlab-compare", daemon=True).start()
        return future

    def _clicked(self) -> None:
        try:
            self.run()
        except Exception as exc:  # a widget callback: show, do not raise
            self.status.value = html.escape(str(exc))
