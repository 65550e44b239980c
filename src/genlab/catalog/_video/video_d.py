"""video-d: motion control."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._media import MB, MediaRequirements
from genlab.catalog._parts import ListRule, Mode, Reference, StrictBool
from genlab.catalog._video._common import ASPECT, ASSET
from genlab.catalog._video_base import (
    ExtraParams,
    VideoRequest,
    audio_field,
    prompt_field,
    refs_field,
)


class VideoDParams(ExtraParams):
    """video-d's extension parameters."""

    character_orientation: Literal["video", "image"] | None = Field(
        None,
        description="Whose orientation the character follows: video (motion clip up to "
        "30 s, the default) or image (clip up to 10 s).",
    )


class VideoD(VideoRequest):
    """video-d: motion control; the character of one image moves like the one in one video.

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "video-d", "prompt": "dance",
        ...     "reference_images": [{"url": "https://example.com/person.png"}],
        ...     "reference_videos": [{"url": "https://example.com/moves.mp4"}]})
        >>> type(request).__name__, str(request.mode)
        ('VideoD', 'motion-control')
    """

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
