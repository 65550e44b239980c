"""The emulator's state and behaviour, apart from HTTP: accepting submissions, the ledger,
task records and lazily rendered media."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from genlab._errors import InvalidParameterError, InvalidPromptError, NotFoundError
from genlab._wire import (
    TERMINAL_STATUSES,
    ImageResult,
    Kind,
    Task,
    TaskError,
    TaskRecord,
    TaskStatus,
    VideoResult,
    iso,
)
from genlab.catalog import OutputPlan, RequestBase, VideoRequest, plan_output, validate
from genlab.emulator._digest import body_digest
from genlab.emulator._faults import FaultConfig
from genlab.emulator._jsonparse import JsonParser
from genlab.emulator._kept import KeptAudio
from genlab.emulator._picture import MAX_CHARS as _SHOWN
from genlab.emulator._references import FetchLimits, fetched_references
from genlab.emulator._render import render_frame_png, render_image, render_video
from genlab.emulator._sound import input_audio_track
from genlab.emulator._store import MediaStore, Stored, upload_name
from genlab.emulator._tasks import Clock, EmulatedTask, TaskBook, moment, new_id

DEFAULT_API_KEY = "emulator"
MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_BLOCKED_WORDS = ("nsfw",)
_MEDIA_NAME = re.compile(r"^(video|cover|last-frame|image)-(\d+)\.(mp4|png)$")
# The fields of the submission answer: the wire's Task, without the client-side ``kind``.
_TASK_FIELDS = tuple(name for name in Task.model_fields if name != "kind")
_FAILURE = TaskError(
    code="GENERATION_FAILED",
    message="the model could not generate this request; try again or change the prompt",
)


@dataclass
class EmulatorConfig:
    """Settings of one emulator instance (see :func:`genlab.emulator.create_app`)."""

    api_key: str = DEFAULT_API_KEY
    time_scale: float = 1.0
    max_processing: int = 8
    max_body_bytes: int = MAX_BODY_BYTES
    blocked_words: tuple[str, ...] = DEFAULT_BLOCKED_WORDS
    media_dir: Path | None = None
    media_max_bytes: int = 1 << 30
    fetch: FetchLimits = field(default_factory=FetchLimits)
    public_url: str | None = None


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One accepted (and billed) submission."""

    task_id: str
    model: str
    request_id: str
    created_at: str
    credits: int | None
    billed_seconds: float | None
    body_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "model": self.model,
            "request_id": self.request_id,
            "created_at": self.created_at,
            "credits": self.credits,
            "billed_seconds": self.billed_seconds,
            "body_sha256": self.body_sha256,
        }


class EmulatorState:
    """Everything one emulator instance knows; the HTTP layer is a thin shell around it.

    Example:
        >>> from genlab.emulator import create_app
        >>> state = create_app(api_key="k", time_scale=0.02).emulator
        >>> type(state).__name__, state.ledger()
        ('EmulatorState', [])
        >>> state.close()
    """

    def __init__(
        self,
        config: EmulatorConfig,
        *,
        clock: Clock | None = None,
        faults: FaultConfig | None = None,
    ) -> None:
        self.config = config
        self.faults = faults or FaultConfig()
        self.book = TaskBook(
            clock=clock or time.time,
            time_scale=config.time_scale,
            max_processing=config.max_processing,
            on_forget=self._forgotten,
        )
        self.store = MediaStore(config.media_dir, config.media_max_bytes)
        # Input audio that tasks' videos carry, until they are rendered (never evicted).
        self.kept_audio = KeptAudio(self.store.root / ".inputs")
        self.json = JsonParser()  # request bodies; large ones in a worker process
        self._ledger: list[LedgerEntry] = []
        self._ledger_lock = threading.Lock()
        self._render_locks: dict[str, asyncio.Lock] = {}
        self._http: httpx.AsyncClient | None = None
        words = "|".join(re.escape(w) for w in config.blocked_words if w)
        self._blocked = re.compile(rf"\b({words})\b", re.IGNORECASE) if words else None

    @property
    def http(self) -> httpx.AsyncClient:
        # Created lazily: it must belong to the event loop that serves requests.
        if self._http is None:
            timeout = httpx.Timeout(self.config.fetch.timeout)
            self._http = httpx.AsyncClient(timeout=timeout, follow_redirects=True)
        return self._http

    async def aclose(self) -> None:
        self.json.close()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def close(self) -> None:
        """Remove the media this instance kept (its temporary folder, when it made one) and
        stop its JSON worker process."""
        self.json.close()
        self.kept_audio.close()
        self.store.close()

    # --- submissions -------------------------------------------------------------------

    async def accept(
        self, body: Any, kind: Kind, request_id: str, own_origins: Collection[str] = ()
    ) -> EmulatedTask:
        """Validate, probe references, bill and book a task. Raises APIError subclasses.

        ``own_origins`` are the ``scheme://host:port`` the emulator is reached at: media URLs
        there are read from its store (results rendered on demand), any other URL is fetched.
        """
        request = validate(body, warn=False)  # the service changes values silently
        if request.kind != kind:
            right = f"POST /v1/{request.kind}s/generate"
            raise InvalidParameterError(
                f"{request.model_name} is {'an' if request.kind == 'image' else 'a'} "
                f"{request.kind} model; send it to {right}",
                request_id=request_id,
            )
        if kind == "image" and self._blocked is not None:
            hit = self._blocked.search(request.prompt_text)
            if hit:
                raise InvalidPromptError(
                    f"{request.model_name}: the prompt contains disallowed content "
                    f"({hit.group(0)!r}); rephrase it",
                    status=400,
                    code="INVALID_PROMPT",
                    request_id=request_id,
                )
        async with fetched_references(
            request,
            store=self.store,
            http=self.http,
            limits=self.config.fetch,
            own_origins=own_origins,
            own_media=self._own_media,
        ) as fetched:
            if fetched.problems:
                error = InvalidParameterError.from_details(fetched.problems)
                error.request_id = request_id
                raise error
            plan = plan_output(request, inputs=fetched.infos)
            audio_source = await self._keep_input_audio(request, plan, fetched.files)
        task = self.book.add(
            request=request,
            request_id=request_id,
            plan=plan,
            fails=self.faults.roll(self.faults.fail_rate),
            lines=_lines(request, plan),
            audio_source=audio_source,
        )
        digest = await asyncio.to_thread(body_digest, body)
        entry = LedgerEntry(
            task_id=task.task_id,
            model=task.model,
            request_id=request_id,
            created_at=iso(moment(task.created)),
            credits=plan.credits,
            billed_seconds=plan.billed_seconds,
            body_sha256=digest,
        )
        with self._ledger_lock:
            self._ledger.append(entry)
        return task

    async def _keep_input_audio(
        self, request: RequestBase, plan: OutputPlan, files: dict[tuple[str, int], Path]
    ) -> Path | None:
        """Keep the audio an output takes from its input video (re-encoded, output-long)."""
        index = request.source_audio_video if isinstance(request, VideoRequest) else None
        if not plan.audio_from_input or index is None or plan.duration is None:
            return None
        source = files.get(("reference_videos", index))
        if source is None:
            return None
        track = await asyncio.to_thread(input_audio_track, source, plan.duration)
        if track is None:
            return None
        return self.kept_audio.keep(track, videos=plan.count)

    def _forgotten(self, task: EmulatedTask) -> None:
        if task.audio_source is not None:
            self.kept_audio.forget(task.audio_source)

    async def _own_media(self, key: str) -> Path | None:
        try:
            stored = await self.media(key)
        except NotFoundError:  # expired: the reference is refused like any missing one
            return None
        return stored.path if stored is not None else None

    def ledger(self) -> list[dict[str, Any]]:
        """Every accepted submission, oldest first."""
        with self._ledger_lock:
            return [e.as_dict() for e in self._ledger]

    # --- records -----------------------------------------------------------------------

    def record(self, task: EmulatedTask, base_url: str, request_id: str) -> dict[str, Any]:
        """The task record as the interface describes it, at the clock's current time."""
        status = task.status(self.book.clock())
        done = status in TERMINAL_STATUSES
        succeeded = status == TaskStatus.SUCCEEDED
        prefix = f"{base_url.rstrip('/')}/media/{task.task_id}"
        return TaskRecord(
            task_id=task.task_id,
            status=status,
            model=task.model,
            kind=task.kind,
            created_at=moment(task.created),
            completed_at=moment(task.end) if done else None,
            videos=_videos(task.plan, prefix) if succeeded and task.kind == "video" else None,
            images=_images(task.plan, prefix) if succeeded and task.kind == "image" else None,
            error=_FAILURE if status == TaskStatus.FAILED else None,
            request_id=request_id,
        ).to_wire()

    def acknowledgement(self, task: EmulatedTask, request_id: str) -> dict[str, Any]:
        """The answer to a submission: the wire's task object, the record's first fields."""
        record = self.record(task, "", request_id)  # no media URL is part of it
        return {name: record[name] for name in _TASK_FIELDS}

    # --- media -------------------------------------------------------------------------

    async def media(self, key: str) -> Stored | None:
        """A stored file, rendering a finished task's result on first request."""
        stored = self.store.get(key)
        if stored is not None and stored.path.exists():
            return stored
        task_id, _, name = key.partition("/")
        match = _MEDIA_NAME.match(name)
        task = self.book.get(task_id)
        if match is None or task is None or task.status(self.book.clock()) != "succeeded":
            return None
        what, index = match.group(1), int(match.group(2))
        if index >= task.plan.count:
            return None
        if what == "last-frame" and not task.plan.last_frame:
            return None
        if (what == "image") != (task.kind == "image"):
            return None
        lock = self._render_locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                stored = self.store.get(key)
                if stored is None or not stored.path.exists():
                    track = self._track(task, key) if what == "video" else None
                    data = await asyncio.to_thread(_render, what, index, task, track)
                    stored = self.store.put(key, data)
                    if what == "video" and task.audio_source is not None:
                        self.kept_audio.rendered(task.audio_source, index)
        finally:
            self._render_locks.pop(key, None)
        return stored

    def _track(self, task: EmulatedTask, key: str) -> bytes | None:
        """The kept source audio a video of ``task`` carries; 410 once it is gone."""
        if task.audio_source is None:
            return None
        track = self.kept_audio.read(task.audio_source)
        if track is None:
            raise NotFoundError(
                f"{key} has expired: the source audio it carries is no longer kept; "
                "submit the task again",
                status=410,
                code="MEDIA_EXPIRED",
            )
        return track

    def upload(self, filename: str, received: Path) -> tuple[str, Stored]:
        """Keep an uploaded file (a scratch file, moved); its key and what was stored.

        The key is ``uploads/<id>/<safe name>``: the name never normalises away, so the URL
        made from it always reaches the file.
        """
        key = f"uploads/{new_id('up')}/{upload_name(filename)}"
        return key, self.store.adopt(key, received)


def _videos(plan: OutputPlan, prefix: str) -> list[VideoResult]:
    return [
        VideoResult(
            url=f"{prefix}/video-{i}.mp4",
            width=plan.width,
            height=plan.height,
            duration=plan.duration,
            cover_url=f"{prefix}/cover-{i}.png",
            last_frame_url=f"{prefix}/last-frame-{i}.png" if plan.last_frame else None,
        )
        for i in range(plan.count)
    ]


def _images(plan: OutputPlan, prefix: str) -> list[ImageResult]:
    return [
        ImageResult(url=f"{prefix}/image-{i}.png", width=plan.width, height=plan.height)
        for i in range(plan.count)
    ]


def _render(what: str, index: int, task: EmulatedTask, track: bytes | None) -> bytes:
    plan, lines = task.plan, task.lines
    if what == "image":
        return render_image(plan.width, plan.height, lines=lines, seed=task.seed + index)
    if what == "video":
        if plan.duration is None or plan.fps is None:
            raise ValueError(f"task {task.task_id} planned no video")
        return render_video(
            plan.width,
            plan.height,
            plan.duration,
            lines=lines,
            audio=plan.audio,
            fps=plan.fps,
            seed=task.seed,
            watermark=task.watermark,
            audio_track=track,
        )
    # The cover shows the video's first frame, watermark included; the last frame is
    # returned without one, as the interface says.
    cover = what == "cover"
    return render_frame_png(
        plan.width,
        plan.height,
        lines=lines,
        progress=0.0 if cover else 1.0,
        seed=task.seed,
        watermark=task.watermark and cover,
    )


def _lines(request: RequestBase, plan: OutputPlan) -> list[str]:
    settings = [request.resolution_label or "", f"{plan.width}x{plan.height}"]
    if plan.duration is not None:
        settings.append(f"{plan.duration:g} s")
    if plan.audio:
        settings.append("audio")
    if isinstance(request, VideoRequest) and request.seed is not None:
        settings.append(f"seed {request.seed}")  # other seeds show other text, too
    # A picture shows at most _SHOWN characters of a prompt; keeping no more bounds a task.
    return [
        f"{request.model_name} · {request.mode.label}",
        " · ".join(s for s in settings if s),
        (request.prompt_text or "(no prompt)")[:_SHOWN],
    ]
