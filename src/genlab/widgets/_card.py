"""A task card: one submission's status, elapsed time, polling progress, result and errors.

The card starts the task with ``client.generate_future`` and returns at once. The client's
runner thread reports each new status (``on_update`` moves the badge) and ends the future;
saving the results and embedding them (:func:`genlab.report.media_html`), the Download button
and the elapsed-time display run on the widgets' :class:`~genlab.widgets.Background`, so the
runner stays free to poll. Widgets are only ever updated by assigning traits, and every
error ends up on the card, never raised.

Example:
    card = TaskCard(client, {"model": "image-b", "prompt": "a kite"}).start()
    card.future.result()      # the TaskRecord
    card.wait_done(60)        # True once the card shows its final state (media embedded)
"""

from __future__ import annotations

import concurrent.futures
import html
import pprint
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from genlab._errors import (
    InvalidParameterError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskTimeoutError,
)
from genlab.catalog import CATALOG, Preview, preview
from genlab.client import TaskRecord, safe_filename
from genlab.report import media_html
from genlab.widgets._background import Background
from genlab.widgets._protocols import StudioClient

_PROGRESS = {"submitting": 0, "queued": 1, "processing": 2}
_COLOURS = {
    "submitting": "#6c757d",
    "queued": "#6c757d",
    "processing": "#0d6efd",
    "succeeded": "#198754",
    "failed": "#dc3545",
    "error": "#dc3545",
    "stopped": "#fd7e14",
}


def request_code(body: dict[str, Any]) -> str:
    """The Python that sends the same request, e.g. ``record = client.generate(**{...})``."""
    return "record = client.generate(**" + pprint.pformat(body, sort_dicts=False, width=88) + ")"


def error_html(exc: BaseException) -> str:
    """A readable, escaped account of what went wrong, with the advice the error carries."""
    if isinstance(exc, InvalidParameterError):
        items = "".join(f"<li>{html.escape(e.message)}</li>" for e in exc.errors)
        return f"<b>The request was refused</b><ul>{items}</ul>"
    if isinstance(exc, SubmissionUncertainError):
        title = "The submission may have reached the service"
    elif isinstance(exc, TaskFailedError):
        title = "The task failed"
    elif isinstance(exc, TaskTimeoutError):
        title = "Still running"
    else:
        title = type(exc).__name__
    return f"<b>{html.escape(title)}</b><br>{html.escape(str(exc))}"


class TaskCard(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """One submission, from "submitting" to its media or its error.

    Attributes:
        body: the request body sent.
        status: ``new``, ``submitting``, ``queued``, ``processing``, ``succeeded``,
            ``failed``, ``error`` (refused, uncertain, unreachable) or ``stopped``.
        future: the ``concurrent.futures.Future`` of the TaskRecord (after :meth:`start`).
        record: the latest record seen; ``error``: the exception, if any.
        paths: the files the results were saved to (for embedding).
    """

    def __init__(
        self,
        client: StudioClient,
        body: dict[str, Any],
        *,
        media_dir: str | Path | None = None,
        checked: Preview | None = None,
    ) -> None:
        super().__init__(layout=widgets.Layout(border="1px solid #ccc", padding="6px"))
        self.add_class("genlab-card")
        self.client = client
        self.body = dict(body)
        self.checked = checked if checked is not None else preview(self.body)
        self.media_dir = Path(media_dir) if media_dir else Path(tempfile.mkdtemp(prefix="genlab-"))
        self.status = "new"
        self.record: TaskRecord | None = None
        self.error: BaseException | None = None
        self.future: concurrent.futures.Future[TaskRecord] | None = None
        self.paths: list[Path] = []
        self._finished = threading.Event()
        self._started = time.monotonic()
        self._steps: list[str] = []
        self._work = Background.shared()

        self.header = widgets.HTML(self._header())
        self.badge = widgets.HTML()
        self.elapsed = widgets.HTML()
        self.progress = widgets.IntProgress(
            min=0, max=3, value=0, layout=widgets.Layout(width="12em")
        )
        self.steps = widgets.HTML()
        self.media = widgets.HTML()
        self.message = widgets.HTML()
        self.folder = widgets.Text(
            value="genlab-output", description="folder", style={"description_width": "initial"}
        )
        self.download_button = widgets.Button(
            description="Download", icon="download", disabled=True,
            tooltip="Save the results and a JSON sidecar into the folder",
        )
        self.download_button.on_click(lambda _b: self._download_in_background())
        self.code_button = widgets.Button(
            description="Copy as code", icon="code", tooltip="Show this request as Python"
        )
        self.code_button.on_click(lambda _b: self.show_code())
        self.code = widgets.Textarea(
            value=request_code(self.body),
            rows=min(12, 2 + len(self.body)),
            layout=widgets.Layout(width="100%", display="none"),
        )
        self.stop_button = widgets.Button(
            description="Stop waiting", icon="stop", tooltip="The task keeps running"
        )
        self.stop_button.on_click(lambda _b: self.stop())
        status_row = widgets.HBox([self.badge, self.progress, self.elapsed])
        buttons = widgets.HBox(
            [self.folder, self.download_button, self.code_button, self.stop_button]
        )
        self.children = [
            self.header, status_row, self.steps, self.media, self.message, buttons, self.code
        ]
        self._set_status("new")

    def _header(self) -> str:
        model = str(self.body.get("model", "?"))
        kind = CATALOG[model].KIND if model in CATALOG else ""
        mode = self.checked.mode.label if self.checked.mode is not None else ""
        prompt = str(self.body.get("prompt", ""))
        shown = prompt if len(prompt) <= 300 else prompt[:299] + "…"
        credits = self.checked.credits_text
        facts = " · ".join(html.escape(x) for x in (kind, mode, credits) if x)
        return (
            f"<b>{html.escape(model)}</b> <span style='color:#666'>{facts}</span>"
            f"<div style='white-space:pre-wrap'>{html.escape(shown)}</div>"
        )

    # --- running ----------------------------------------------------------------------

    def start(self) -> TaskCard:
        """Submit in the background and return at once (``self.future`` holds the record)."""
        self._started = time.monotonic()
        self._set_status("submitting")
        try:
            self.future = self.client.generate_future(self.body, on_update=self._on_update)
        except Exception as exc:  # e.g. a closed client: shown, not raised
            self._fail(exc)
            return self
        self._work.tick(self._show_elapsed, until=self._finished)
        self.future.add_done_callback(self._done)
        return self

    @property
    def done(self) -> bool:
        """True once the card shows its final state (media embedded, or the error)."""
        return self._finished.is_set()

    def wait_done(self, timeout: float | None = None) -> bool:
        """Block until :attr:`done` (or ``timeout`` seconds); returns :attr:`done`."""
        return self._finished.wait(timeout)

    def stop(self) -> None:
        """Stop waiting for the task; it keeps running on the service."""
        if self.future is not None:
            self.future.cancel()

    def _on_update(self, record: TaskRecord) -> None:
        # On the runner thread, once per new status. Never raise: that would end the wait.
        try:
            self.record = record
            self._set_status(record.status)
        except Exception as exc:
            self.message.value = html.escape(f"{type(exc).__name__}: {exc}")

    def _done(self, future: concurrent.futures.Future[TaskRecord]) -> None:
        # On the runner thread (or at once, if the future was already done).
        try:
            if future.cancelled():
                task = self.record.task_id if self.record is not None else None
                self._set_status("stopped")
                resume = f" Resume with client.wait({task!r})." if task else ""
                self.message.value = html.escape(
                    "Stopped waiting; the task keeps running on the service." + resume
                )
            elif future.exception() is not None:
                self._fail(future.exception())  # type: ignore[arg-type]
            else:
                self.record = future.result()
                self._set_status(self.record.status)
                if self.record.succeeded:
                    self._work.run(
                        self._save_and_embed,
                        self.record,
                        on_done=self._show_media,
                        on_error=self._media_failed,
                    )
                    return  # the card is finished once the media are shown
        except Exception as exc:
            self.message.value = html.escape(f"{type(exc).__name__}: {exc}")
        self._finish()

    def _save_and_embed(self, record: TaskRecord) -> str:
        # On a worker: the download blocks on the runner, the encoding on this thread.
        folder = self.media_dir / safe_filename(record.task_id, "task")
        self.paths = self.client.download(record, folder)
        return media_html(self.paths)

    def _show_media(self, markup: str) -> None:
        self.media.value = markup
        self._finish()

    def _media_failed(self, exc: BaseException) -> None:
        self.message.value = "<b>The result could not be shown</b><br>" + html.escape(f"{exc}")
        self._finish()

    def _finish(self) -> None:
        self._show_elapsed()
        self.stop_button.disabled = True
        self.download_button.disabled = self.record is None or not self.record.succeeded
        self._finished.set()

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        self._set_status("failed" if isinstance(exc, TaskFailedError) else "error")
        self.message.value = f"<div style='color:#b00020'>{error_html(exc)}</div>"
        self.stop_button.disabled = True
        if self.future is None:
            self._finished.set()

    # --- drawing ----------------------------------------------------------------------

    def _set_status(self, status: str) -> None:
        self.status = status
        seconds = time.monotonic() - self._started
        if status != "new" and (not self._steps or not self._steps[-1].startswith(status)):
            self._steps.append(f"{status} {seconds:.1f} s")
            self.steps.value = (
                "<span style='font-size:85%;color:#666'>"
                + html.escape(" → ".join(self._steps))
                + "</span>"
            )
        colour = _COLOURS.get(status, "#6c757d")
        self.badge.value = (
            f"<span style='background:{colour};color:white;border-radius:4px;"
            f"padding:1px 8px'>{html.escape(status)}</span>"
        )
        self.progress.value = _PROGRESS.get(status, 3)
        self.progress.bar_style = {"succeeded": "success", "failed": "danger",
                                   "error": "danger", "stopped": "warning"}.get(status, "info")

    def _show_elapsed(self) -> None:
        text = f"{time.monotonic() - self._started:.1f} s"
        if self.record is not None and self.record.seconds is not None:
            text += f" (service: {self.record.seconds:.1f} s)"
        self.elapsed.value = f"<span style='color:#666'>&nbsp;{text}</span>"

    # --- actions ----------------------------------------------------------------------

    def show_code(self) -> str:
        """Show (and return) the Python that sends this request again."""
        self.code.layout.display = None
        return str(self.code.value)

    def download(self, folder: str | Path | None = None) -> list[Path]:
        """Save the results and a JSON sidecar into ``folder``; returns the paths (blocking)."""
        if self.record is None or not self.record.succeeded:
            raise ValueError(f"the task is {self.status}; there is nothing to download yet")
        paths: list[Path] = self.client.download(self.record, folder or self.folder.value)
        self.message.value = "Saved:<br>" + "<br>".join(
            f"<code>{html.escape(str(p))}</code>" for p in paths
        )
        return paths

    def _download_in_background(self) -> None:
        def ready(_result: object = None) -> None:
            self.download_button.disabled = False

        def failed(exc: BaseException) -> None:
            self.message.value = "<b>Download failed</b><br>" + html.escape(str(exc))
            ready()

        self.download_button.disabled = True
        self.message.value = "Saving…"
        self._work.run(self.download, on_done=ready, on_error=failed)
