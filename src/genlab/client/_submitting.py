"""Submitting one request exactly once, with the journal told every step.

The journal hears ``submit_started`` before anything is sent (if it cannot record, nothing is
sent), then exactly one of ``submit_accepted``, ``submit_uncertain`` or ``submit_failed``;
failures of those three are logged and ignored, since the service may already have the task.
Journal calls run on the client's journal thread (see :class:`JournalWriter`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, cast

from genlab._errors import (
    ErrorDetail,
    GenlabError,
    InvalidParameterError,
    SubmissionUncertainError,
)
from genlab._wire import KINDS
from genlab.catalog import RequestBase, declared_fields, estimate_credits, validate
from genlab.client._transport import Http
from genlab.client._types import Kind, RequestLike, Task
from genlab.client.journal import DurationKey, JournalWriter, SubmitEntry, TaskJournal

logger = logging.getLogger("genlab")


@dataclass(frozen=True, slots=True)
class Submitted:
    """What a client remembers of a task it submitted: the body, when, and the journal entry."""

    body: dict[str, Any]
    kind: Kind
    started: float  # time.monotonic() when the request left
    entry_id: str
    duration_key: DurationKey


def build_request(request_or_body: RequestLike | None, fields: Mapping[str, Any]) -> RequestBase:
    """Merge a body (or request) with keyword fields and validate the result with the catalog.

    Fields override and extend the body. Raises ``InvalidParameterError`` for anything invalid.

    Example:
        >>> build_request({"model": "image-b", "prompt": "a"}, {"prompt": "b"}).prompt_text
        'b'
    """
    if request_or_body is None:
        return validate(dict(fields))
    if isinstance(request_or_body, RequestBase):
        if not fields:
            return request_or_body
        return validate({**request_or_body.to_body(), **fields})
    if isinstance(request_or_body, Mapping):
        return validate({**request_or_body, **fields})
    return validate(request_or_body)  # refuses it with a clear InvalidParameterError


def submit_entry(request: RequestBase) -> SubmitEntry:
    """What the journal records of a request before it is sent."""
    return SubmitEntry(
        body=request.to_body(),
        model=request.model_name,
        kind=request.kind,
        mode=request.mode.value,
        credits=estimate_credits(request),
        submitted_at=datetime.now(UTC),
        resolution=request.resolution_label,
        duration=request.requested_duration,
    )


def prepare(
    request_or_body: RequestLike | None,
    fields: Mapping[str, Any],
    *,
    extra_body: Mapping[str, Any] | None = None,
    kind: Kind | None = None,
) -> SubmitEntry:
    """The entry to submit; see :func:`prepare_request`.

    Example:
        >>> prepare({"model": "image-b", "prompt": "a"}, {}).model
        'image-b'
    """
    return prepare_request(request_or_body, fields, extra_body=extra_body, kind=kind)[0]


def prepare_request(
    request_or_body: RequestLike | None,
    fields: Mapping[str, Any],
    *,
    extra_body: Mapping[str, Any] | None = None,
    kind: Kind | None = None,
) -> tuple[SubmitEntry, RequestBase | None]:
    """The entry to submit (the request checked by the catalog, plus what it does not know),
    and the request the catalog checked (None when sent unchecked).

    ``extra_body`` is the escape hatch for what the catalog does not know yet: its fields that
    the model declares are checked like any other; the rest are sent as given, with a notice.
    A model the catalog does not know is sent unchecked when ``kind`` says which endpoint
    serves it; its credits are unknown (None).

    Raises:
        InvalidParameterError: a checked field breaks a rule, an unknown model has no
            ``kind``, or the body cannot be sent as JSON.

    Example:
        >>> entry, _ = prepare_request({"model": "image-b", "prompt": "a"}, {},
        ...                            extra_body={"style": "ink"})
        >>> entry.body
        {'model': 'image-b', 'prompt': 'a', 'style': 'ink'}
        >>> entry, request = prepare_request({"model": "video-z", "prompt": "a"}, {}, kind="video")
        >>> request is None, entry.kind, entry.credits, entry.mode
        (True, 'video', None, 'unchecked')
    """
    if extra_body is None and kind is None:
        try:
            request = build_request(request_or_body, fields)
            return submit_entry(request), request
        except InvalidParameterError as exc:
            given = request_or_body if isinstance(request_or_body, Mapping) else {}
            model = {**given, **fields}.get("model")
            if isinstance(model, str) and model and declared_fields(model) is None:
                raise _invalid(
                    f"{exc.message}. To submit to a model the catalog does not know yet, "
                    "pass kind='video' or kind='image' (its request is then sent unchecked)"
                ) from None
            raise
    if kind is not None and kind not in KINDS:
        raise _invalid(f"kind must be 'video' or 'image', got {kind!r}")
    if extra_body is not None and not isinstance(extra_body, Mapping):
        raise _invalid(f"extra_body must be a dict of fields, got {type(extra_body).__name__}")
    if isinstance(request_or_body, RequestBase):
        base = {**request_or_body.to_body(), **fields}
    elif request_or_body is None or isinstance(request_or_body, Mapping):
        base = {**(request_or_body or {}), **fields}
    else:
        build_request(request_or_body, fields)  # refuses it, clearly
        raise AssertionError("unreachable")  # pragma: no cover
    extra = dict(extra_body or {})
    model = extra.pop("model", base.get("model"))
    base["model"] = model
    declared = declared_fields(model) if isinstance(model, str) else None
    if declared is not None:
        base |= {k: extra.pop(k) for k in list(extra) if k in declared}
        request = build_request(base, {})
        if kind is not None and kind != request.kind:
            raise _invalid(f"{model} is a {request.kind} model, but kind={kind!r} was given")
        entry = submit_entry(request)
        if not extra:
            return entry, request
        _json_or_refuse(extra)
        logger.warning(
            "genlab: %s not declared for %s in genlab's catalog; sent unchecked (extra_body)",
            ", ".join(sorted(extra)), model,
        )
        return replace(entry, body={**entry.body, **extra}), request
    if not isinstance(model, str) or not model.strip():
        raise _invalid("the request has no model; pass model='...'")
    if kind is None:
        raise _invalid(
            f"model {model!r} is not in genlab's catalog; to submit to a model the catalog "
            "does not know yet, pass kind='video' or kind='image'"
        )
    body = _json_or_refuse({**base, **extra})
    logger.warning(
        "genlab: model %r is not in genlab's catalog; the request is sent unchecked and its "
        "credits are unknown", model,
    )
    resolution, duration = body.get("resolution"), body.get("duration")
    return SubmitEntry(
        body=body,
        model=model,
        kind=kind,
        mode="unchecked",
        credits=None,
        submitted_at=datetime.now(UTC),
        resolution=resolution if isinstance(resolution, str) else None,
        duration=float(duration) if isinstance(duration, int | float) else None,
    ), None


def _accepted(history: TaskJournal) -> Callable[[str, Task], None]:
    def record(entry_id: str, task: Task) -> None:
        try:
            history.submit_accepted(entry_id, task)
        except Exception:
            logger.error(
                "genlab: task %r was accepted (and may be billed) but the history could not "
                "record its id; keep this id", task.task_id,
            )
            raise

    return record


def _never_sent(history: TaskJournal) -> Callable[[str], None]:
    def mark(entry_id: str) -> None:
        history.submit_failed(entry_id, "cancelled before it was sent; nothing was billed")

    return mark


def _invalid(message: str) -> InvalidParameterError:
    return InvalidParameterError.from_details([ErrorDetail((), message)])


def _json_or_refuse(body: dict[str, Any]) -> dict[str, Any]:
    try:
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _invalid(f"the request cannot be sent as JSON: {exc}") from None
    return body


async def submit_once(
    http: Http, history: TaskJournal, writer: JournalWriter, entry: SubmitEntry
) -> tuple[Task, Submitted]:
    """Send a checked entry once; return the accepted task and what to remember of it.

    Journal calls run on ``writer``'s thread, so a locked history never blocks the event loop.

    Raises:
        SubmissionUncertainError: it may have reached the service; it was not resent.
        APIError / APIConnectionError: refused, or the service could not be reached.
        Exception: whatever ``history.submit_started`` raised (then nothing was sent).
    """
    kind = cast(Kind, entry.kind)
    # Recorded before anything is sent: if this raises, nothing was sent either.
    entry_id = await writer.call(history.submit_started, entry, on_cancel=_never_sent(history))
    started = time.monotonic()

    def read_task(data: Mapping[str, Any]) -> Task:
        return Task.model_validate({**data, "kind": kind})

    try:
        task = await http.submit(f"/v1/{kind}s/generate", entry.body, read_task, model=entry.model)
    except SubmissionUncertainError as exc:
        writer.record("submit_uncertain", history.submit_uncertain, entry_id, str(exc))
        await writer.settle(ACCEPT_SETTLE)
        raise
    except asyncio.CancelledError:
        reason = "cancelled while the request was in flight"
        writer.record("submit_uncertain", history.submit_uncertain, entry_id, reason)
        await writer.settle(ACCEPT_SETTLE)  # the caller waits for this note (see Runner.run)
        raise
    except GenlabError as exc:
        writer.record("submit_failed", history.submit_failed, entry_id, str(exc))
        await writer.settle(ACCEPT_SETTLE)
        raise
    writer.record("submit_accepted", _accepted(history), entry_id, task)
    await writer.settle(ACCEPT_SETTLE)
    known = Submitted(
        body=entry.body,
        kind=kind,
        started=started,
        entry_id=entry_id,
        duration_key=entry.duration_key,
    )
    return task, known


ACCEPT_SETTLE = 5.0
"""Seconds a submit waits for the journal to record its task id before returning anyway (the
write goes on in the background; a durable history keeps the id elsewhere if it fails)."""
