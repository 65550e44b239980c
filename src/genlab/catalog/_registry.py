"""The registry of models and the catalog's two verdicts on a body: ``validate`` and
``estimate_credits``.

Adding a model is adding its class to ``GenerationRequest`` and ``_ALL``; validation, forms,
the emulator, credits and the tests pick it up from :data:`CATALOG`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Annotated, Any, NamedTuple, TypeAlias

from pydantic import Field, TypeAdapter, ValidationError

from genlab._errors import ErrorDetail, InvalidParameterError, RequestAdjustedWarning
from genlab.catalog._base import RequestBase
from genlab.catalog._image import ImageA, ImageB, ImageC, ImageD
from genlab.catalog._messages import convert_errors
from genlab.catalog._output import credits_for
from genlab.catalog._video import VideoA, VideoB, VideoC, VideoD, VideoE, VideoF

GenerationRequest: TypeAlias = Annotated[
    VideoA | VideoB | VideoC | VideoD | VideoE | VideoF | ImageA | ImageB | ImageC | ImageD,
    Field(discriminator="model"),
]
"""Any valid request; the ``model`` field picks the class."""

_ALL: tuple[type[RequestBase], ...] = (
    VideoA, VideoB, VideoC, VideoD, VideoE, VideoF, ImageA, ImageB, ImageC, ImageD,
)
CATALOG: Mapping[str, type[RequestBase]] = {cls.model_id(): cls for cls in _ALL}
"""Model name -> request class, in the interface's order."""

_ADAPTER: TypeAdapter[GenerationRequest] = TypeAdapter(GenerationRequest)


def validate(body: Mapping[str, Any] | RequestBase, *, warn: bool = True) -> RequestBase:
    """Check a request body against its model's rules, before any credit is spent.

    Where the interface says the service changes a value (image-b makes 1K only), the
    request is valid and carries the new value; the change is in ``.adjustments`` (and
    ``.notices``), and a :class:`~genlab.RequestAdjustedWarning` names both values.

    Args:
        body: the JSON object to send (a mapping with a ``model`` key), or a request object
            (returned as it is: it was validated, and warned of, when it was made).
        warn: warn of the values changed; views that show the changes themselves (a form,
            a card) and the emulator pass False.

    Returns:
        The validated request: ``.kind``, ``.mode``, ``.notices``, ``.adjustments`` and
        ``.to_body()``.

    Raises:
        InvalidParameterError: listing every problem (``.errors``), each naming the model,
            field, value and rule. Nothing else is ever raised for bad input.

    Example:
        >>> validate({"model": "video-f", "prompt": "waves", "duration": 8}).mode.label
        'text-to-video'
        >>> validate({"model": "image-b", "prompt": "x", "resolution": "4K"},
        ...          warn=False).to_body()["resolution"]
        '1K'
    """
    if isinstance(body, RequestBase):
        return body
    if not isinstance(body, Mapping):
        raise InvalidParameterError.from_details(
            [ErrorDetail((), f"the request body must be a JSON object, not {type(body).__name__}")]
        )
    try:
        request = _ADAPTER.validate_python(body if isinstance(body, dict) else dict(body))
    except ValidationError as exc:
        raise InvalidParameterError.from_details(
            convert_errors(exc.errors(include_url=False), CATALOG)
        ) from None
    except (TypeError, ValueError, RecursionError, OverflowError) as exc:
        raise InvalidParameterError.from_details(
            [ErrorDetail((), f"the request could not be read: {exc}")]
        ) from None
    if warn and request.adjustments:
        warnings.warn(adjusted_warning(request), stacklevel=2)
    return request


def adjusted_warning(request: RequestBase) -> RequestAdjustedWarning:
    """The warning that tells the person which values of ``request`` the catalog changed.

    Example:
        >>> request = validate({"model": "image-b", "prompt": "x", "resolution": "4K"},
        ...                    warn=False)
        >>> str(adjusted_warning(request))
        'image-b: resolution 4K is sent as 1K (image-b makes 1K only)'
    """
    changes = request.adjustments
    said = "; ".join(f"{c.sent} ({c.why})" for c in changes)
    return RequestAdjustedWarning(f"{request.model_name}: {said}", model=request.model_name,
                                  changes=[c.message for c in changes])


class Checked(NamedTuple):
    """A body checked and priced without raising: what a plan of many requests lists.

    Attributes:
        request: the validated request, or None when the body breaks a rule.
        problem: every broken rule, one per line (None when valid).
        credits: what the request will cost (None: invalid, or no published price).

    Example:
        >>> from genlab.catalog import checked
        >>> found = checked({"model": "video-a", "prompt": "a fox", "duration": 40})
        >>> found.request, found.problem, found.credits
        (None, 'video-a: duration must be from 2 to 30 (got 40)', None)
    """

    request: RequestBase | None
    problem: str | None
    credits: int | None


def checked(body: Mapping[str, Any] | RequestBase) -> Checked:
    """:func:`validate` and :func:`estimate_credits` in one, the problem told, not raised;
    nor warned: what the catalog changes is in ``request.adjustments``, for the plan (or the
    result's card) to say.

    Example:
        >>> checked({"model": "video-a", "prompt": "x", "resolution": "1080P"}).credits
        1400
        >>> print(checked({"model": "video-a", "prompt": "x", "duration": 99}).problem)
        video-a: duration must be from 2 to 30 (got 99)
    """
    try:
        request = validate(body, warn=False)
    except InvalidParameterError as exc:
        return Checked(None, "\n".join(e.message for e in exc.errors) or exc.message, None)
    return Checked(request, None, credits_for(request, None))


def declared_fields(model: str) -> frozenset[str] | None:
    """The body fields the catalog declares for ``model``; None for a model it does not know.

    What the client's ``extra_body=`` sends unchecked is what falls outside this set.

    Example:
        >>> {"model", "prompt", "duration"} <= declared_fields("video-a")
        True
        >>> declared_fields("video-z") is None
        True
    """
    cls = CATALOG.get(model)
    if cls is None:
        return None
    names = {name for name in cls.model_fields}
    names |= {f.alias for f in cls.model_fields.values() if f.alias}
    return frozenset(names)


def estimate_credits(
    body: Mapping[str, Any] | RequestBase, *, input_video_seconds: float | None = None
) -> int | None:
    """Credits the request will cost, or None where the service publishes no price.

    Only video-a has a published schedule (per output second: 480P 80, 720P 160, 1080P 280).
    The figure is the one :func:`~genlab.catalog.plan_output` plans.

    Args:
        body: a body or a validated request.
        input_video_seconds: the input video's length, for modes billed on it (video-e edits).

    Example:
        >>> estimate_credits({"model": "video-a", "prompt": "x", "resolution": "1080P"})
        1400
    """
    return credits_for(validate(body, warn=False), input_video_seconds)


__all__ = [
    "CATALOG", "Checked", "GenerationRequest", "checked", "declared_fields", "estimate_credits",
    "validate",
]
