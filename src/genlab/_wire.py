"""The service's wire format, written once: what the four endpoints answer.

The client parses answers with these models, the emulator builds its answers and its OpenAPI
schema from them, and the history stores them. They are tolerant on the way in: extra fields
are kept (``extra="allow"``), ``status`` is a plain string so an unknown status is carried, not
refused, unreadable timestamps become ``None`` (with a log line), and a failed task's ``error``
may have any shape a service chooses.

This module imports pydantic, the standard library and :mod:`genlab.display` (a leaf: what
every ``_repr_html_`` is built of) only, so every layer may use it.

Example:
    >>> record = TaskRecord.model_validate(
    ...     {"task_id": "t1", "status": "succeeded", "model": "image-b",
    ...      "created_at": "2025-01-01T00:00:00Z", "completed_at": "2025-01-01T00:00:04Z",
    ...      "images": [{"url": "https://x/a.png", "width": 1024, "height": 1024}]}
    ... )
    >>> record.succeeded, record.seconds, record.results[0].width
    (True, 4.0, 1024)
"""

from __future__ import annotations

import json
import logging
import math
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from genlab.display import card

logger = logging.getLogger("genlab")

Kind = Literal["video", "image"]
"""Which endpoint family serves a task: ``/v1/videos/...`` or ``/v1/images/...``."""

KINDS: tuple[Kind, ...] = ("video", "image")


class TaskStatus(StrEnum):
    """The four statuses the interface names. Records may carry others; those are not final.

    Example:
        >>> TaskStatus.SUCCEEDED == "succeeded"
        True
    """

    QUEUED = "queued"
    PROCESSING = "processing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


TERMINAL_STATUSES = frozenset({TaskStatus.SUCCEEDED.value, TaskStatus.FAILED.value})

TIME_SCALE_HEADER = "Genlab-Time-Scale"
"""A header genlab's emulator adds to every answer: how fast it runs against the real service
(``0.1``: ten times faster). Not part of the service's interface: a client reads it when
present, to scale what it expects of task durations, and does without it otherwise."""


def _lenient_datetime(value: Any) -> Any:
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            logger.warning("genlab: ignoring an unreadable timestamp %r from the service", value)
            return None
        # The interface says UTC; a naive timestamp is read as UTC, not as local time.
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    logger.warning("genlab: ignoring a timestamp of type %s", type(value).__name__)
    return None


Timestamp = Annotated[datetime | None, BeforeValidator(_lenient_datetime)]


def _id_text(value: Any) -> Any:
    """A task id the service sent as a JSON number is read as its text (``7`` -> ``"7"``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else str(value)
    return value


TaskId = Annotated[str, BeforeValidator(_id_text)]
"""A task id: a string, also when the service sent it as a JSON number."""

KNOWN_STATUSES = frozenset(status.value for status in TaskStatus)


def iso(moment: datetime) -> str:
    """A timestamp as the interface writes it: ISO 8601 UTC with a ``Z``, to milliseconds.

    Example:
        >>> iso(datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC))
        '2025-01-01T12:00:00.000Z'
    """
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Wire(BaseModel):
    # Serialization schemas list every field as required: the emulator always writes them all.
    model_config = ConfigDict(
        extra="allow", populate_by_name=True, json_schema_serialization_defaults_required=True
    )


# Keys a service may use for the reason text of a failed task, in the order they are tried.
_REASON_KEYS = ("message", "detail", "reason", "description", "error_message", "msg", "title")
_CODE_KEYS = ("code", "type", "error_code", "name", "status")


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str | int | float):
        text = str(value).strip()
        return text or None
    if isinstance(value, dict):
        for key in _REASON_KEYS:
            found = _text(value.get(key))
            if found:
                return found
    return None


class TaskError(_Wire):
    """Why a task failed: ``code`` and ``message``; other fields the service adds are kept.

    Any shape a service sends is read: other keys (``type``, ``detail``, ``reason`` ...), a
    numeric code, a null message, a nested object or a plain string. ``raw`` keeps what was
    sent, as JSON text.

    Example:
        >>> TaskError.model_validate("out of memory").message
        'out of memory'
        >>> str(TaskError.model_validate({"type": "timeout", "detail": "took too long"}))
        'timeout: took too long'
        >>> TaskError.model_validate({"code": 500, "message": None}).code
        '500'
    """

    code: str = "UNKNOWN"
    message: str = ""

    @model_validator(mode="before")
    @classmethod
    def _any_shape(cls, value: Any) -> Any:
        if isinstance(value, TaskError):
            return value
        if not isinstance(value, dict):
            text = _text(value)
            return {"message": text or "", "raw": _dump(value)}
        out = dict(value)
        out.setdefault("raw", _dump(value))
        code = next((_text(value.get(k)) for k in _CODE_KEYS if _text(value.get(k))), None)
        out["code"] = code or "UNKNOWN"
        message = _text(value)
        if message is None:
            nested = value.get("error")
            message = _text(nested) if nested is not None else None
        out["message"] = message or ""
        return out

    @property
    def reason(self) -> str:
        """The reason for people: the message, or the code when there is no message."""
        return self.message or self.code

    @property
    def raw_json(self) -> str | None:
        """The error exactly as the service sent it, as JSON text (at most 2000 characters).

        Example:
            >>> TaskError.model_validate({"type": "oom", "detail": None}).raw_json
            '{"type": "oom", "detail": null}'
        """
        raw = (self.model_extra or {}).get("raw")
        return raw if isinstance(raw, str) else None

    def __str__(self) -> str:
        if not self.message:
            return self.code
        return self.message if self.code == "UNKNOWN" else f"{self.code}: {self.message}"


def _dump(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text[:2000]


def link_expiry(url: str) -> datetime | None:
    """When a signed media URL stops working, as its query says; None when it does not say.

    The interface names no expiry ("retention period: not shown"); signed links carry theirs:
    an epoch time (``Expires=``, ``expires=``: S3's v2 signatures, CloudFront, OSS) or a
    lifetime from the signing time (``X-Amz-Date`` + ``X-Amz-Expires``, and the same pair
    under another prefix: ``X-Goog-``, ``x-oss-``, ``X-Tos-``).

    Example:
        >>> link_expiry("https://cdn.example/a.png?Expires=1767225600&Signature=x")
        datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)
        >>> link_expiry("https://b.s3.amazonaws.com/a.mp4?X-Amz-Date=20260101T000000Z"
        ...             "&X-Amz-Expires=3600&X-Amz-Signature=x").isoformat()
        '2026-01-01T01:00:00+00:00'
        >>> link_expiry("http://127.0.0.1:8000/media/t1.png") is None
        True
    """
    try:
        params = {key.lower(): value for key, value in parse_qsl(urlsplit(url).query)}
    except ValueError:
        return None
    found: list[datetime] = []
    for key, value in params.items():
        if not key.endswith("expires"):
            continue
        try:
            number = float(value)
            if not math.isfinite(number) or number < 0:
                continue
            if number >= 1e9:  # an epoch time (a lifetime is never 30 years)
                found.append(datetime.fromtimestamp(number, UTC))
                continue
            signed = _signing_time(params.get(key.removesuffix("expires") + "date"))
            if signed is not None:
                found.append(signed + timedelta(seconds=number))
        except (ValueError, OverflowError, OSError):  # not a time any clock can show
            continue
    return min(found) if found else None


def _signing_time(value: str | None) -> datetime | None:
    """A signed URL's signing time: ``20260101T000000Z`` (SigV4's form) or ISO 8601."""
    if not value:
        return None
    for form in ("%Y%m%dT%H%M%SZ", None):
        try:
            moment = (datetime.strptime(value, form) if form is not None
                      else datetime.fromisoformat(value))
        except ValueError:
            continue
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


class VideoResult(_Wire):
    """One generated video: its URL, size, length, cover and (video-b) last frame.

    Example:
        >>> video = VideoResult(url="https://cdn.example/v.mp4", width=1280, height=720, duration=5)
        >>> video.width, video.duration
        (1280, 5.0)
    """

    url: str
    width: int | None = None
    height: int | None = None
    duration: float | None = None
    cover_url: str | None = None
    last_frame_url: str | None = None


class ImageResult(_Wire):
    """One generated image: its URL and size.

    Example:
        >>> ImageResult(url="https://cdn.example/i.png", width=1024, height=1024).url
        'https://cdn.example/i.png'
    """

    url: str
    width: int | None = None
    height: int | None = None


class Task(_Wire):
    """A submitted task, as the service acknowledged it.

    Pass it to ``client.wait(task)`` or ``client.get(task)``; ``kind`` (not sent by the service,
    set by the client) remembers which endpoint serves it.

    Example:
        >>> task = Task(task_id="t1", model="video-a", kind="video")
        >>> task.task_id, task.kind
        ('t1', 'video')
    """

    task_id: TaskId
    model: str = ""
    created_at: Timestamp = None
    request_id: str | None = None
    kind: Kind | None = None

    def __repr__(self) -> str:
        return f"Task(task_id={self.task_id!r}, model={self.model!r})"

    def _repr_html_(self) -> str:
        when = [f"created {self.created_at:%Y-%m-%d %H:%M:%S} UTC"] if self.created_at else []
        return card(self.model, "submitted", [f"task {self.task_id}", *when],
                    "waiting is client.wait(task); the record shows the result")


class TaskRecord(_Wire):
    """A task's state from the task query endpoint.

    ``status`` is a plain string; compare it with :class:`TaskStatus` members. Helpers:
    ``done``, ``succeeded``, ``failed``, ``results`` and ``seconds``.

    Example:
        >>> TaskRecord(task_id="t1", status="processing").done
        False
    """

    task_id: TaskId
    status: str
    model: str = ""
    created_at: Timestamp = None
    completed_at: Timestamp = None
    videos: list[VideoResult] | None = None
    images: list[ImageResult] | None = None
    error: TaskError | None = None
    request_id: str | None = None
    kind: Kind | None = None
    kept: tuple[str, ...] = Field(default=(), exclude=True, repr=False)
    """Where the client kept this result's files (local paths or storage URLs: media first,
    the JSON sidecar last); empty when it was not kept. Not part of the wire format."""

    @field_validator("status", mode="before")
    @classmethod
    def _status_text(cls, value: Any) -> Any:
        # Known statuses are read whatever their case ("SUCCEEDED", "Processing"); an unknown
        # one is carried as it came, and is not final.
        if isinstance(value, StrEnum):
            return value.value
        if isinstance(value, str) and value.strip().lower() in KNOWN_STATUSES:
            return value.strip().lower()
        return value

    @property
    def done(self) -> bool:
        """True once the task succeeded or failed. Unknown statuses are not final."""
        return self.status in TERMINAL_STATUSES

    @property
    def succeeded(self) -> bool:
        return self.status == TaskStatus.SUCCEEDED

    @property
    def failed(self) -> bool:
        return self.status == TaskStatus.FAILED

    @property
    def results(self) -> list[VideoResult | ImageResult]:
        """The videos or images (empty until the task succeeded)."""
        return [*(self.videos or []), *(self.images or [])]

    @property
    def links_expire(self) -> datetime | None:
        """When the first of the results' links (media, covers, last frames) stops working,
        as the signed URLs say (:func:`link_expiry`); None when they do not say.

        Example:
            >>> TaskRecord(task_id="t", status="succeeded", images=[
            ...     {"url": "https://cdn.example/a.png?Expires=1767225600"}]).links_expire.year
            2026
        """
        urls = [url for item in self.results
                for url in (item.url, getattr(item, "cover_url", None),
                            getattr(item, "last_frame_url", None)) if url]
        times = [when for when in map(link_expiry, urls) if when is not None]
        return min(times) if times else None

    @property
    def seconds(self) -> float | None:
        """Seconds from creation to completion, by the service's clock (None while running)."""
        if self.created_at is None or self.completed_at is None:
            return None
        return (self.completed_at - self.created_at).total_seconds()

    def __repr__(self) -> str:
        parts = [f"task_id={self.task_id!r}", f"status={self.status!r}", f"model={self.model!r}"]
        for name, items in (("videos", self.videos), ("images", self.images)):
            if items:
                parts.append(f"{name}={len(items)}")
        if self.seconds is not None:
            parts.append(f"seconds={self.seconds:.1f}")
        if self.error is not None:
            text = f"{self.error.code}: {self.error.message}"
            parts.append(f"error={text if len(text) <= 60 else text[:59] + '…'!r}")
        return f"TaskRecord({', '.join(parts)})"


    @classmethod
    def read(cls, data: Any, kind: Kind | None = None) -> TaskRecord:
        """A record from the service's JSON, ``kind`` set. A failed task is read even when
        other fields are not, so it ends with its error instead of being polled forever.

        Raises:
            pydantic.ValidationError: (a ValueError) the record cannot be read.

        Example:
            >>> TaskRecord.read({"task_id": "t", "status": "failed", "videos": 7,
            ...                  "error": {"detail": "GPU lost"}}, "video").error.message
            'GPU lost'
        """
        try:
            return cls.model_validate({**data, "kind": kind})
        except ValueError:
            status = data.get("status")
            failed = isinstance(status, str) and status.strip().lower() == "failed"
            if not failed or not isinstance(_id_text(data.get("task_id")), str):
                raise
        model = data.get("model")
        return cls(
            task_id=_id_text(data["task_id"]),
            status="failed",
            model=model if isinstance(model, str) else "",
            error=TaskError.model_validate(data.get("error")),
            kind=kind,
        )

    def summary(self) -> str:
        """One line for people, e.g. ``t1 video-a succeeded in 41.2 s``."""
        text = f"{self.task_id} {self.model} {self.status}".replace("  ", " ")
        if self.seconds is not None:
            text += f" in {self.seconds:.1f} s"
        if self.error is not None:
            text += f" ({self.error})"
        return text

    def to_wire(self) -> dict[str, Any]:
        """The record as the service writes it: one media list, the other and ``kind`` left out.

        Example:
            >>> sorted(TaskRecord(task_id="t", status="queued", kind="image").to_wire())
            ['completed_at', 'created_at', 'error', 'images', 'model', 'request_id', 'status', 'task_id']
        """  # noqa: E501
        other = "images" if self.kind == "video" else "videos"
        data = self.model_dump(mode="json", exclude={other, "kind"})
        for item in data.get("videos") or ():
            if item.get("last_frame_url") is None:  # only present when it was asked for
                item.pop("last_frame_url", None)
        if data.get("error") is not None:
            data["error"] = {k: v for k, v in data["error"].items() if k != "raw"}
        for key in ("created_at", "completed_at"):
            moment = getattr(self, key)
            if moment is not None:
                data[key] = iso(moment)
        return data


class ErrorBody(_Wire):
    """The inside of an error envelope: ``code``, ``message``, ``status`` and ``request_id``."""

    code: str
    message: str
    status: int
    request_id: str


class ErrorEnvelope(_Wire):
    """The interface's error answer: ``{"error": {code, message, status, request_id}}``.

    Example:
        >>> ErrorEnvelope.build("NOT_FOUND", "no such task", 404, "r1").model_dump()["error"]
        {'code': 'NOT_FOUND', 'message': 'no such task', 'status': 404, 'request_id': 'r1'}
        >>> ErrorEnvelope.read("<html>502 Bad Gateway</html>") is None
        True
    """

    error: ErrorBody

    @classmethod
    def build(cls, code: str, message: str, status: int, request_id: str) -> ErrorEnvelope:
        inner = ErrorBody(code=code, message=message, status=status, request_id=request_id)
        return cls(error=inner)

    @staticmethod
    def read(body: Any) -> dict[str, Any] | None:
        """The envelope's inner object when ``body`` is one (tolerantly), else None.

        Only ``error`` being an object with a string ``code`` counts: that is what tells a
        service's own answer from a proxy's page or an empty body.
        """
        inner = body.get("error") if isinstance(body, dict) else None
        if not isinstance(inner, dict) or not isinstance(inner.get("code"), str):
            return None
        return inner


def record_schema(kind: Kind) -> dict[str, Any]:
    """The JSON schema of a video or image task record as the service writes it."""
    schema = TaskRecord.model_json_schema(mode="serialization", ref_template=_REF)
    other = "images" if kind == "video" else "videos"
    for drop in (other, "kind"):
        schema["properties"].pop(drop, None)
        if drop in schema.get("required", []):
            schema["required"].remove(drop)
    schema["properties"]["status"] = {
        "type": "string",
        "enum": [s.value for s in TaskStatus],
    }
    video = schema.get("$defs", {}).get("VideoResult")
    if video is not None:  # to_wire() leaves it out unless the last frame was asked for
        video["required"] = [r for r in video.get("required", []) if r != "last_frame_url"]
        video["properties"]["last_frame_url"] = {"type": "string"}
    schema["title"] = f"{kind.capitalize()}TaskRecord"
    return schema


def wire_schemas() -> dict[str, Any]:
    """Every wire schema, named for an OpenAPI document's ``components/schemas``."""
    out: dict[str, Any] = {}
    for name, schema in (
        ("Task", _task_schema()),
        ("VideoTaskRecord", record_schema("video")),
        ("ImageTaskRecord", record_schema("image")),
        ("ErrorEnvelope", ErrorEnvelope.model_json_schema(mode="serialization", ref_template=_REF)),
    ):
        out |= schema.pop("$defs", {})
        out[name] = schema
    return out


_REF = "#/components/schemas/{model}"


def _task_schema() -> dict[str, Any]:
    schema = Task.model_json_schema(mode="serialization", ref_template=_REF)
    schema["properties"].pop("kind", None)
    schema["required"] = [r for r in schema.get("required", []) if r != "kind"]
    return schema


__all__ = [
    "KINDS",
    "ErrorBody",
    "ErrorEnvelope",
    "ImageResult",
    "Kind",
    "TERMINAL_STATUSES",
    "TIME_SCALE_HEADER",
    "Task",
    "TaskError",
    "TaskRecord",
    "TaskStatus",
    "Timestamp",
    "VideoResult",
    "iso",
    "link_expiry",
    "record_schema",
    "wire_schemas",
]
