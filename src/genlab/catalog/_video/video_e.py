"""video-e: asset video references, edit_source editing, multi-shot."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._media import MB, MediaRequirements
from genlab.catalog._parts import ListRule, Mode, Reference, StrictBool
from genlab.catalog._video._common import ALL_FRAMES, ASPECT, ASSET_OR_EDIT, FRAME_MODES
from genlab.catalog._video_base import (
    MultiShotParams,
    VideoRequest,
    audio_field,
    duration_field,
    prompt_field,
    refs_field,
)


class VideoEVideoReference(Reference):
    """A reference video of video-e, which may say whether to keep its original sound."""

    keep_original_sound: StrictBool | Literal["yes", "no"] | None = Field(
        None, description="Keep the original audio of this video (model default when omitted)."
    )


class VideoE(VideoRequest):
    """video-e: asset video references, edit_source editing, multi-shot, up to 4 images.

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "video-e", "prompt": "a fox"})
        >>> request.resolution, request.aspect_ratio, request.duration
        ('720P', '16:9', 5)
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "video-e",
        "prompt": "A hummingbird hovers at a red flower, slow motion",
    }

    SUMMARY: ClassVar[str] = (
        "Asset video references, edit_source video editing, optional multi-shot, up to 4 "
        "accompanying asset images with a video."
    )
    MODES: ClassVar[frozenset[Mode]] = FRAME_MODES | {Mode.VIDEO_EDIT, Mode.MULTI_SHOT}
    PROMPT_MAX: ClassVar[int | None] = 2500
    MAX_ASSET_IMAGES_WITH_VIDEO: ClassVar[int | None] = 4
    FOLLOWS_INPUT_VIDEO: ClassVar[dict[Mode, float | None]] = {Mode.VIDEO_EDIT: None}
    BILLED_ON_INPUT: ClassVar[frozenset[Mode]] = frozenset({Mode.VIDEO_EDIT})
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=ALL_FRAMES),
        "reference_videos": ListRule(roles=ASSET_OR_EDIT),
    }
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {
        "reference_images": MediaRequirements(
            "image",
            ("jpeg", "png"),
            max_bytes=10 * MB,
            min_side=300,
            min_aspect=ASPECT[0],
            max_aspect=ASPECT[1],
        ),
        "reference_videos": MediaRequirements(
            "video",
            ("mp4", "mov"),
            max_bytes=200 * MB,
            min_side=720,
            max_side=2160,
            min_duration=3,
            min_fps=24,
            max_fps=60,
        ),
    }
    IGNORED_IN_MODE: ClassVar[dict[Mode, dict[str, str]]] = {
        Mode.VIDEO_EDIT: {
            "duration": "the output matches the input video",
            "generate_audio": "it has no effect when a video is supplied",
        },
    }

    model: Literal["video-e"]
    prompt: str = prompt_field(
        2500,
        note="Refer to inputs as <<<element_N>>>, <<<image_N>>>, <<<video_N>>>. Required "
        "unless multi-shot uses shot_type customize.",
    )
    resolution: Literal["720P", "1080P"] = Field("720P", description="Default 720P.")
    aspect_ratio: Literal["16:9", "9:16", "1:1"] = Field("16:9", description="Default 16:9.")
    duration: int = duration_field(3, 15, note="Ignored when editing (follows the input).")
    generate_audio: StrictBool = audio_field(False, "No effect when a video is supplied.")
    reference_images: list[Reference] | None = refs_field(
        7, "asset, first_frame, last_frame. Up to 4 asset images beside a video, no frames."
    )
    reference_videos: list[VideoEVideoReference] | None = refs_field(
        1, "asset (a reference) or edit_source (the video to edit)."
    )
    extra_params: MultiShotParams | None = Field(
        None, description="multi_shot, shot_type, multi_prompt; other keys pass through."
    )

    @property
    def source_audio_video(self) -> int | None:
        for i, item in enumerate(self.reference_videos or ()):
            if item.keep_original_sound in (True, "yes"):
                return i
        return None

    @property
    def generates_audio(self) -> bool:
        if self.references("reference_videos"):
            return False
        return self.generate_audio

    def _prompt_required(self, mode: Mode) -> bool:
        if self._multi_shot() is None:
            return True  # the interface: required whenever multi_shot is off
        return super()._prompt_required(mode)
