"""A task card: one submission's status, elapsed time, steps, result and errors, drawn from
its :class:`~genlab.widgets._task.Submission`.

The card only draws: its :class:`~genlab.widgets._task.Submission` submits, waits, keeps and
downloads, and the card observes the task's traits (status, steps, record, media, note,
error, finished) and assigns its widgets' traits. The result is the one card in its Studio
frame (:func:`genlab.media.card.result_html` with ``frame="studio"``); what the card shows
around it (header, badge, steps, buttons) is drawn here. Every error ends up on the card,
never raised.

"Stop waiting" stops polling (the task keeps running on the service) and turns into "Resume
waiting", which follows the same task again; a card whose task ended shows neither. The
header folds the card to one line (▾) and closes it (×).

Example:
    card = TaskCard(client, {"model": "image-b", "prompt": "a kite"}).start()
    card.future.result()      # the TaskRecord
    card.wait_done(60)        # True once the card shows its final state (media embedded)
"""

from __future__ import annotations

import concurrent.futures
import os
import pprint
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from genlab._errors import (
    InvalidParameterError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskTimeoutError,
)
from genlab.catalog import CATALOG, Preview
from genlab.client import TaskRecord
from genlab.display import BORDER, ERROR, MUTED, escape, status_badge, styled, text
from genlab.widgets._background import Background
from genlab.widgets._browser import copy_button
from genlab.widgets._protocols import StudioClient
from genlab.widgets._task import Submission

_PROGRESS = {"submitting": 0, "queued": 1, "processing": 2}
_BAR_STYLE = {"succeeded": "success", "failed": "danger", "error": "danger",
              "stopped": "warning"}
_SMALL = widgets.Layout(width="2.4em", padding="0")


def request_code(body: dict[str, Any]) -> str:
    """The Python that sends the same request, e.g. ``record = client.generate(**{...})``."""
    return "record = client.generate(**" + pprint.pformat(body, sort_dicts=False, width=88) + ")"


def failure_html(exc: BaseException) -> str:
    """A card's account of why its task ended without a result: a title and the error's own
    words with its advice, escaped (a field's messages are ``error_lines_html``)."""
    if isinstance(exc, InvalidParameterError):
        items = "".join(f"<li>{escape(e.message)}</li>" for e in exc.errors)
        return f"<b>The request was refused</b><ul>{items}</ul>"
    if isinstance(exc, SubmissionUncertainError):
        title = "The submission may have reached the service"
    elif isinstance(exc, TaskFailedError):
        title = "The task failed"
    elif isinstance(exc, TaskTimeoutError):
        title = "Still running"
    else:
        title = type(exc).__name__
    return f"<b>{escape(title)}</b><br>{escape(exc)}"


class TaskCard(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """One submission, from "submitting" to its media or its error: the view of a
    :class:`~genlab.widgets._task.Submission` (``card.task``).

    Args:
        client: runs the task (:class:`~genlab.widgets.StudioClient`).
        body: the request body.
        media_dir: where the results are saved for embedding: a folder or a storage URL
            (``s3://bucket/prefix/``) for results the client did not keep; default
            ``GENLAB_MEDIA``, else a temporary folder removed when the kernel exits.
        checked: the catalog's verdict on ``body``, if already known.
        on_close: called with the card when its × is pressed (the Studio drops it).
        reuse: ``Client.generate``'s; a reused result shows at zero credits with its note.
        developer: show the developer's controls (the folder, Download, Copy as code);
            False for a page people use without code (``genlab app``).

    Attributes:
        task: the controller the card draws; ``body``, ``status``, ``future``, ``record``,
            ``error`` and ``paths`` are its own (see :class:`~genlab.widgets._task.Submission`).
        header, badge, elapsed, progress, steps, media, message, folder, download_button,
        code_button, code, stop_button, fold_button, close_button: the parts.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> with genlab.Client("http://localhost:1", "key", history=history) as client:
        ...     card = TaskCard(client, {"model": "image-b", "prompt": "a kite"},
        ...                     media_dir=tempfile.mkdtemp())   # nothing is sent yet
        ...     print(card.task.status, "image · text-to-image" in card.header.value)
        new True
        >>> history.close()
    """

    def __init__(
        self,
        client: StudioClient,
        body: dict[str, Any],
        *,
        media_dir: str | os.PathLike[str] | None = None,
        checked: Preview | None = None,
        on_close: Callable[[TaskCard], object] | None = None,
        reuse: bool | None = None,
        developer: bool = True,
    ) -> None:
        super().__init__(
            layout=widgets.Layout(border=f"1px solid {BORDER}", padding="6px",
                                  margin="0 0 6px 0", flex="0 0 auto")
        )
        self.add_class("genlab-card")
        self.task = Submission(client, body, media_dir=media_dir, checked=checked, reuse=reuse)
        self._work = Background.shared()
        self._on_close: list[Callable[[TaskCard], object]] = [on_close] if on_close else []

        self.header = widgets.HTML(self._header(), layout=widgets.Layout(flex="1 1 auto"))
        self.fold_button = widgets.Button(icon="chevron-up", tooltip="Fold this card",
                                          layout=_SMALL)
        self.fold_button.on_click(lambda _b: self.fold(not self.folded))
        self.close_button = widgets.Button(
            icon="times", tooltip="Close this card (the task and its history stay)",
            layout=_SMALL,
        )
        self.close_button.on_click(lambda _b: self.close_card())
        self.badge = widgets.HTML()
        self.elapsed = widgets.HTML()
        self.progress = widgets.IntProgress(
            min=0, max=3, value=0, layout=widgets.Layout(width="8em")
        )
        self.steps = widgets.HTML()
        self.media = widgets.HTML(layout=widgets.Layout(max_width="100%"))
        self.message = widgets.HTML()
        self.folder = widgets.Text(
            value="genlab-output", description="folder",
            style={"description_width": "initial"}, layout=widgets.Layout(width="14em"),
        )
        self.download_button = widgets.Button(
            description="Download", icon="download", disabled=True,
            tooltip="Save the results and a JSON sidecar into the folder",
            layout=widgets.Layout(width="auto"),
        )
        self.download_button.on_click(lambda _b: self._download_in_background())
        # A real clipboard write happens in the browser, on the click (see _browser).
        self.code_button = widgets.HTML(copy_button(request_code(self.body)))
        self.code = widgets.Textarea(
            value=request_code(self.body),
            rows=min(12, 2 + len(self.body)),
            layout=widgets.Layout(width="100%", display="none"),
        )
        self.stop_button = widgets.Button(
            description="Stop waiting", icon="stop", disabled=True,
            tooltip="Stop following the task; it keeps running and can be resumed",
            layout=widgets.Layout(width="auto"),
        )
        self.stop_button.on_click(lambda _b: self._stop_or_resume())
        top = widgets.HBox(
            [self.header, self.badge, self.fold_button, self.close_button],
            layout=widgets.Layout(align_items="flex-start", width="100%"),
        )
        status_row = widgets.HBox([self.progress, self.elapsed],
                                  layout=widgets.Layout(align_items="center"))
        buttons = widgets.HBox(
            [self.folder, self.download_button, self.code_button, self.stop_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        if not developer:  # a page without code: nothing that speaks of folders or code
            for part in (self.folder, self.download_button, self.code_button):
                part.layout.display = "none"
        self.body_box = widgets.VBox(
            [status_row, self.steps, self.media, self.message, buttons, self.code]
        )
        self.children = [top, self.body_box]
        self._draw_status()
        # The card follows its task: each trait it shows, drawn when it changes.
        self.task.observe(lambda _c: self._draw_status(), "status")
        self.task.observe(self._draw_steps, "steps")
        self.task.observe(self._draw_media, "media")
        self.task.observe(self._draw_note, "note")
        self.task.observe(self._draw_error, "error")
        self.task.observe(lambda _c: self._draw_header(), "credits")
        self.task.observe(lambda _c: self._draw_stop_button(), "record")
        self.task.observe(self._draw_finished, "finished")
        self.task.on_follow(self._following)

    # --- the task's state, as the card's own ----------------------------------------------

    @property
    def body(self) -> dict[str, Any]:
        """The request body sent."""
        return self.task.body

    @property
    def checked(self) -> Preview:
        """The catalog's verdict on :attr:`body`."""
        return self.task.checked

    @property
    def media_dir(self) -> Path | str | None:
        """Where results the client did not keep are saved (None: a temporary folder)."""
        return self.task.media_dir

    @property
    def reuse(self) -> bool | None:
        """``Client.generate``'s choice this card was sent with."""
        return self.task.reuse

    @property
    def status(self) -> str:
        """``new``, ``submitting``, ``queued``, ``processing``, ``succeeded``, ``failed``,
        ``error`` (refused, uncertain, unreachable) or ``stopped``."""
        return str(self.task.status)

    @property
    def future(self) -> concurrent.futures.Future[TaskRecord] | None:
        """The future of the TaskRecord (after :meth:`start`; a new one after :meth:`resume`)."""
        return self.task.future

    @property
    def record(self) -> TaskRecord | None:
        """The latest record seen."""
        record: TaskRecord | None = self.task.record
        return record

    @property
    def error(self) -> BaseException | None:
        """The exception, if any."""
        error: BaseException | None = self.task.error
        return error

    @property
    def paths(self) -> list[Path | str]:
        """Where the results were saved (for embedding): paths, or URLs in a store."""
        return self.task.paths

    @property
    def done(self) -> bool:
        """True once the card shows its final state (media embedded, the error, or stopped)."""
        return self.task.done

    def wait_done(self, timeout: float | None = None) -> bool:
        """Block until :attr:`done` (or ``timeout`` seconds); returns :attr:`done`."""
        return self.task.wait_done(timeout)

    def on_finished(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` each time the card reaches a final state (on a worker)."""
        self.task.on_finished(callback)

    def on_closed(self, callback: Callable[[TaskCard], object]) -> None:
        """Call ``callback(card)`` when the card's × is pressed."""
        self._on_close.append(callback)

    # --- actions: the task does them ------------------------------------------------------

    def start(self) -> TaskCard:
        """Submit in the background and return at once (``self.future`` holds the record)."""
        self.task.start()
        return self

    def stop(self) -> None:
        """Stop waiting for the task; it keeps running on the service (see :meth:`resume`)."""
        self.task.stop()

    def resume(self) -> None:
        """Follow a stopped task again, from its last known record.

        Raises:
            ValueError: the card was not stopped, or the service never named the task.
        """
        self.task.resume()

    def download(self, folder: str | Path | None = None) -> list[Path | str]:
        """Save the results and a JSON sidecar into ``folder`` (or a storage URL); returns
        where they went (blocking)."""
        return self.task.download(folder or self.folder.value)

    def show_code(self) -> str:
        """Show (and return) the Python that sends this request again."""
        self.code.layout.display = None
        return str(self.code.value)

    def close_card(self) -> None:
        """Remove the card from its Studio (waiting stops; the task keeps running)."""
        if not self.done:
            self.stop()
        for callback in list(self._on_close):
            callback(self)

    @property
    def folded(self) -> bool:
        """Whether only the header shows."""
        return bool(self.body_box.layout.display == "none")

    def fold(self, folded: bool = True) -> None:
        """Show only the header line (``folded``) or the whole card."""
        self.body_box.layout.display = "none" if folded else None
        self.fold_button.icon = "chevron-down" if folded else "chevron-up"
        self.fold_button.tooltip = "Unfold this card" if folded else "Fold this card"

    def _stop_or_resume(self) -> None:
        try:
            self.resume() if self.status == "stopped" else self.stop()
        except Exception as exc:  # a widget callback: shown, never raised
            self.task.note = escape(f"{type(exc).__name__}: {exc}")

    def _download_in_background(self) -> None:
        def ready(_result: object = None) -> None:
            self.download_button.disabled = False

        def failed(exc: BaseException) -> None:
            self.task.note = "<b>Download failed</b><br>" + escape(exc)
            ready()

        self.download_button.disabled = True
        self.task.note = "Saving…"
        self._work.run(self.download, on_done=ready, on_error=failed)

    # --- drawing ----------------------------------------------------------------------

    def _header(self) -> str:
        model = str(self.body.get("model", "?"))
        kind = CATALOG[model].KIND if model in CATALOG else ""
        mode = self.checked.mode.label if self.checked.mode is not None else ""
        prompt = str(self.body.get("prompt", ""))
        shown = prompt if len(prompt) <= 300 else prompt[:299] + "…"
        credits = self.task.credits if self.task.credits is not None else self.checked.credits_text
        facts = " · ".join(x for x in (kind, mode, credits) if x)
        return (
            f"<b>{escape(model)}</b> {text(facts, MUTED)}"
            + text(shown, tag="div", cls="genlab-card-prompt",
                   css="white-space:pre-wrap;overflow-wrap:anywhere")
        )

    def _draw_header(self) -> None:
        self.header.value = self._header()

    def _draw_status(self) -> None:
        status = self.status
        self.badge.value = status_badge(status)
        self.progress.value = _PROGRESS.get(status, 3)
        self.progress.bar_style = _BAR_STYLE.get(status, "info")

    def _draw_steps(self, change: dict[str, Any]) -> None:
        self.steps.value = text(" → ".join(change["new"]), MUTED, size="85%")

    def _draw_media(self, change: dict[str, Any]) -> None:
        self.media.value = change["new"]

    def _draw_note(self, change: dict[str, Any]) -> None:
        self.message.value = change["new"]

    def _draw_error(self, change: dict[str, Any]) -> None:
        if change["new"] is not None:
            self.message.value = styled(failure_html(change["new"]), ERROR, tag="div")

    def _draw_elapsed(self) -> None:
        self.elapsed.value = styled(f"&nbsp;{escape(self.task.elapsed())}", MUTED)

    def _draw_stop_button(self) -> None:
        """Stop while waiting (once the service named the task), Resume once stopped, and
        nothing left to wait for once the task ended."""
        task = self.task
        if task.finished and task.status != "stopped":
            description, icon, disabled, display = "Stop waiting", "stop", True, "none"
        elif task.status == "stopped":
            description, icon, disabled, display = "Resume waiting", "play", False, None
            disabled = task.record is None
        else:
            description, icon, disabled, display = "Stop waiting", "stop", task.record is None, None
        button = self.stop_button
        button.description, button.icon, button.disabled = description, icon, disabled
        if button.layout.display != display:
            button.layout.display = display

    def _following(self) -> None:
        self._draw_stop_button()
        self._work.tick(self._draw_elapsed, until=self.task.ended)

    def _draw_finished(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            return
        self._draw_stop_button()
        record = self.record
        self.download_button.disabled = record is None or not record.succeeded
        self._draw_elapsed()
