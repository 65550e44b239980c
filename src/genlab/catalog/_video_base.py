"""What every video request shares: mode detection from references, combination rules,
multi-shot rules, and the field helpers the per-model classes use."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from genlab.catalog._base import Problem, RequestBase
from genlab.catalog._dimensions import DEFAULT_DURATION
from genlab.catalog._parts import Mode, Reference, Shot, StrictBool


def prompt_field(max_length: int | None, *, required: bool = False, note: str = "") -> Any:
    """A ``prompt`` field with the model's length limit; the description becomes the tooltip."""
    limit = f"Up to {max_length} characters." if max_length else "No hard length limit."
    text = f"What to generate. {limit} {note}".strip()
    if required:
        return Field(strict=True, min_length=1, max_length=max_length, description=text)
    return Field("", strict=True, max_length=max_length, description=text)


def duration_field(low: int, high: int, default: int = DEFAULT_DURATION, note: str = "") -> Any:
    """An integer ``duration`` in seconds with the model's bounds (``-1`` is never accepted)."""
    text = f"Output length in whole seconds, {low} to {high}. Default {default}. {note}".strip()
    return Field(default, strict=True, ge=low, le=high, description=text)


def refs_field(max_items: int, text: str) -> Any:
    """A reference list of at most ``max_items`` items; null and empty mean none."""
    return Field(None, max_length=max_items, description=f"At most {max_items}. {text}".strip())


def audio_field(default: bool, note: str = "") -> Any:
    text = f"Generate an audio track. Default {str(default).lower()}. {note}".strip()
    return Field(default, strict=True, description=text)


class ExtraParams(BaseModel):
    """Vendor extension parameters. Keys the interface does not name pass through untouched."""

    model_config = ConfigDict(extra="allow")


class MultiShotParams(ExtraParams):
    """``extra_params`` of the multi-shot models."""

    multi_shot: StrictBool = Field(False, description="Enable multi-shot generation.")
    shot_type: Literal["customize", "intelligence"] | None = Field(
        None,
        description="customize: per-shot prompts from multi_prompt; intelligence: the model "
        "plans the shots from the prompt. Default: customize when multi_prompt is given.",
    )
    multi_prompt: list[Shot] | None = Field(
        None, description="The shots, each with index, prompt and duration (seconds)."
    )

    def effective_shot_type(self) -> str:
        if self.shot_type:
            return self.shot_type
        return "customize" if self.multi_prompt else "intelligence"


class VideoRequest(RequestBase):
    """Base of the video request classes: reference lists decide the mode.

    Example:
        >>> from genlab.catalog import CATALOG
        >>> sorted(name for name, cls in CATALOG.items() if issubclass(cls, VideoRequest))
        ['video-a', 'video-b', 'video-c', 'video-d', 'video-e', 'video-f']
    """

    KIND: ClassVar[Literal["video", "image"]] = "video"
    # Rules given as data by the model classes.
    MOTION_CONTROL: ClassVar[bool] = False
    IGNORES_ASSET_VIDEOS: ClassVar[bool] = False
    MAX_ASSET_IMAGES_WITH_VIDEO: ClassVar[int | None] = None
    # Modes billed on the input video's duration (rounded) instead of ``duration``.
    BILLED_ON_INPUT: ClassVar[frozenset[Mode]] = frozenset()
    DEFAULT_ASPECT: ClassVar[str] = "16:9"

    def _has_references(self) -> bool:
        d = self.__dict__
        return bool(
            d.get("reference_images") or d.get("reference_videos") or d.get("reference_audios")
        )

    def _roles(self, list_name: str) -> list[str]:
        return [item.role for item in self.references(list_name) if isinstance(item, Reference)]

    def _counted_videos(self) -> list[str]:
        roles = self._roles("reference_videos")
        if self.IGNORES_ASSET_VIDEOS:
            return [r for r in roles if r != "asset"]
        return roles

    def reference_mode(self) -> Mode:
        """The mode the references alone decide (multi-shot aside)."""
        if self.MOTION_CONTROL:
            return Mode.MOTION_CONTROL
        if not self._has_references():
            return Mode.TEXT_TO_VIDEO
        images = self._roles("reference_images")
        videos = self._counted_videos()
        if "edit_source" in videos:
            return Mode.VIDEO_EDIT
        if "last_frame" in images:
            return Mode.FIRST_LAST_FRAME
        if "first_frame" in images:
            return Mode.FIRST_FRAME
        if images or videos or self.references("reference_audios"):
            return Mode.REFERENCE
        return Mode.TEXT_TO_VIDEO

    def _multi_shot_params(self) -> MultiShotParams | None:
        """``extra_params`` of a multi-shot model, whether multi-shot is on or not."""
        extra = self.__dict__.get("extra_params")
        return extra if isinstance(extra, MultiShotParams) else None

    def _multi_shot(self) -> MultiShotParams | None:
        extra = self._multi_shot_params()
        return extra if extra is not None and extra.multi_shot else None

    def _detect_mode(self) -> Mode:
        return Mode.MULTI_SHOT if self._multi_shot() else self.reference_mode()

    # --- properties the emulator and forms read ---------------------------------------

    @property
    def generates_audio(self) -> bool:
        """Whether the output carries an audio track."""
        return self.__dict__.get("generate_audio") is True

    @property
    def wants_last_frame(self) -> bool:
        """Whether the last frame is to be returned as an image (only video-b offers it)."""
        return False

    @property
    def seed(self) -> int | None:
        """The seed the request fixes; None when it has none or asks for a random one (-1)."""
        return None

    @property
    def watermarked(self) -> bool:
        """Whether the output shows a visible watermark (only video-b offers one)."""
        return False

    @property
    def source_audio_video(self) -> int | None:
        """The index in ``reference_videos`` of the video whose own audio track the output
        keeps (video-c's ``audio_setting: origin`` when editing, video-e's
        ``keep_original_sound``); None when the output keeps no input's audio."""
        return None

    def output_duration(self, input_video_seconds: float | None = None) -> float:
        """Seconds of output: ``duration``, or the input video's length where the mode says so.

        Example:
            >>> from genlab.catalog import validate
            >>> validate({"model": "video-f", "prompt": "waves"}).output_duration()
            5.0
        """
        requested = self.requested_duration
        if requested is None:
            requested = float(DEFAULT_DURATION)
        mode = self.reference_mode()
        if mode in self.FOLLOWS_INPUT_VIDEO and input_video_seconds is not None:
            cap = self.FOLLOWS_INPUT_VIDEO[mode]
            return min(input_video_seconds, cap) if cap is not None else input_video_seconds
        return requested

    def billed_seconds(self, input_video_seconds: float | None = None) -> float | None:
        """Seconds the service bills; None when it depends on an input not yet probed."""
        if self.reference_mode() in self.BILLED_ON_INPUT:
            if input_video_seconds is None:
                return None
            return float(round(input_video_seconds))
        return self.output_duration(input_video_seconds)

    # --- combination rules ------------------------------------------------------------

    def _extra_rules(self, mode: Mode, problems: list[Problem], notices: list[str]) -> None:
        if self._has_references() or self.MOTION_CONTROL:  # motion control needs its media
            self._check_combination(problems, notices)
        if self.__dict__.get("extra_params") is not None:
            self._check_multi_shot(problems, notices)

    def _check_combination(self, problems: list[Problem], notices: list[str]) -> None:
        name = self.model_name
        images = self._roles("reference_images")
        videos = self._counted_videos()
        audios = self.references("reference_audios")
        firsts, lasts = images.count("first_frame"), images.count("last_frame")
        asset_images = images.count("asset")

        def bad(field: str, text: str) -> None:
            problems.append(((field,), f"{name}: {text}"))

        if self.IGNORES_ASSET_VIDEOS and len(videos) < len(self._roles("reference_videos")):
            notices.append("asset reference_videos are ignored and do not trigger editing")
        if self.MOTION_CONTROL:
            if len(images) != 1 or len(self._roles("reference_videos")) != 1:
                bad(
                    "reference_images",
                    "motion control needs exactly 1 reference image (the character) and exactly "
                    f"1 reference video (the motion); got {len(images)} image(s) and "
                    f"{len(self._roles('reference_videos'))} video(s)",
                )
            return
        if firsts > 1 or lasts > 1:
            bad("reference_images", "frame control takes one first_frame and one last_frame")
        if lasts and not firsts:
            bad("reference_images", "a last_frame requires a first_frame")
        if (firsts or lasts) and (asset_images or audios or "asset" in videos):
            bad(
                "reference_images",
                "frame inputs (first_frame, last_frame) cannot be mixed with asset references; "
                "use either frames or asset images/videos/audios",
            )
        if (firsts or lasts) and "edit_source" in videos:
            bad("reference_images", "first_frame/last_frame cannot be combined with video editing")
        elif (firsts or lasts) and videos and not self.IGNORES_ASSET_VIDEOS:
            bad("reference_images", "first_frame/last_frame cannot be combined with a video")
        if audios and not (images or videos):
            bad(
                "reference_audios",
                "reference_audios need at least one reference image or reference video",
            )
        if videos.count("edit_source") > 1:
            bad("reference_videos", "only one video can be marked edit_source")
        limit = self.MAX_ASSET_IMAGES_WITH_VIDEO
        if limit is not None and videos and asset_images > limit:
            bad(
                "reference_images",
                f"at most {limit} asset images may accompany a reference video; got {asset_images}",
            )

    def _check_multi_shot(self, problems: list[Problem], notices: list[str]) -> None:
        extra = self._multi_shot_params()
        if extra is None:
            return
        name = self.model_name
        if not extra.multi_shot:
            if extra.multi_prompt:
                notices.append("extra_params.multi_prompt is ignored: multi_shot is off")
            return
        if self.reference_mode() is Mode.VIDEO_EDIT:
            problems.append(
                (("extra_params", "multi_shot"), f"{name}: multi-shot cannot be combined with "
                 "video editing (the output follows the edited video)")
            )
        shots = extra.multi_prompt or []
        customize = extra.effective_shot_type() == "customize"
        if customize and not shots:
            problems.append(
                (("extra_params", "multi_prompt"), f"{name}: multi-shot with shot_type "
                 "'customize' needs extra_params.multi_prompt with at least one shot")
            )
        indexes = [s.index for s in shots]
        if len(set(indexes)) != len(indexes):
            problems.append(
                (("extra_params", "multi_prompt"), f"{name}: multi_prompt shot indexes must be "
                 f"unique; got {indexes}")
            )
        for i, shot in enumerate(shots):
            if self.PROMPT_MAX is not None and len(shot.prompt) > self.PROMPT_MAX:
                problems.append(
                    (("extra_params", "multi_prompt", i, "prompt"), f"{name}: multi_prompt[{i}]"
                     f".prompt is {len(shot.prompt)} characters; the maximum is {self.PROMPT_MAX}")
                )
            if customize and not shot.prompt.strip():
                problems.append(
                    (("extra_params", "multi_prompt", i, "prompt"),
                     f"{name}: multi_prompt[{i}].prompt is empty; describe the shot")
                )
        total = sum(s.seconds for s in shots)
        duration = self.requested_duration
        if customize and shots and duration is not None and abs(total - duration) > 1e-6:
            notices.append(
                f"the shots last {total:g} s in all while duration is {duration:g} s; the output "
                f"lasts duration seconds"
            )
        if customize and self.__dict__.get("prompt"):
            notices.append("prompt is ignored: per-shot prompts come from multi_prompt")

    def _prompt_required(self, mode: Mode) -> bool:
        extra = self._multi_shot()
        if extra is not None:
            return extra.effective_shot_type() == "intelligence"
        return super()._prompt_required(mode)
