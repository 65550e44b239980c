"""The six video models, each declared once: fields, bounds, roles, modes, media and prices."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._base import ListRule, Mode, Problem, Reference, StrictBool
from genlab.catalog._media import MB, MediaRequirements
from genlab.catalog._video_base import (
    ExtraParams,
    MultiShotParams,
    VideoRequest,
    audio_field,
    duration_field,
    prompt_field,
    refs_field,
)

ASPECT = (1 / 2.5, 2.5)
IMAGE_FORMATS = ("jpeg", "png", "webp", "bmp", "tiff", "gif")
ALL_FRAMES = frozenset({"asset", "first_frame", "last_frame"})
ASSET = frozenset({"asset"})
ASSET_OR_EDIT = frozenset({"asset", "edit_source"})
FRAME_MODES = frozenset(
    {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.FIRST_LAST_FRAME, Mode.REFERENCE}
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


class VideoBParams(ExtraParams):
    """video-b's extension parameters."""

    seed: int | None = Field(
        None,
        strict=True,
        ge=-1,
        le=2**32 - 1,
        description="-1 to 2^32-1; -1 or omitted means random. Same seed, similar output.",
    )
    watermark: StrictBool = Field(False, description="Add a watermark to the video.")
    return_last_frame: StrictBool = Field(
        False, description="Also return the last frame as a PNG, for chaining segments."
    )


class VideoB(VideoRequest):
    """video-b: frames, multimodal references, editing, audio, 21:9 and adaptive ratios."""

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "video-b",
        "prompt": "A paper boat drifts down a rain-filled gutter",
        "aspect_ratio": "16:9",
    }

    SUMMARY: ClassVar[str] = (
        "Text, first frame, first and last frames, multimodal references (image, video, audio), "
        "editing, optional audio, 21:9 and adaptive aspect ratio."
    )
    MODES: ClassVar[frozenset[Mode]] = FRAME_MODES | {Mode.VIDEO_EDIT}
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=ALL_FRAMES),
        "reference_videos": ListRule(roles=ASSET_OR_EDIT),
        "reference_audios": ListRule(roles=ASSET),
    }
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {
        "reference_images": MediaRequirements(
            "image",
            IMAGE_FORMATS,
            max_bytes=30 * MB,
            min_side=300,
            max_side=6000,
            min_aspect=ASPECT[0],
            max_aspect=ASPECT[1],
        ),
        "reference_videos": MediaRequirements(
            "video",
            ("mp4", "mov"),
            max_bytes=50 * MB,
            min_side=300,
            max_side=6000,
            min_aspect=ASPECT[0],
            max_aspect=ASPECT[1],
            min_pixels=640 * 640,
            max_pixels=834 * 1112,
            min_duration=2,
            max_duration=15,
            max_total_duration=15,
            min_fps=24,
            max_fps=60,
        ),
        "reference_audios": MediaRequirements(
            "audio",
            ("wav", "mp3"),
            max_bytes=15 * MB,
            min_duration=2,
            max_duration=15,
            max_total_duration=15,
        ),
    }

    model: Literal["video-b"]
    prompt: str = prompt_field(
        None, note="Recommended at most 500 Chinese characters or 1000 English words."
    )
    resolution: Literal["480P", "720P"] = Field("720P", description="Default 720P.")
    aspect_ratio: Literal["16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"] = Field(
        "adaptive", description="Default adaptive: chosen from the input media or the prompt."
    )
    duration: int = duration_field(4, 15)
    generate_audio: StrictBool = audio_field(True, "Generated audio is mono.")
    reference_images: list[Reference] | None = refs_field(
        9, "first_frame, first_frame + last_frame, or 1 to 9 asset images."
    )
    reference_videos: list[Reference] | None = refs_field(
        3, "asset, or edit_source for the video to edit. 15 s in total."
    )
    reference_audios: list[Reference] | None = refs_field(
        3, "15 s in total. Needs a reference image or video."
    )
    extra_params: VideoBParams | None = Field(
        None, description="Extension parameters: seed, watermark, return_last_frame."
    )


class VideoCParams(ExtraParams):
    """video-c's extension parameters."""

    audio_setting: Literal["auto", "origin"] | None = Field(
        None,
        description="Video edit only: auto (default, the model decides) or origin "
        "(keep the original audio).",
    )


class VideoC(VideoRequest):
    """video-c: text, first frame, multi-image reference (character1, ...), video editing."""

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

    def media_requirements(self, list_name: str) -> MediaRequirements | None:
        if list_name == "reference_images" and self.reference_mode() is Mode.FIRST_FRAME:
            return self._FIRST_FRAME_IMAGE
        return super().media_requirements(list_name)

    def _extra_rules(self, mode: Mode, problems: list[Problem], notices: list[str]) -> None:
        super()._extra_rules(mode, problems, notices)
        extra = self.extra_params
        if extra and extra.audio_setting and mode is not Mode.VIDEO_EDIT:
            notices.append("extra_params.audio_setting only takes effect in video-edit mode")


class VideoDParams(ExtraParams):
    """video-d's extension parameters."""

    character_orientation: Literal["video", "image"] | None = Field(
        None,
        description="Whose orientation the character follows: video (motion clip up to "
        "30 s, the default) or image (clip up to 10 s).",
    )


class VideoD(VideoRequest):
    """video-d: motion control; the character of one image moves like the one in one video."""

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "video-d",
        "prompt": "The character dances in a sunlit studio",
        "reference_images": [{"url": "https://example.com/character.png"}],
        "reference_videos": [{"url": "https://example.com/dance.mp4"}],
    }

    SUMMARY: ClassVar[str] = (
        "Motion control: a character from one image moves like the motion in one video."
    )
    MODES: ClassVar[frozenset[Mode]] = frozenset({Mode.MOTION_CONTROL})
    PROMPT_MAX: ClassVar[int | None] = 2500
    MOTION_CONTROL: ClassVar[bool] = True
    FOLLOWS_INPUT_VIDEO: ClassVar[dict[Mode, float | None]] = {Mode.MOTION_CONTROL: None}
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=ASSET),
        "reference_videos": ListRule(roles=ASSET),
    }
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {
        "reference_images": MediaRequirements(
            "image",
            ("jpeg", "png"),
            max_bytes=10 * MB,
            min_side=300,
            max_side=65536,
            min_aspect=ASPECT[0],
            max_aspect=ASPECT[1],
        ),
        "reference_videos": MediaRequirements(
            "video",
            ("mp4", "mov"),
            max_bytes=100 * MB,
            min_side=340,
            max_side=3850,
            min_duration=3,
            max_duration=30,
        ),
    }
    _MAX_CLIP: ClassVar[dict[str, float]] = {"video": 30.0, "image": 10.0}

    model: Literal["video-d"]
    prompt: str = prompt_field(2500, note="May hold positive and negative descriptions.")
    resolution: Literal["720P", "1080P"] = Field("720P", description="Default 720P.")
    reference_images: list[Reference] | None = refs_field(1, "Exactly 1: the character.")
    reference_videos: list[Reference] | None = refs_field(1, "Exactly 1: the motion, 3 s or more.")
    generate_audio: StrictBool = audio_field(False)
    extra_params: VideoDParams | None = Field(None, description="character_orientation.")

    @property
    def character_orientation(self) -> str:
        """The effective orientation (``video`` when not given)."""
        given = self.extra_params.character_orientation if self.extra_params else None
        return given or "video"

    def media_requirements(self, list_name: str) -> MediaRequirements | None:
        rules = super().media_requirements(list_name)
        if list_name == "reference_videos" and rules is not None:
            return replace(rules, max_duration=self._MAX_CLIP[self.character_orientation])
        return rules

    def _prompt_required(self, mode: Mode) -> bool:
        return False


class VideoEVideoReference(Reference):
    """A reference video of video-e, which may say whether to keep its original sound."""

    keep_original_sound: StrictBool | Literal["yes", "no"] | None = Field(
        None, description="Keep the original audio of this video (model default when omitted)."
    )


class VideoE(VideoRequest):
    """video-e: asset video references, edit_source editing, multi-shot, up to 4 images."""

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
    def generates_audio(self) -> bool:
        if self.references("reference_videos"):
            return False
        return self.generate_audio

    def _prompt_required(self, mode: Mode) -> bool:
        if self._multi_shot() is None:
            return True  # the interface: required whenever multi_shot is off
        return super()._prompt_required(mode)


class VideoF(VideoRequest):
    """video-f: text, first frame, first/last-frame interpolation, multi-reference, multi-shot."""

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


VIDEO_MODELS: tuple[type[VideoRequest], ...] = (VideoA, VideoB, VideoC, VideoD, VideoE, VideoF)
