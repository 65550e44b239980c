"""video-f: text, first frame, first/last-frame interpolation, multi-reference, multi-shot."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._media import MB, MediaRequirements
from genlab.catalog._parts import ListRule, Mode, Reference, StrictBool
from genlab.catalog._video._common import ALL_FRAMES, ASPECT, FRAME_MODES
from genlab.catalog._video_base import (
    MultiShotParams,
    VideoRequest,
    audio_field,
    duration_field,
    prompt_field,
    refs_field,
)


class VideoF(VideoRequest):
    """video-f: text, first frame, first/last-frame interpolation, multi-reference, multi-shot.

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "video-f", "prompt": "a fox"})
        >>> type(request).__name__, request.resolution
        ('VideoF', '720P')
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "video-f",
        "prompt": "Time-lapse of clouds rolling over mountain peaks",
    }

    SUMMARY: ClassVar[str] = (
        "Text, image-to-video, first/last-frame interpolation, multi-reference images, multi-shot."
    )
    MODES: ClassVar[frozenset[Mode]] = FRAME_MODES | {Mode.MULTI_SHOT}
    PROMPT_MAX: ClassVar[int | None] = 2500
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=ALL_FRAMES),
    }
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {
        "reference_images": MediaRequirements(
            "image",
            ("jpeg", "png"),
            max_bytes=10 * MB,
            min_side=200,
            min_aspect=ASPECT[0],
            max_aspect=ASPECT[1],
        ),
    }

    model: Literal["video-f"]
    prompt: str = prompt_field(2500, note="May be empty in multi-shot mode.")
    resolution: Literal["720P", "1080P"] = Field("720P", description="Default 720P.")
    aspect_ratio: Literal["16:9", "9:16", "1:1"] = Field("16:9", description="Default 16:9.")
    duration: int = duration_field(3, 15)
    generate_audio: StrictBool = audio_field(False)
    reference_images: list[Reference] | None = refs_field(
        4, "1 first_frame, first_frame + last_frame, or up to 4 asset images."
    )
    extra_params: MultiShotParams | None = Field(
        None, description="multi_shot, shot_type, multi_prompt; other keys pass through."
    )
