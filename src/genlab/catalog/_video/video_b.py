"""video-b: frames, multimodal references, editing, audio, 21:9 and adaptive ratios."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._media import MB, MediaRequirements
from genlab.catalog._parts import ListRule, Mode, Reference, StrictBool
from genlab.catalog._video._common import (
    ALL_FRAMES,
    ASPECT,
    ASSET,
    ASSET_OR_EDIT,
    FRAME_MODES,
    IMAGE_FORMATS,
)
from genlab.catalog._video_base import (
    ExtraParams,
    VideoRequest,
    audio_field,
    duration_field,
    prompt_field,
    refs_field,
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
    """video-b: frames, multimodal references, editing, audio, 21:9 and adaptive ratios.

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "video-b", "prompt": "a fox"})
        >>> request.resolution, request.aspect_ratio, request.duration
        ('720P', 'adaptive', 5)
    """

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
            resolutions=("480P", "720P"),
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

    @property
    def wants_last_frame(self) -> bool:
        return self.extra_params is not None and self.extra_params.return_last_frame

    @property
    def seed(self) -> int | None:
        given = self.extra_params.seed if self.extra_params else None
        return given if given is not None and given >= 0 else None

    @property
    def watermarked(self) -> bool:
        return self.extra_params is not None and self.extra_params.watermark
