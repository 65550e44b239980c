"""One result as a person sees it in a cell: its media, the prompt, model, settings, time
and credits in one static card (it survives a reload and an export); a failed task shows the
service's reason. Media come from the files the client kept (``record.kept``), embedded as
display-size previews with the original linked (:func:`genlab.report.media_html`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from genlab._wire import TaskRecord
from genlab.catalog import estimate_credits, validate
from genlab.display import ERROR, MUTED, card, text
from genlab.media import media_name, read_media
from genlab.report._tiles import media_html

SHOWN_FIELDS = 6
"""Settings shown beside the prompt; the full request is in the JSON sidecar."""


def record_html(record: TaskRecord) -> str:
    """The card of one task record: media when kept, else what the record says.

    Example:
        >>> from genlab._wire import TaskRecord
        >>> page = record_html(TaskRecord(task_id="t1", status="failed", model="video-a",
        ...                               error={"code": "OOM", "message": "<b>out</b>"}))
        >>> "OOM: &lt;b&gt;out&lt;/b&gt;" in page
        True
    """
    reused = getattr(record, "reused", None)
    kept = list(record.kept) or [str(p) for p in getattr(reused, "paths", ())]
    request = _request(kept)
    facts = [f"task {record.task_id}"]
    if record.seconds is not None:
        facts.append(f"{record.seconds:.1f} s")
    if record.completed_at is not None:
        facts.append(f"{record.completed_at:%Y-%m-%d %H:%M} UTC")
    credits = _credits(request)
    if credits is not None:
        facts.append(f"{credits:,} credits")
    if record.error is not None:
        return card(record.model, record.status, facts, f"{record.error.code}: "
                    f"{record.error.message}", note_colour=ERROR)
    prompt = request.get("prompt") if request else None
    settings = [f"{k} {v}" for k, v in (request or {}).items()
                if k not in ("model", "prompt") and isinstance(v, str | int | float | bool)]
    note = ""
    if settings:
        note = " · ".join(settings[:SHOWN_FIELDS]) + (" …" if len(settings) > SHOWN_FIELDS else "")
    said = text(prompt, tag="div", css="white-space:pre-wrap;overflow-wrap:anywhere;"
                "max-width:60em;margin-top:4px") if isinstance(prompt, str) and prompt else ""
    media = media_html(kept) if kept else ""
    if not media and record.succeeded:
        media = text("not kept here: client.download(record) saves its media (links expire)",
                     MUTED, tag="div", size="85%")
    told = text(f"♻ {reused.message}", MUTED, tag="div") if reused is not None else ""
    # One border around all of it, as the Studio's task card: header, prompt and media.
    whole = card(record.model, record.status, facts, note, body=said + media)
    return f"<div class='genlab-record'>{told}{whole}</div>"


def records_html(records: Iterable[TaskRecord]) -> str:
    """Several records as a grid of cards."""
    return _grid(record_html(r) for r in records)


def outcomes_html(outcomes: Iterable[Any]) -> str:
    """A ``map`` (or ``compare``) outcome list as a grid: each result's card, or the error
    that kept a request from one, escaped."""
    cells = []
    for outcome in outcomes:
        record, error = getattr(outcome, "record", None), getattr(outcome, "error", None)
        if record is not None and (error is None or record.failed):
            cells.append(record_html(record))
        else:
            cells.append(text(f"{type(error).__name__}: {error}" if error else repr(outcome),
                              ERROR, tag="div", css="overflow-wrap:anywhere"))
    return _grid(cells)


def _grid(cells: Iterable[str]) -> str:
    shown = "".join(f"<div style='flex:1 1 320px;max-width:480px'>{c}</div>" for c in cells)
    return f"<div class='genlab-records' style='display:flex;flex-wrap:wrap;gap:8px'>{shown}</div>"


def _request(kept: Iterable[str]) -> dict[str, Any] | None:
    """The request in the kept JSON sidecar, if there is one."""
    for place in kept:
        if media_name(place).endswith(".json"):
            try:
                data = json.loads(read_media(place if "://" in place else Path(place)))
            except (OSError, ValueError):
                return None
            request = data.get("request") if isinstance(data, Mapping) else None
            return dict(request) if isinstance(request, Mapping) else None
    return None


def _credits(request: Mapping[str, Any] | None) -> int | None:
    if not request:
        return None
    try:
        return estimate_credits(validate(dict(request)))
    except Exception:  # a request the catalog no longer takes: its price is not shown
        return None


__all__ = ["outcomes_html", "record_html", "records_html"]
