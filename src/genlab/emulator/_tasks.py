"""Tasks whose status is derived from their timestamps and a clock — no background sleepers.

At submission the scheduler books the task into one of ``max_processing`` slots (first come,
first served), which fixes when it starts and when it ends. Its status at any moment follows:
``queued`` before the start, ``processing`` until the end, then ``succeeded`` or ``failed``.
Changing the clock (tests inject one) moves every task consistently.
"""

from __future__ import annotations

import hashlib
import heapq
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from genlab._wire import Kind
from genlab.catalog import OutputPlan, RequestBase, VideoRequest

Clock = Callable[[], float]


def moment(ts: float) -> datetime:
    """Epoch seconds (the clock's unit) -> an aware UTC datetime, for the wire format.

    Example:
        >>> moment(0.5).isoformat()
        '1970-01-01T00:00:00.500000+00:00'
    """
    return datetime.fromtimestamp(ts, UTC)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclass(slots=True)
class EmulatedTask:
    """One accepted task and everything needed to answer queries about it and render it.

    The request itself is not kept: a task holds its plan, the few lines of text its media
    show (the prompt cut to what a picture can show), the look's seed and watermark, and the
    input audio it keeps, so thousands of tasks with long prompts stay small.
    """

    task_id: str
    kind: Kind
    model: str
    request_id: str
    created: float
    start: float
    end: float
    fails: bool
    plan: OutputPlan
    lines: list[str] = field(default_factory=list)
    seed: int = 0
    watermark: bool = False
    audio_source: Path | None = None

    def status(self, now: float) -> str:
        if now < self.start:
            return "queued"
        if now < self.end:
            return "processing"
        return "failed" if self.fails else "succeeded"


def generation_seconds(request: RequestBase, plan: OutputPlan, task_id: str) -> float:
    """A plausible generation time at time scale 1, spread by a stable per-task jitter.

    Videos: 10 s plus 4 s per output second at 720P (x0.6 at 480P, x1.5 at 1080P).
    Images: 3 s plus a tier cost (512: 1 s, 1K: 4 s, 2K: 8 s, 4K: 14 s), x quality, +20% per
    extra image. Jitter: +-25%, derived from the task id so it is repeatable.
    """
    resolution = request.resolution_label or ""
    if plan.duration is not None:  # a video
        factor = {"480P": 0.6, "720P": 1.0, "1080P": 1.5}.get(resolution, 1.0)
        base = (10.0 + 4.0 * plan.duration) * factor
    else:
        tier = {"512": 1.0, "1K": 4.0, "2K": 8.0, "4K": 14.0}.get(resolution, 4.0)
        quality = {"low": 0.6, "medium": 1.0, "high": 1.6}.get(request.quality_label or "", 1.0)
        base = (3.0 + tier * quality) * (1 + 0.2 * (plan.count - 1))
    digest = hashlib.blake2b(task_id.encode(), digest_size=2).digest()
    jitter = 0.75 + 0.5 * int.from_bytes(digest, "big") / 0xFFFF
    return base * jitter


class TaskBook:
    """Accepted tasks, the processing slots, and the clock. Thread-safe.

    Args:
        clock: returns epoch seconds; inject one to move time in tests.
        time_scale: multiplies every generation and queue time (0.02 = 50x faster).
        max_processing: how many tasks are processed at once; the rest wait ``queued``.
        max_tasks: finished tasks beyond this many are forgotten, oldest first.
        on_forget: called with each task as it is forgotten (to remove what it kept).
    """

    QUEUE_SECONDS = 1.0  # the least time a task spends queued, at time scale 1

    def __init__(
        self,
        *,
        clock: Clock,
        time_scale: float = 1.0,
        max_processing: int = 8,
        max_tasks: int = 100_000,
        on_forget: Callable[[EmulatedTask], None] | None = None,
    ) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be positive, e.g. 0.02 for 50x faster tasks")
        if max_processing < 1:
            raise ValueError("max_processing must be at least 1")
        self.clock = clock
        self.time_scale = time_scale
        self.max_processing = max_processing
        self.max_tasks = max_tasks
        self._on_forget = on_forget
        self._slots: list[float] = [0.0] * max_processing
        self._tasks: OrderedDict[str, EmulatedTask] = OrderedDict()
        self._lock = threading.Lock()

    def add(
        self,
        *,
        request: RequestBase,
        request_id: str,
        plan: OutputPlan,
        fails: bool,
        lines: list[str],
        audio_source: Path | None = None,
    ) -> EmulatedTask:
        """Book a task for ``request`` (read here, not kept) and return it."""
        task_id = new_id("task")
        # The request's seed, else one drawn for this task (the interface: "random").
        video = request if isinstance(request, VideoRequest) else None
        fixed = video.seed if video is not None else None
        seed = fixed if fixed is not None else int(task_id[-8:], 16)
        work = generation_seconds(request, plan, task_id) * self.time_scale
        with self._lock:
            now = self.clock()
            free = heapq.heappop(self._slots)
            start = max(now + self.QUEUE_SECONDS * self.time_scale, free)
            end = start + work
            heapq.heappush(self._slots, end)
            task = EmulatedTask(
                task_id=task_id,
                kind=request.kind,
                model=request.model_name,
                request_id=request_id,
                created=now,
                start=start,
                end=end,
                fails=fails,
                plan=plan,
                lines=lines,
                seed=seed,
                watermark=video is not None and video.watermarked,
                audio_source=audio_source,
            )
            self._tasks[task_id] = task
            self._forget_old(now)
        return task

    def get(self, task_id: str) -> EmulatedTask | None:
        with self._lock:
            return self._tasks.get(task_id)

    def __len__(self) -> int:
        return len(self._tasks)

    def counts(self) -> dict[str, int]:
        """How many tasks are in each status now."""
        now = self.clock()
        out: dict[str, int] = {}
        with self._lock:
            tasks = list(self._tasks.values())
        for task in tasks:
            status = task.status(now)
            out[status] = out.get(status, 0) + 1
        return out

    def _forget_old(self, now: float) -> None:
        while len(self._tasks) > self.max_tasks:
            oldest_id, oldest = next(iter(self._tasks.items()))
            if oldest.end > now:
                break  # never forget a task that is still running
            del self._tasks[oldest_id]
            if self._on_forget is not None:
                self._on_forget(oldest)
