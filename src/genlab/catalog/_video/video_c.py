"""video-c: text, first frame, multi-image reference (character1, ...), video editing."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._base import Problem
from genlab.catalog._media import MB, MediaRequirements
from genlab.catalog._parts import ListRule, Mode, Reference
from genlab.catalog._video._common import ASPECT, ASSET_OR_EDIT
from genlab.catalog._video_base import (
    ExtraParams,
    VideoRequest,
    duration_field,
    prompt_field,
    refs_field,
)


class VideoCParams(ExtraParams):
    """video-c's extension parameters."""

    audio_setting: Literal["auto", "origin"] | None = Field(
        None,
        description="Video edit only: auto (default, the model decides) or origin "
        "(keep the original audio).",
    )


class VideoC(VideoRequest):
    """video-c: text, first frame, multi-image reference (character1, ...), video editing.

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "video-c", "prompt": "a fox"})
        >>> request.resolution, request.aspect_ratio, request.duration
        ('1080P', '16:9', 5)
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "video-c",
        "prompt": "A lighthouse beam sweeps over a stormy sea",
        "resolution": "720P",
    }

    SUMMARY: ClassVar[str] = (
        "Text, first-frame image-to-video, multi-image reference-to-video, video editing."
    )
    MODES: ClassVar[frozenset[Mode]] = frozenset(
        {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.REFERENCE, Mode.VIDEO_EDIT}
    )
    PROMPT_MAX: ClassVar[int | None] = 5000
    IGNORES_ASSET_VIDEOS: ClassVar[bool] = True
    MAX_ASSET_IMAGES_WITH_VIDEO: ClassVar[int | None] = 5
    FOLLOWS_INPUT_VIDEO: ClassVar[dict[Mode, float | None]] = {Mode.VIDEO_EDIT: 15}
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=frozenset({"asset", "first_frame"})),
        "reference_videos": ListRule(roles=ASSET_OR_EDIT),
    }
    _FIRST_FRAME_IMAGE: ClassVar[MediaRequirements] = MediaRequirements(
        "image",
        ("jpeg", "png", "webp"),
        max_bytes=10 * MB,
        min_side=300,
        min_aspect=ASPECT[0],
        max_aspect=ASPECT[1],
        allow_data_uri=True,
    )
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {
        "reference_images": MediaRequirements(
            "image", ("jpeg", "png", "webp"), min_short_side=400, allow_data_uri=True
        ),
        "reference_videos": MediaRequirements(
            "video",
            ("mp4", "mov"),
            max_bytes=100 * MB,
            min_short_side=320,
            max_long_side=2160,
            min_aspect=ASPECT[0],
            max_aspect=ASPECT[1],
            min_duration=3,
            max_duration=60,
            min_fps=8,
            min_fps_exclusive=True,
        ),
    }
    REJECTED_IN_MODE: ClassVar[dict[Mode, dict[str, str]]] = {
        Mode.FIRST_FRAME: {"aspect_ratio": "the output follows the first frame"},
        Mode.VIDEO_EDIT: {
            "aspect_ratio": "the output follows the original video",
            "duration": "the output length follows the original video, at most 15 s",
        },
    }

    model: Literal["video-c"]
    prompt: str = prompt_field(
        5000, note="In reference mode, character1, character2, ... name reference_images in order."
    )
    resolution: Literal["720P", "1080P"] = Field("1080P", description="Default 1080P.")
    aspect_ratio: Literal["16:9", "9:16", "1:1", "4:3", "3:4"] = Field(
        "16:9", description="Default 16:9. Text-to-video and reference-to-video only."
    )
    duration: int = duration_field(3, 15, note="Not accepted in video-edit mode.")
    reference_images: list[Reference] | None = refs_field(
        9, "1 first_frame, or 1 to 9 asset images (0 to 5 when editing)."
    )
    reference_videos: list[Reference] | None = refs_field(
        1, "edit_source to edit it; asset videos are ignored."
    )
    extra_params: VideoCParams | None = Field(None, description="Extension parameters.")

    @property
    def source_audio_video(self) -> int | None:
        extra = self.extra_params
        if extra is None or extra.audio_setting != "origin":
            return None
        if self.reference_mode() is not Mode.VIDEO_EDIT:
            return None
        roles = self._roles("reference_videos")
        return roles.index("edit_source")

    def media_requirements(self, list_name: str) -> MediaRequirements | None:
        if list_name == "reference_images" and self.reference_mode() is Mode.FIRST_FRAME:
            return self._FIRST_FRAME_IMAGE
        return super().media_requirements(list_name)

    def _extra_rules(self, mode: Mode, problems: list[Problem], notices: list[str]) -> None:
        super()._extra_rules(mode, problems, notices)
        extra = self.extra_params
        if extra and extra.audio_setting and mode is not Mode.VIDEO_EDIT:
            notices.append("extra_params.audio_setting only takes effect in video-edit mode")
