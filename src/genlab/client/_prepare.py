"""Step 1 of a generation: prepare a request, validating it once.

A body dict is validated by the catalog; a request the catalog already validated (a
``RequestBase``, as the Studio and ``compare`` hold) is taken as it is, never validated again.
What the catalog does not know yet goes through ``extra_body`` or ``kind=`` (sent unchecked,
with a notice). The result is the :class:`~genlab.client.journal.SubmitEntry` the journal
records and the lifecycle sends.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from genlab._errors import ErrorDetail, InvalidParameterError
from genlab._wire import KINDS
from genlab.catalog import RequestBase, declared_fields, estimate_credits, validate
from genlab.client._config import Kind, RequestLike
from genlab.client._protocols import SubmitEntry

logger = logging.getLogger("genlab")


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
        >>> entry, _ = prepare({"model": "image-b", "prompt": "a"}, {},
        ...                            extra_body={"style": "ink"})
        >>> entry.body
        {'model': 'image-b', 'prompt': 'a', 'style': 'ink'}
        >>> entry, request = prepare({"model": "video-z", "prompt": "a"}, {}, kind="video")
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


def _invalid(message: str) -> InvalidParameterError:
    return InvalidParameterError.from_details([ErrorDetail((), message)])


def _json_or_refuse(body: dict[str, Any]) -> dict[str, Any]:
    try:
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _invalid(f"the request cannot be sent as JSON: {exc}") from None
    return body
