"""Building a :class:`genlab.Result`: the record, the request that made it (validated, with
every default), its price, its kept files and the measured facts of its media, judged
against the request (:func:`delivery_mismatches`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from genlab._wire import TaskRecord
from genlab.catalog._base import RequestBase
from genlab.catalog._delivered import delivery_mismatches
from genlab.catalog._registry import estimate_credits, validate
from genlab.media import MediaInfo, Result

R = TypeVar("R", bound=Result)


def result_of(
    record: TaskRecord,
    request: RequestBase | Mapping[str, Any] | None = None,
    *,
    kept: Iterable[str] | None = None,
    media: Sequence[MediaInfo] | None = None,
    credits: int | None = None,
    note: str | None = None,
    cls: type[R] = Result,  # type: ignore[assignment]
    **extra: Any,
) -> R:
    """``record`` as a :class:`~genlab.Result` (``extra`` fills fields of a subclass, e.g.
    a reused result's ``reused``): ``request`` is validated when it is a body (a body the
    catalog no longer takes is kept as sent, unpriced); its price is the catalog's unless
    ``credits`` says otherwise; ``media`` is judged against it; the values the catalog
    changed in it become ``adjusted``; ``cls`` is the Result subclass to build. Values the
    record already carries (a Result given again) are kept unless new ones are given.

    Example:
        >>> from genlab._wire import TaskRecord
        >>> r = result_of(TaskRecord(task_id="t1", status="succeeded", model="video-a"),
        ...               {"model": "video-a", "prompt": "waves"})
        >>> r.request["duration"], r.request["resolution"], r.credits
        (5, '720P', 800)
        >>> result_of(TaskRecord(task_id="t2", status="succeeded", model="image-b"),
        ...           {"model": "image-b", "prompt": "x", "resolution": "2K"}).adjusted
        ('resolution: asked 2K; image-b makes 1K only',)
    """
    base = record if isinstance(record, Result) else None
    validated: RequestBase | None = None
    if isinstance(request, RequestBase):
        validated = request
    elif request is not None:
        try:
            validated = validate(dict(request), warn=False)  # told when it was sent
        except Exception:  # sent unchecked, or the catalog has changed since: kept as sent
            validated = None
    body: dict[str, Any] | None
    if validated is not None:
        body = {**validated.model_dump(mode="json", exclude_none=True),
                "model": validated.model_name}
    elif request is not None:
        body = dict(request)
    else:
        body = base.request if base is not None else None
    if credits is None:
        credits = estimate_credits(validated) if validated is not None else (
            base.credits if base is not None else None)
    facts = tuple(media) if media is not None else (base.media if base is not None else ())
    mismatches = delivery_mismatches(validated, facts) if validated is not None else (
        base.mismatches if base is not None and media is None else ())
    # What the catalog changed is known from the request as asked (a body sent since holds
    # the new values and says nothing): else the earlier result's phrases stand.
    adjusted = tuple(c.message for c in validated.adjustments) if validated is not None else ()
    if not adjusted and base is not None:
        adjusted = base.adjusted
    fields: dict[str, Any] = dict(record)  # the record's fields as they are (no re-validation)
    fields.update(
        request=body, credits=credits, media=facts, mismatches=mismatches, adjusted=adjusted,
        note=note if note is not None else (base.note if base is not None else None),
        kept=tuple(kept) if kept is not None else record.kept,
    )
    fields.update(extra)
    return cast(R, cls.model_construct(_fields_set=set(record.model_fields_set), **fields))


__all__ = ["result_of"]
