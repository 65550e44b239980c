"""video-a: text, first frame, first and last frames, mixed image/video/audio references."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._media import MediaRequirements
from genlab.catalog._parts import ListRule, Mode, Reference, StrictBool
from genlab.catalog._video._common import ALL_FRAMES, ASSET, FRAME_MODES, IMAGE_FORMATS
from genlab.catalog._video_base import (
    VideoRequest,
    audio_field,
    duration_field,
    prompt_field,
    refs_field,
)


class VideoA(VideoRequest):
    """video-a: text, first frame, first and last frames, mixed image/video/audio references.

    Example:
        >>> VideoA(model="video-a", prompt="a red fox in snow", duration=10).mode.label
        'text-to-video'
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "video-a",
        "prompt": "A red fox trots through fresh snow at dawn, breath visible",
        "duration": 5,
    }

    SUMMARY: ClassVar[str] = (
        "Text, first frame, first and last frames, mixed image/video/audio references. "
        "Frame inputs cannot be mixed with asset references."
    )
    MODES: ClassVar[frozenset[Mode]] = FRAME_MODES
    PROMPT_MAX: ClassVar[int | None] = 20000
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=ALL_FRAMES, unknown_as_asset=True),
        "reference_videos": ListRule(roles=ASSET, unknown_as_asset=True),
        "reference_audios": ListRule(roles=ASSET, unknown_as_asset=True),
    }
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {
        "reference_images": MediaRequirements("image", IMAGE_FORMATS, allow_data_uri=True),
        "reference_videos": MediaRequirements(
            "video", ("mp4", "mov"), min_duration=1, max_duration=15, max_total_duration=15
        ),
        "reference_audios": MediaRequirements("audio", ("wav", "mp3")),
    }
    MAX_INPUT_PLUS_OUTPUT: ClassVar[float | None] = 30
    CREDITS_PER_SECOND: ClassVar[dict[str, int] | None] = {"480P": 80, "720P": 160, "1080P": 280}
    NOT_ACCEPTED: ClassVar[dict[str, str]] = {
        "video_mode": "video_mode must not be sent (video-a has no independent video editing)",
        "keep_original_sound": "keep_original_sound is not supported by video-a",
        "generate_bgm": "generate_bgm is not supported by video-a",
        "extra_params": "extra_params is not accepted (video-a has no extension parameters)",
        "edit_source": "edit_source is not available (video-a has no video editing)",
    }

    model: Literal["video-a"]
    prompt: str = prompt_field(20000, required=True)
    resolution: Literal["480P", "720P", "1080P"] = Field(
        "720P", description="Output resolution. Default 720P. Sets the price per second."
    )
    duration: int = duration_field(2, 30, note="Input video plus output must not exceed 30 s.")
    aspect_ratio: Literal["16:9", "9:16", "1:1", "4:3", "3:4"] | None = Field(
        None, description="Output aspect ratio. When omitted, the model adapts the ratio."
    )
    generate_audio: StrictBool = audio_field(False, "Does not change credits.")
    reference_images: list[Reference] | None = refs_field(
        10, "Roles: asset (default), first_frame, last_frame. Unknown roles become asset."
    )
    reference_videos: list[Reference] | None = refs_field(
        5, "Role asset. Each 1 to 15 s, 15 s in total."
    )
    reference_audios: list[Reference] | None = refs_field(
        5, "Role asset. Must accompany asset image or video references."
    )
