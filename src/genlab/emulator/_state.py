"""The emulator's state and behaviour, apart from HTTP: accepting submissions, the ledger,
task records and lazily rendered media."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from genlab._errors import APIError, InvalidParameterError, InvalidPromptError
from genlab.catalog import ImageRequest, RequestBase, VideoRequest, output_size, validate
from genlab.catalog._dimensions import billed_seconds, credits_for
from genlab.emulator._faults import FaultConfig
from genlab.emulator._references import FetchLimits, Probed, probe_references
from genlab.emulator._render import render_frame_png, render_image, render_video
from genlab.emulator._store import MediaStore, Stored
from genlab.emulator._tasks import Clock, EmulatedTask, Output, TaskBook, iso, new_id

DEFAULT_API_KEY = "emulator"
MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_BLOCKED_WORDS = ("nsfw",)
_MEDIA_NAME = re.compile(r"^(video|cover|last-frame|image)-(\d+)\.(mp4|png)$")


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


def body_digest(body: Any) -> str:
    """A stable digest of a request body, to spot the same submission sent twice."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class EmulatorState:
    """Everything one emulator instance knows; the HTTP layer is a thin shell around it."""

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
        )
        self.store = MediaStore(config.media_dir, config.media_max_bytes)
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
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def close(self) -> None:
        self.store.close()

    # --- submissions -------------------------------------------------------------------

    async def accept(self, body: Any, kind: str, request_id: str) -> EmulatedTask:
        """Validate, probe references, bill and book a task. Raises APIError subclasses."""
        request = validate(body)
        if request.kind != kind:
            right = f"POST /v1/{request.kind}s/generate"
            raise InvalidParameterError(
                f"{request.model_name} is {'an' if request.kind == 'image' else 'a'} "
                f"{request.kind} model; send it to {right}",
                request_id=request_id,
            )
        prompt = str(getattr(request, "prompt", "") or "")
        if kind == "image" and self._blocked is not None:
            hit = self._blocked.search(prompt)
            if hit:
                raise InvalidPromptError(
                    f"{request.model_name}: the prompt contains disallowed content "
                    f"({hit.group(0)!r}); rephrase it",
                    status=400,
                    code="INVALID_PROMPT",
                    request_id=request_id,
                )
        probed, problems = await probe_references(
            request, store=self.store, http=self.http, limits=self.config.fetch
        )
        if problems:
            error = InvalidParameterError.from_details(problems)
            error.request_id = request_id
            raise error
        input_seconds = _input_video_seconds(request, probed)
        outputs = _outputs(request, probed, input_seconds)
        task = self.book.add(
            request=request,
            body=request.to_body(),
            request_id=request_id,
            outputs=outputs,
            fails=self.faults.roll(self.faults.fail_rate),
            lines=_lines(request, outputs),
        )
        entry = LedgerEntry(
            task_id=task.task_id,
            model=task.model,
            request_id=request_id,
            created_at=iso(task.created),
            credits=credits_for(request, input_seconds),
            billed_seconds=billed_seconds(request, input_seconds),
            body_sha256=body_digest(body),
        )
        with self._ledger_lock:
            self._ledger.append(entry)
        return task

    def ledger(self) -> list[dict[str, Any]]:
        """Every accepted submission, oldest first."""
        with self._ledger_lock:
            return [e.as_dict() for e in self._ledger]

    # --- records -----------------------------------------------------------------------

    def record(self, task: EmulatedTask, base_url: str, request_id: str) -> dict[str, Any]:
        """The task record as the interface describes it, at the clock's current time."""
        status = task.status(self.book.clock())
        done = status in ("succeeded", "failed")
        results: list[dict[str, Any]] | None = None
        if status == "succeeded":
            results = list(self._results(task, base_url.rstrip("/")))
        error = None
        if status == "failed":
            error = {
                "code": "GENERATION_FAILED",
                "message": "the model could not generate this request; try again or change "
                "the prompt",
            }
        return {
            "task_id": task.task_id,
            "status": status,
            "model": task.model,
            "created_at": iso(task.created),
            "completed_at": iso(task.end) if done else None,
            f"{task.kind}s": results,
            "error": error,
            "request_id": request_id,
        }

    def _results(self, task: EmulatedTask, base: str) -> Iterable[dict[str, Any]]:
        prefix = f"{base}/media/{task.task_id}"
        for i, out in enumerate(task.outputs):
            if task.kind == "image":
                yield {"url": f"{prefix}/image-{i}.png", "width": out.width, "height": out.height}
                continue
            item: dict[str, Any] = {
                "url": f"{prefix}/video-{i}.mp4",
                "width": out.width,
                "height": out.height,
                "duration": out.duration,
                "cover_url": f"{prefix}/cover-{i}.png",
            }
            if out.last_frame:
                item["last_frame_url"] = f"{prefix}/last-frame-{i}.png"
            yield item

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
        if index >= len(task.outputs):
            return None
        out = task.outputs[index]
        if what == "last-frame" and not out.last_frame:
            return None
        if (what == "image") != (task.kind == "image"):
            return None
        lock = self._render_locks.setdefault(key, asyncio.Lock())
        async with lock:
            stored = self.store.get(key)
            if stored is None or not stored.path.exists():
                data = await asyncio.to_thread(_render, what, index, task, out)
                stored = self.store.put(key, data)
        self._render_locks.pop(key, None)
        return stored

    def upload(self, filename: str, data: bytes) -> tuple[str, Stored]:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(filename or "upload").name)[:80] or "upload"
        key = f"uploads/{new_id('up')}/{safe}"
        return key, self.store.put(key, data)


def _render(what: str, index: int, task: EmulatedTask, out: Output) -> bytes:
    lines = task.lines
    if what == "image":
        seed = index + int(task.task_id[-6:], 16)  # stable across processes, unlike hash()
        return render_image(out.width, out.height, lines=lines, seed=seed)
    if what == "video":
        return render_video(
            out.width, out.height, out.duration or 5.0, lines=lines, audio=out.has_audio
        )
    progress = 0.0 if what == "cover" else 1.0
    return render_frame_png(out.width, out.height, lines=lines, progress=progress)


def _input_video_seconds(request: RequestBase, probed: Probed) -> float | None:
    videos = probed.infos.get("reference_videos", [])
    if not videos:
        return None
    refs = request.references("reference_videos")
    for item, info in zip(refs, videos, strict=False):
        if getattr(item, "reference_type", None) == "edit_source":
            return info.duration
    return videos[0].duration


def _outputs(request: RequestBase, probed: Probed, input_seconds: float | None) -> list[Output]:
    reference = probed.first_size("reference_images") or probed.first_size("reference_videos")
    width, height = output_size(request, reference)
    if isinstance(request, ImageRequest):
        return [Output(width, height) for _ in range(request.image_count)]
    assert isinstance(request, VideoRequest)
    seconds = request.output_duration(input_seconds)
    return [
        Output(
            width,
            height,
            duration=round(seconds * 24) / 24,
            has_audio=request.generates_audio,
            last_frame=request.wants_last_frame,
        )
    ]


def _lines(request: RequestBase, outputs: list[Output]) -> list[str]:
    first = outputs[0]
    settings = [str(getattr(request, "resolution", "")), f"{first.width}x{first.height}"]
    if first.duration is not None:
        settings.append(f"{first.duration:g} s")
    if first.has_audio:
        settings.append("audio")
    prompt = str(getattr(request, "prompt", "") or "")
    return [
        f"{request.model_name} · {request.mode.label}",
        " · ".join(s for s in settings if s),
        prompt or "(no prompt)",
    ]


def error_for(exc: APIError, request_id: str) -> tuple[int, dict[str, Any]]:
    """The status and envelope for an API error."""
    return exc.status, envelope(exc.code, exc.message, exc.status, exc.request_id or request_id)


def envelope(code: str, message: str, status: int, request_id: str) -> dict[str, Any]:
    """The interface's error envelope."""
    return {"error": {"code": code, "message": message, "status": status, "request_id": request_id}}
