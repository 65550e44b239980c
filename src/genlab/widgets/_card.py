"""A task card: one submission's status, elapsed time, polling progress, result and errors.

The card starts the task with ``client.generate_future`` and returns at once. The client's
runner thread reports each new status (``on_update`` moves the badge) and ends the future;
saving the results and embedding them (:func:`genlab.report.media_html`: a compact preview
that enlarges, the original linked), the Download button and the elapsed-time display run on
the widgets' :class:`~genlab.widgets.Background`, so the runner stays free to poll. Widgets
are only ever updated by assigning traits, and every error ends up on the card, never raised.

"Stop waiting" stops polling (the task keeps running on the service) and turns into "Resume
waiting", which follows the same task again; a card whose task ended shows neither. The
header folds the card to one line (▾) and closes it (×).

Example:
    card = TaskCard(client, {"model": "image-b", "prompt": "a kite"}).start()
    card.future.result()      # the TaskRecord
    card.wait_done(60)        # True once the card shows its final state (media embedded)
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import pprint
import shutil
import tempfile
import threading
import time
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
from genlab.catalog import CATALOG, Preview, preview, result_of
from genlab.client import TaskRecord
from genlab.client.journal import safe_filename
from genlab.display import BORDER, ERROR, MUTED, escape, status_badge, styled, text
from genlab.media import MEDIA_ENV, media_join, media_location
from genlab.media.card import result_body_html
from genlab.report import as_result
from genlab.widgets._background import Background
from genlab.widgets._browser import copy_button
from genlab.widgets._protocols import StudioClient

_PROGRESS = {"submitting": 0, "queued": 1, "processing": 2}
_SMALL = widgets.Layout(width="2.4em", padding="0")


def media_dir_or_temp(media_dir: str | os.PathLike[str] | None) -> Path | str | None:
    """Where a card or the Studio saves results the client did not keep: ``media_dir``, else
    ``GENLAB_MEDIA`` (a folder or a storage URL), else None: :func:`scratch_folder`, made only
    when such a result comes (a client keeps results by default, beside its history)."""
    if media_dir or os.environ.get(MEDIA_ENV, "").strip():
        return media_location(media_dir or None)
    return None


_scratch: list[Path] = []
_scratch_lock = threading.Lock()


def scratch_folder() -> Path:
    """This process's temporary folder for results shown but not kept (``keep=False``), made on
    first use and removed when the process (the kernel) exits. The card keeps their preview
    embedded; Download, or a client that keeps results, keeps the originals."""
    with _scratch_lock:
        if not _scratch:
            _scratch.append(Path(tempfile.mkdtemp(prefix="genlab-studio-")))
            atexit.register(shutil.rmtree, _scratch[0], True)
        return _scratch[0]


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
    """One submission, from "submitting" to its media or its error.

    Args:
        client: runs the task (:class:`~genlab.widgets.StudioClient`).
        body: the request body.
        media_dir: where the results are saved for embedding: a folder or a storage URL
            (``s3://bucket/prefix/``) for results the client did not keep; default
            ``GENLAB_MEDIA``, else a temporary folder removed when the kernel exits.
        checked: the catalog's verdict on ``body``, if already known.
        on_close: called with the card when its × is pressed (the Studio drops it).
        reuse: ``Client.generate``'s; a reused result shows at zero credits with its note.

    Attributes:
        body: the request body sent.
        status: ``new``, ``submitting``, ``queued``, ``processing``, ``succeeded``,
            ``failed``, ``error`` (refused, uncertain, unreachable) or ``stopped``.
        future: the ``concurrent.futures.Future`` of the TaskRecord (after :meth:`start`;
            a new one after :meth:`resume`).
        record: the latest record seen; ``error``: the exception, if any.
        paths: where the results were saved (for embedding): paths, or URLs in a store.
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
    ) -> None:
        super().__init__(
            layout=widgets.Layout(border=f"1px solid {BORDER}", padding="6px",
                                  margin="0 0 6px 0", flex="0 0 auto")
        )
        self.add_class("genlab-card")
        self.client = client
        self.body = dict(body)
        self.checked = checked if checked is not None else preview(self.body)
        self.media_dir = media_dir_or_temp(media_dir)
        self.status = "new"
        self.reuse = reuse
        self.record: TaskRecord | None = None
        self.error: BaseException | None = None
        self.future: concurrent.futures.Future[TaskRecord] | None = None
        self.paths: list[Path | str] = []
        self._finished = threading.Event()
        self._started = time.monotonic()
        self._steps: list[str] = []
        self._work = Background.shared()
        self._on_close: list[Callable[[TaskCard], object]] = [on_close] if on_close else []
        self._on_finished: list[Callable[[], object]] = []

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
        self.body_box = widgets.VBox(
            [status_row, self.steps, self.media, self.message, buttons, self.code]
        )
        self.children = [top, self.body_box]
        self._set_status("new")

    def _header(self, credits: str | None = None) -> str:
        model = str(self.body.get("model", "?"))
        kind = CATALOG[model].KIND if model in CATALOG else ""
        mode = self.checked.mode.label if self.checked.mode is not None else ""
        prompt = str(self.body.get("prompt", ""))
        shown = prompt if len(prompt) <= 300 else prompt[:299] + "…"
        credits = self.checked.credits_text if credits is None else credits
        facts = " · ".join(x for x in (kind, mode, credits) if x)
        return (
            f"<b>{escape(model)}</b> {text(facts, MUTED)}"
            + text(shown, tag="div", cls="genlab-card-prompt",
                   css="white-space:pre-wrap;overflow-wrap:anywhere")
        )

    # --- running ----------------------------------------------------------------------

    def start(self) -> TaskCard:
        """Submit in the background and return at once (``self.future`` holds the record)."""
        self._started = time.monotonic()
        self._set_status("submitting")
        try:
            # Only a choice is passed on: a client without reuse still runs plain cards.
            choice = {} if self.reuse is None else {"reuse": self.reuse}
            # The request the form validated is handed over as it is: the client does not
            # validate it again.
            request = self.checked.request if self.checked.request is not None else self.body
            self.future = self.client.generate_future(
                request, on_update=self._on_update, **choice
            )
        except Exception as exc:  # e.g. a closed client: shown, not raised
            self._fail(exc)
            return self
        self._follow(self.future)
        return self

    def _follow(self, future: concurrent.futures.Future[TaskRecord]) -> None:
        self._finished.clear()
        self._work.tick(self._show_elapsed, until=self._finished)
        future.add_done_callback(self._done)

    @property
    def done(self) -> bool:
        """True once the card shows its final state (media embedded, the error, or stopped)."""
        return self._finished.is_set()

    def wait_done(self, timeout: float | None = None) -> bool:
        """Block until :attr:`done` (or ``timeout`` seconds); returns :attr:`done`."""
        return self._finished.wait(timeout)

    def on_closed(self, callback: Callable[[TaskCard], object]) -> None:
        """Call ``callback(card)`` when the card's × is pressed."""
        self._on_close.append(callback)

    def on_finished(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` each time the card reaches a final state (on a worker)."""
        self._on_finished.append(callback)

    def stop(self) -> None:
        """Stop waiting for the task; it keeps running on the service (see :meth:`resume`)."""
        if self.future is not None:
            self.future.cancel()

    def resume(self) -> None:
        """Follow a stopped task again, from its last known record.

        Raises:
            ValueError: the card was not stopped, or the service never named the task.
        """
        if self.status != "stopped" or self.record is None:
            raise ValueError(f"the task is {self.status}; only a stopped task can be resumed")
        self.message.value = ""
        self._set_status(self.record.status)
        self.future = self.client.wait_future(self.record, on_update=self._on_update)
        self._follow(self.future)

    def _stop_or_resume(self) -> None:
        try:
            self.resume() if self.status == "stopped" else self.stop()
        except Exception as exc:  # a widget callback: shown, never raised
            self.message.value = escape(f"{type(exc).__name__}: {exc}")

    def _on_update(self, record: TaskRecord) -> None:
        # On the runner thread, once per new status. Never raise: that would end the wait.
        try:
            self.record = record
            self._set_status(record.status)
            self.stop_button.disabled = False  # the task has an id now: it can be resumed
        except Exception as exc:
            self.message.value = escape(f"{type(exc).__name__}: {exc}")

    def _done(self, future: concurrent.futures.Future[TaskRecord]) -> None:
        # On the runner thread (or at once, if the future was already done).
        if future is not self.future:
            return  # an earlier wait, replaced by resume()
        try:
            if future.cancelled():
                self._set_status("stopped")
                self.message.value = escape(
                    "Stopped waiting; the task keeps running on the service. "
                    "Resume waiting follows it again."
                )
                self.stop_button.description, self.stop_button.icon = "Resume waiting", "play"
                self.stop_button.disabled = self.record is None
                self._mark_finished()
                return
            if future.exception() is not None:
                self._fail(future.exception())  # type: ignore[arg-type]
            else:
                self.record = future.result()
                self._set_status(self.record.status)
                note = getattr(self.record, "reused", None)  # a ReusedRecord: nothing paid
                if note is not None:
                    self.header.value = self._header(credits="0 credits (reused)")
                    self.message.value = text(f"♻ {note.message}", MUTED)
                if self.record.succeeded:
                    self._work.run(
                        self._save_and_embed,
                        self.record,
                        on_done=self._show_media,
                        on_error=self._media_failed,
                    )
                    return  # the card is finished once the media are shown
        except Exception as exc:
            self.message.value = escape(f"{type(exc).__name__}: {exc}")
        self._finish()

    def _save_and_embed(self, record: TaskRecord) -> str:
        # On a worker: the download blocks on the runner, the encoding on this thread. A
        # result the client kept is shown from its store (it outlives the kernel); anything
        # else is saved in the card's folder first.
        if record.kept:
            self.paths = [media_location(p) for p in record.kept]
            result = as_result(record)
        else:
            where = self.media_dir if self.media_dir is not None else scratch_folder()
            folder = media_join(where, safe_filename(record.task_id, "task"))
            self.paths = self.client.download(record, folder)
            result = result_of(as_result(record), kept=[str(p) for p in self.paths])
        # The one card's body (facts, what differs from the request, media and originals);
        # the task card draws its own header and prompt.
        return result_body_html(result, prompt=False)

    def _show_media(self, markup: str) -> None:
        self.media.value = markup
        self._finish()

    def _media_failed(self, exc: BaseException) -> None:
        self.message.value = "<b>The result could not be shown</b><br>" + escape(f"{exc}")
        self._finish()

    def _finish(self) -> None:
        self.stop_button.description, self.stop_button.icon = "Stop waiting", "stop"
        self.stop_button.disabled = True
        self.stop_button.layout.display = "none"  # nothing left to wait for
        self.download_button.disabled = self.record is None or not self.record.succeeded
        self._mark_finished()

    def _mark_finished(self) -> None:
        self._show_elapsed()
        self._finished.set()
        for callback in list(self._on_finished):
            try:
                callback()
            except Exception as exc:  # a listener must not hide the card's final state
                self.message.value = escape(f"{type(exc).__name__}: {exc}")

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        self._set_status("failed" if isinstance(exc, TaskFailedError) else "error")
        self.message.value = styled(failure_html(exc), ERROR, tag="div")
        self.stop_button.disabled = True
        if self.future is None:
            self.stop_button.layout.display = "none"
            self._mark_finished()

    # --- drawing ----------------------------------------------------------------------

    @property
    def folded(self) -> bool:
        """Whether only the header shows."""
        return bool(self.body_box.layout.display == "none")

    def fold(self, folded: bool = True) -> None:
        """Show only the header line (``folded``) or the whole card."""
        self.body_box.layout.display = "none" if folded else None
        self.fold_button.icon = "chevron-down" if folded else "chevron-up"
        self.fold_button.tooltip = "Unfold this card" if folded else "Fold this card"

    def close_card(self) -> None:
        """Remove the card from its Studio (waiting stops; the task keeps running)."""
        if not self.done:
            self.stop()
        for callback in list(self._on_close):
            callback(self)

    def _set_status(self, status: str) -> None:
        self.status = status
        seconds = time.monotonic() - self._started
        if status != "new" and (not self._steps or not self._steps[-1].startswith(status)):
            self._steps.append(f"{status} {seconds:.1f} s")
            self.steps.value = text(" → ".join(self._steps), MUTED, size="85%")
        self.badge.value = status_badge(status)
        self.progress.value = _PROGRESS.get(status, 3)
        self.progress.bar_style = {"succeeded": "success", "failed": "danger",
                                   "error": "danger", "stopped": "warning"}.get(status, "info")

    def _show_elapsed(self) -> None:
        shown = f"{time.monotonic() - self._started:.1f} s"
        if self.record is not None and self.record.seconds is not None:
            shown += f" (service: {self.record.seconds:.1f} s)"
        self.elapsed.value = styled(f"&nbsp;{escape(shown)}", MUTED)

    # --- actions ----------------------------------------------------------------------

    def show_code(self) -> str:
        """Show (and return) the Python that sends this request again."""
        self.code.layout.display = None
        return str(self.code.value)

    def download(self, folder: str | Path | None = None) -> list[Path | str]:
        """Save the results and a JSON sidecar into ``folder`` (or a storage URL); returns
        where they went (blocking)."""
        if self.record is None or not self.record.succeeded:
            raise ValueError(f"the task is {self.status}; there is nothing to download yet")
        paths = self.client.download(self.record, folder or self.folder.value)
        self.message.value = "Saved:<br>" + "<br>".join(
            f"<code>{escape(p)}</code>" for p in paths
        )
        return paths

    def _download_in_background(self) -> None:
        def ready(_result: object = None) -> None:
            self.download_button.disabled = False

        def failed(exc: BaseException) -> None:
            self.message.value = "<b>Download failed</b><br>" + escape(exc)
            ready()

        self.download_button.disabled = True
        self.message.value = "Saving…"
        self._work.run(self.download, on_done=ready, on_error=failed)
