"""One submission's controller: it submits, waits, keeps and downloads, and holds what a card
shows as traits. It talks to the client; :class:`~genlab.widgets.TaskCard` only draws it.

``start`` hands the request to ``client.generate_future`` and returns at once. The client's
runner thread reports each new status (``on_update``) and ends the future; the result is then
kept or saved and drawn as the one card in its Studio frame
(:func:`genlab.media.card.result_html`, ``frame="studio"``) on the widgets'
:class:`~genlab.widgets.Background`, so the runner stays free to poll. Every
error ends up in the traits (``error``, ``note``), never raised from a callback.

Example:
    task = Submission(client, {"model": "image-b", "prompt": "a kite"}).start()
    task.future.result()      # the TaskRecord
    task.wait_done(60)        # True once the final state is set (media drawn)
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import traitlets

from genlab._errors import TaskFailedError
from genlab.catalog import Preview, preview, result_of
from genlab.client import TaskRecord
from genlab.client.journal import safe_filename
from genlab.display import MUTED, escape, text
from genlab.media import MEDIA_ENV, media_join, media_location
from genlab.media.card import result_html
from genlab.report import as_result
from genlab.widgets._background import Background
from genlab.widgets._protocols import StudioClient


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


class Submission(traitlets.HasTraits):
    """One submission, from "submitting" to its media or its error.

    Args:
        client: runs the task (:class:`~genlab.widgets.StudioClient`).
        body: the request body.
        media_dir: where results the client did not keep are saved for embedding: a folder
            or a storage URL; default ``GENLAB_MEDIA``, else a temporary folder removed when
            the kernel exits.
        checked: the catalog's verdict on ``body``, if already known.
        reuse: ``Client.generate``'s; a reused result shows at zero credits with its note.

    Traits (observe them to draw the task):
        status: ``new``, ``submitting``, ``queued``, ``processing``, ``succeeded``,
            ``failed``, ``error`` (refused, uncertain, unreachable) or ``stopped``.
        steps: each status reached, with the seconds since the start ("queued 0.4 s").
        record: the latest record seen; ``error``: the exception, if any.
        media: the result's body as HTML, once drawn.
        note: a line about the task (escaped HTML): stopped, reused, saved, a failure.
        credits: what the header says it cost, when that differs from the estimate.
        finished: the final state is set (media drawn, the error, or stopped).

    Attributes:
        future: the ``concurrent.futures.Future`` of the TaskRecord (after :meth:`start`;
            a new one after :meth:`resume`).
        paths: where the results were saved (for embedding): paths, or URLs in a store.
        started: ``time.monotonic()`` at the start (or the last :meth:`start`).
        ended: a ``threading.Event`` set with ``finished``.
    """

    status = traitlets.Unicode("new")
    steps = traitlets.List(traitlets.Unicode())
    record = traitlets.Any(None)
    error = traitlets.Any(None)
    media = traitlets.Unicode("")
    note = traitlets.Unicode("")
    credits = traitlets.Unicode(None, allow_none=True)
    finished = traitlets.Bool(False)

    def __init__(
        self,
        client: StudioClient,
        body: dict[str, Any],
        *,
        media_dir: str | os.PathLike[str] | None = None,
        checked: Preview | None = None,
        reuse: bool | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.body = dict(body)
        self.checked = checked if checked is not None else preview(self.body)
        self.media_dir = media_dir_or_temp(media_dir)
        self.reuse = reuse
        self.future: concurrent.futures.Future[TaskRecord] | None = None
        self.paths: list[Path | str] = []
        self.started = time.monotonic()
        self.ended = threading.Event()
        self._work = Background.shared()
        self._on_finished: list[Callable[[], object]] = []
        self._on_follow: list[Callable[[], object]] = []

    # --- what the task is doing ---------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the final state is set (media drawn, the error, or stopped)."""
        return self.ended.is_set()

    def wait_done(self, timeout: float | None = None) -> bool:
        """Block until :attr:`done` (or ``timeout`` seconds); returns :attr:`done`."""
        return self.ended.wait(timeout)

    def on_finished(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` each time the task reaches a final state (on a worker)."""
        self._on_finished.append(callback)

    def on_follow(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` each time a wait begins (a start, a resume)."""
        self._on_follow.append(callback)

    def elapsed(self) -> str:
        """The seconds since the start, and the service's own count once it gave one."""
        shown = f"{time.monotonic() - self.started:.1f} s"
        if self.record is not None and self.record.seconds is not None:
            shown += f" (service: {self.record.seconds:.1f} s)"
        return shown

    # --- submitting, waiting ------------------------------------------------------------

    def start(self) -> Submission:
        """Submit in the background and return at once (``self.future`` holds the record)."""
        self.started = time.monotonic()
        self._set_status("submitting")
        try:
            # Only a choice is passed on: a client without reuse still runs plain tasks.
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

    def stop(self) -> None:
        """Stop waiting for the task; it keeps running on the service (see :meth:`resume`)."""
        if self.future is not None:
            self.future.cancel()

    def resume(self) -> None:
        """Follow a stopped task again, from its last known record.

        Raises:
            ValueError: the task was not stopped, or the service never named it.
        """
        if self.status != "stopped" or self.record is None:
            raise ValueError(f"the task is {self.status}; only a stopped task can be resumed")
        self.note = ""
        self._set_status(self.record.status)
        self.future = self.client.wait_future(self.record, on_update=self._on_update)
        self._follow(self.future)

    def _follow(self, future: concurrent.futures.Future[TaskRecord]) -> None:
        self.ended.clear()
        self.finished = False
        for callback in list(self._on_follow):
            callback()
        future.add_done_callback(self._done)

    def _on_update(self, record: TaskRecord) -> None:
        # On the runner thread, once per new status. Never raise: that would end the wait.
        try:
            self.record = record
            self._set_status(record.status)
        except Exception as exc:
            self.note = escape(f"{type(exc).__name__}: {exc}")

    def _done(self, future: concurrent.futures.Future[TaskRecord]) -> None:
        # On the runner thread (or at once, if the future was already done).
        if future is not self.future:
            return  # an earlier wait, replaced by resume()
        try:
            if future.cancelled():
                self._set_status("stopped")
                self.note = escape(
                    "Stopped waiting; the task keeps running on the service. "
                    "Resume waiting follows it again."
                )
                self._mark_finished()
                return
            if future.exception() is not None:
                self._fail(future.exception())  # type: ignore[arg-type]
            else:
                record = future.result()
                self.record = record
                self._set_status(record.status)
                reused = getattr(record, "reused", None)  # a ReusedRecord: nothing paid
                if reused is not None:
                    self.credits = "0 credits (reused)"
                    self.note = text(f"♻ {reused.message}", MUTED)
                if record.succeeded:
                    self._work.run(self._keep_and_draw, record, on_done=self._drawn,
                                   on_error=self._not_drawn)
                    return  # the task is finished once the media are drawn
        except Exception as exc:
            self.note = escape(f"{type(exc).__name__}: {exc}")
        self._mark_finished()

    # --- keeping, drawing, downloading --------------------------------------------------

    def _keep_and_draw(self, record: TaskRecord) -> str:
        # On a worker: the download blocks on the runner, the encoding on this thread. A
        # result the client kept is shown from its store (it outlives the kernel); anything
        # else is saved in the task's folder first.
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
        return result_html(result, frame="studio")  # inside the Studio's own header

    def _drawn(self, markup: str) -> None:
        self.media = markup
        self._mark_finished()

    def _not_drawn(self, exc: BaseException) -> None:
        self.note = "<b>The result could not be shown</b><br>" + escape(f"{exc}")
        self._mark_finished()

    def download(self, folder: str | os.PathLike[str]) -> list[Path | str]:
        """Save the results and a JSON sidecar into ``folder`` (or a storage URL); returns
        where they went (blocking).

        Raises:
            ValueError: the task has not succeeded.
        """
        if self.record is None or not self.record.succeeded:
            raise ValueError(f"the task is {self.status}; there is nothing to download yet")
        paths = self.client.download(self.record, folder)
        self.note = "Saved:<br>" + "<br>".join(f"<code>{escape(p)}</code>" for p in paths)
        return paths

    # --- state ----------------------------------------------------------------------------

    def _set_status(self, status: str) -> None:
        seconds = time.monotonic() - self.started
        if status != "new" and (not self.steps or not self.steps[-1].startswith(status)):
            self.steps = [*self.steps, f"{status} {seconds:.1f} s"]
        self.status = status

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        self._set_status("failed" if isinstance(exc, TaskFailedError) else "error")
        if self.future is None:
            self._mark_finished()

    def _mark_finished(self) -> None:
        self.finished = True  # observers draw the final state before anyone is told
        self.ended.set()
        for callback in list(self._on_finished):
            try:
                callback()
            except Exception as exc:  # a listener must not hide the final state
                self.note = escape(f"{type(exc).__name__}: {exc}")
