"""The small pieces request classes are built from: modes, reference items, shots, list rules,
and the one reader of a field's bounds.

Nothing here knows a model; the request classes combine these pieces and the rule engine in
``_base`` judges them.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

RefType = Literal["asset", "first_frame", "last_frame", "edit_source"]
REF_TYPES: tuple[str, ...] = ("asset", "first_frame", "last_frame", "edit_source")

StrictBool = Annotated[bool, Field(strict=True)]


class Mode(StrEnum):
    """Input modes, decided by the combination of reference media (and multi-shot).

    Example:
        >>> Mode("first-frame") is Mode.FIRST_FRAME, str(Mode.TEXT_TO_VIDEO)
        (True, 'text-to-video')
    """

    TEXT_TO_VIDEO = "text-to-video"
    FIRST_FRAME = "first-frame"
    FIRST_LAST_FRAME = "first-last-frame"
    REFERENCE = "reference"
    VIDEO_EDIT = "video-edit"
    MOTION_CONTROL = "motion-control"
    MULTI_SHOT = "multi-shot"
    TEXT_TO_IMAGE = "text-to-image"
    IMAGE_TO_IMAGE = "image-to-image"

    @property
    def label(self) -> str:
        """A phrase for people, e.g. ``image-to-video, first and last frame``."""
        return _MODE_LABELS[self]


_MODE_LABELS = {
    Mode.TEXT_TO_VIDEO: "text-to-video",
    Mode.FIRST_FRAME: "image-to-video, first frame",
    Mode.FIRST_LAST_FRAME: "image-to-video, first and last frame",
    Mode.REFERENCE: "reference-to-video (asset references)",
    Mode.VIDEO_EDIT: "video edit",
    Mode.MOTION_CONTROL: "motion control",
    Mode.MULTI_SHOT: "multi-shot",
    Mode.TEXT_TO_IMAGE: "text-to-image",
    Mode.IMAGE_TO_IMAGE: "image-to-image / style reference",
}

class Reference(BaseModel):
    """One reference item of a video request: a media URL and its role.

    Example:
        >>> Reference(url="https://example.com/cat.png", reference_type="first_frame").url
        'https://example.com/cat.png'
    """

    model_config = ConfigDict(extra="forbid")

    url: Annotated[
        str,
        Field(
            strict=True,
            min_length=1,
            description="Public HTTP(S) address of the media, or a data:image/ Base64 value "
            "where the model allows it.",
        ),
    ]
    reference_type: Annotated[
        str | None,
        Field(
            strict=True,
            description="Role of the item: asset (default), first_frame, last_frame or "
            "edit_source. Which values apply depends on the model and the list.",
        ),
    ] = None

    @property
    def role(self) -> str:
        """The effective role: ``asset`` when omitted, null or empty."""
        return self.reference_type or "asset"


class ImageReference(BaseModel):
    """A reference image of an image request. Only ``url`` is known; other keys pass through.

    Example:
        >>> ImageReference(url="https://example.com/kite.png").url
        'https://example.com/kite.png'
    """

    model_config = ConfigDict(extra="allow")

    url: Annotated[str, Field(strict=True, min_length=1, description="Address of the image.")]


class Shot(BaseModel):
    """One shot of a multi-shot request (``extra_params.multi_prompt``).

    Example:
        >>> Shot(index=0, prompt="the boat sets off", duration="3").prompt
        'the boat sets off'
    """

    model_config = ConfigDict(extra="allow")

    index: Annotated[int, Field(strict=True, ge=0, description="Position of the shot.")]
    prompt: Annotated[str, Field(strict=True, description="What happens in this shot.")] = ""
    # Strict members: a bool is not a number of seconds.
    duration: Annotated[
        StrictStr | StrictInt | StrictFloat,
        Field(description="Seconds, as a string holding a number (numbers are converted)."),
    ]

    @field_validator("duration")
    @classmethod
    def _duration_is_seconds(cls, value: str | int | float) -> str:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        try:
            seconds = float(value)
        except (TypeError, ValueError, OverflowError):
            raise PydanticCustomError(
                "shot_duration", "shot duration must be a number of seconds, got {value}",
                {"value": shown},
            ) from None
        if not (seconds > 0 and math.isfinite(seconds)):  # also rejects NaN and infinity
            raise PydanticCustomError(
                "shot_duration",
                "shot duration must be a positive number of seconds, got {value}",
                {"value": shown},
            )
        # Canonical and lossless: "03" and 3 become "3", "2.1234567" stays "2.1234567".
        return str(int(seconds)) if seconds.is_integer() else repr(seconds)

    @property
    def seconds(self) -> float:
        return float(self.duration)


class ListRule(BaseModel):
    """Which roles a reference list accepts for a model, and how it treats unknown ones."""

    model_config = ConfigDict(frozen=True)

    roles: frozenset[str]
    unknown_as_asset: bool = False


class FieldBounds(NamedTuple):
    """A field's bounds as its constraints declare them; None where none is declared.

    Attributes:
        low: the ``ge`` bound of a number.
        high: the ``le`` bound of a number.
        max_length: the most items of a list, or characters of a string.

    Example:
        >>> from genlab.catalog import CATALOG, field_bounds
        >>> field_bounds(CATALOG["video-a"].model_fields["duration"])
        FieldBounds(low=2, high=30, max_length=None)
    """

    low: int | float | None
    high: int | float | None
    max_length: int | None


def field_bounds(field: FieldInfo | None) -> FieldBounds:
    """The bounds a field declares (``ge``, ``le``, ``max_length``), read from its metadata.

    Forms, error messages and the site's model table all read bounds through this one
    function, so a bound written once in a field's type shows the same everywhere.

    Example:
        >>> from genlab.catalog import VideoA, field_bounds
        >>> field_bounds(VideoA.model_fields["duration"])
        FieldBounds(low=2, high=30, max_length=None)
        >>> field_bounds(VideoA.model_fields["reference_images"]).max_length
        10
    """
    low = high = max_length = None
    for meta in field.metadata if field is not None else ():
        low = getattr(meta, "ge", low)
        high = getattr(meta, "le", high)
        max_length = getattr(meta, "max_length", max_length)
    return FieldBounds(low, high, max_length)
