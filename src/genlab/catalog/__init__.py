"""The catalog: every model's fields, limits, modes, media rules and prices, declared once.

Everything else in genlab derives from it: client-side validation, credit estimates, widget
forms, the emulator's server-side validation, the README's model table and the tests.

Example:
    >>> import genlab
    >>> request = genlab.validate({"model": "video-a", "prompt": "a fox", "duration": 10})
    >>> request.kind, request.mode.value, genlab.estimate_credits(request)
    ('video', 'text-to-video', 1600)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeAlias

from pydantic import Field, TypeAdapter, ValidationError

from genlab._errors import ErrorDetail, InvalidParameterError
from genlab.catalog._base import ImageReference, Mode, Reference, RequestBase, Shot
from genlab.catalog._dimensions import credits_for as _credits_for
from genlab.catalog._dimensions import output_size
from genlab.catalog._forms import (
    OMIT,
    FieldSpec,
    Preview,
    detect_mode,
    form_body,
    form_fields,
    hidden_fields,
    preview,
)
from genlab.catalog._image import ImageA, ImageB, ImageC, ImageD, ImageRequest
from genlab.catalog._media import MediaInfo, MediaRequirements, media_problems
from genlab.catalog._messages import convert_errors as _convert_errors
from genlab.catalog._video import VideoA, VideoB, VideoC, VideoD, VideoE, VideoF
from genlab.catalog._video_base import VideoRequest

GenerationRequest: TypeAlias = Annotated[
    VideoA | VideoB | VideoC | VideoD | VideoE | VideoF | ImageA | ImageB | ImageC | ImageD,
    Field(discriminator="model"),
]
"""Any valid request; the ``model`` field picks the class."""

_ALL: tuple[type[RequestBase], ...] = (
    VideoA, VideoB, VideoC, VideoD, VideoE, VideoF, ImageA, ImageB, ImageC, ImageD,
)
CATALOG: Mapping[str, type[RequestBase]] = {
    cls.model_id(): cls
    for cls in _ALL
}
"""Model name -> request class, in the interface's order."""

_ADAPTER: TypeAdapter[GenerationRequest] = TypeAdapter(GenerationRequest)


def validate(body: Mapping[str, Any] | RequestBase) -> RequestBase:
    """Check a request body against its model's rules, before any credit is spent.

    Args:
        body: the JSON object to send (a mapping with a ``model`` key), or a request object.

    Returns:
        The validated request: ``.kind``, ``.mode``, ``.notices`` and ``.to_body()``.

    Raises:
        InvalidParameterError: listing every problem (``.errors``), each naming the model,
            field, value and rule. Nothing else is ever raised for bad input.

    Example:
        >>> validate({"model": "video-f", "prompt": "waves", "duration": 8}).mode.label
        'text-to-video'
    """
    if isinstance(body, RequestBase):
        return body
    if not isinstance(body, Mapping):
        raise InvalidParameterError.from_details(
            [ErrorDetail((), f"the request body must be a JSON object, not {type(body).__name__}")]
        )
    try:
        return _ADAPTER.validate_python(body if isinstance(body, dict) else dict(body))
    except ValidationError as exc:
        raise InvalidParameterError.from_details(
            _convert_errors(exc.errors(include_url=False), CATALOG)
        ) from None
    except (TypeError, ValueError, RecursionError, OverflowError) as exc:
        raise InvalidParameterError.from_details(
            [ErrorDetail((), f"the request could not be read: {exc}")]
        ) from None


def estimate_credits(
    body: Mapping[str, Any] | RequestBase, *, input_video_seconds: float | None = None
) -> int | None:
    """Credits the request will cost, or None where the service publishes no price.

    Only video-a has a published schedule (per output second: 480P 80, 720P 160, 1080P 280).

    Example:
        >>> estimate_credits({"model": "video-a", "prompt": "x", "resolution": "1080P"})
        1400
    """
    return _credits_for(validate(body), input_video_seconds)


def media_problems_for(
    request: RequestBase, probed: Mapping[str, Sequence[MediaInfo]]
) -> list[ErrorDetail]:
    """Every way probed reference media break the request's media rules.

    Args:
        request: a validated request.
        probed: list name (``reference_videos``, ...) -> the probed items, in order.
    """
    name = request.model_name
    out: list[ErrorDetail] = []
    total_input = 0.0
    for list_name, infos in probed.items():
        rules = request.media_requirements(list_name)
        if rules is None:
            continue
        total = 0.0
        for i, info in enumerate(infos):
            for message in media_problems(name, f"{list_name}[{i}]", info, rules):
                out.append(ErrorDetail((list_name, i), message))
            total += info.duration or 0.0
        if rules.max_total_duration is not None and total > rules.max_total_duration + 0.05:
            out.append(
                ErrorDetail(
                    (list_name,),
                    f"{name}: {list_name} last {total:.2f} s in all; the total may be at most "
                    f"{rules.max_total_duration:g} s",
                )
            )
        if list_name == "reference_videos":
            total_input = total
    limit = getattr(request, "MAX_INPUT_PLUS_OUTPUT", None)
    if limit is not None and total_input:
        output = float(getattr(request, "duration", 0))
        if total_input + output > limit + 0.05:
            out.append(
                ErrorDetail(
                    ("duration",),
                    f"{name}: input videos ({total_input:.2f} s) plus the requested duration "
                    f"({output:g} s) exceed {limit:g} s; shorten one of them",
                )
            )
    return out


__all__ = [
    "CATALOG",
    "FieldSpec",
    "GenerationRequest",
    "ImageA",
    "ImageB",
    "ImageC",
    "ImageD",
    "ImageReference",
    "ImageRequest",
    "MediaInfo",
    "MediaRequirements",
    "Mode",
    "OMIT",
    "Preview",
    "Reference",
    "RequestBase",
    "Shot",
    "VideoA",
    "VideoB",
    "VideoC",
    "VideoD",
    "VideoE",
    "VideoF",
    "VideoRequest",
    "detect_mode",
    "estimate_credits",
    "form_body",
    "form_fields",
    "hidden_fields",
    "media_problems",
    "media_problems_for",
    "output_size",
    "preview",
    "validate",
]
