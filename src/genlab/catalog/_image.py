"""The four image models, each declared once."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from genlab.catalog._base import Problem, RequestBase
from genlab.catalog._media import MediaRequirements
from genlab.catalog._parts import ImageReference, ListRule, Mode

TEN_RATIOS = Literal["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
IMAGE_A_RATIOS = Literal[
    "1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9", "9:21"
]
IMAGE_D_RATIOS = Literal[
    "1:1",
    "2:3",
    "3:2",
    "3:4",
    "4:3",
    "4:5",
    "5:4",
    "9:16",
    "16:9",
    "21:9",
    "1:4",
    "1:8",
    "4:1",
    "8:1",
]
# Formats of image references are not shown by the interface; these are the common web ones.
_REFERENCE = MediaRequirements("image", ("jpeg", "png", "webp"), allow_data_uri=True)


def image_prompt(max_length: int) -> Any:
    return Field(
        "",
        strict=True,
        max_length=max_length,
        description=f"What to draw. Up to {max_length} characters. English or Chinese.",
    )


def image_refs(max_items: int) -> Any:
    return Field(
        None,
        max_length=max_items,
        description=f"At most {max_items} reference images (URLs or objects with url); "
        "when given, the mode is image-to-image / style reference.",
    )


def aspect_field() -> Any:
    return Field(
        None,
        description="Output aspect ratio. When omitted: follows the reference images, else 1:1.",
    )


class ImageRequest(RequestBase):
    """Base of the image request classes.

    Example:
        >>> from genlab.catalog import CATALOG
        >>> sorted(name for name, cls in CATALOG.items() if issubclass(cls, ImageRequest))
        ['image-a', 'image-b', 'image-c', 'image-d']
    """

    KIND: ClassVar[Literal["video", "image"]] = "image"
    MODES: ClassVar[frozenset[Mode]] = frozenset({Mode.TEXT_TO_IMAGE, Mode.IMAGE_TO_IMAGE})
    LIST_RULES: ClassVar[dict[str, ListRule]] = {
        "reference_images": ListRule(roles=frozenset({"asset"}))
    }
    MEDIA: ClassVar[dict[str, MediaRequirements]] = {"reference_images": _REFERENCE}
    DEFAULT_ASPECT: ClassVar[str] = "1:1"

    def _detect_mode(self) -> Mode:
        return Mode.IMAGE_TO_IMAGE if self.references("reference_images") else Mode.TEXT_TO_IMAGE

    @property
    def image_count(self) -> int:
        """How many images one call produces."""
        return 1


class ImageA(ImageRequest):
    """image-a: resolution tiers 1K/2K/4K and three quality tiers; 1 to 10 images per call.

    Example:
        >>> ImageA(model="image-a", prompt="a lighthouse", resolution="2K",
        ...        aspect_ratio="16:9", quality="high", n=2).image_count
        2
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "image-a",
        "prompt": "A watercolor map of an imaginary island",
        "resolution": "1K",
        "aspect_ratio": "4:3",
        "quality": "medium",
    }

    SUMMARY: ClassVar[str] = "Resolution tiers 1K/2K/4K, three quality tiers."
    PROMPT_MAX: ClassVar[int | None] = 32000

    model: Literal["image-a"]
    prompt: str = image_prompt(32000)
    resolution: Literal["1K", "2K", "4K"] = Field(description="Required: 1K, 2K or 4K.")
    aspect_ratio: IMAGE_A_RATIOS = Field(description="Required.")
    quality: Literal["low", "medium", "high"] = Field(
        description="Required. Changes detail and cost, not dimensions: low is fastest."
    )
    n: int = Field(1, strict=True, ge=1, le=10, description="Images per call, 1 to 10. Default 1.")
    reference_images: list[str | ImageReference] | None = image_refs(3)

    @property
    def image_count(self) -> int:
        return self.n


class ImageB(ImageRequest):
    """image-b: fast and low-cost, 1K only (other resolutions are downgraded to 1K).

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "image-b", "prompt": "a fox"})
        >>> type(request).__name__, request.kind, request.resolution
        ('ImageB', 'image', '1K')
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "image-b",
        "prompt": "A minimalist poster of a bicycle",
    }

    SUMMARY: ClassVar[str] = "Fast, low-cost; 1K only."
    PROMPT_MAX: ClassVar[int | None] = 6000

    model: Literal["image-b"]
    prompt: str = image_prompt(6000)
    resolution: str = Field(
        "1K", strict=True, description="1K only; any other value is downgraded to 1K."
    )
    aspect_ratio: TEN_RATIOS | None = aspect_field()
    reference_images: list[str | ImageReference] | None = image_refs(3)

    def _extra_rules(self, mode: Mode, problems: list[Problem], notices: list[str]) -> None:
        if self.resolution != "1K":
            # "1K only; other values are downgraded": sent as 1K, and the person is told.
            self._adjust(notices, "resolution", self.resolution, "1K",
                         f"{self.model_name} makes 1K only")
            self.resolution = "1K"


class ImageC(ImageRequest):
    """image-c: up to 4K, up to 14 reference images.

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "image-c", "prompt": "a fox"})
        >>> type(request).__name__, request.resolution
        ('ImageC', '1K')
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "image-c",
        "prompt": "A cozy reading nook with afternoon light",
    }

    SUMMARY: ClassVar[str] = "Up to 4K, up to 14 reference images."
    PROMPT_MAX: ClassVar[int | None] = 6000

    model: Literal["image-c"]
    prompt: str = image_prompt(6000)
    resolution: Literal["1K", "2K", "4K"] = Field("1K", description="Default 1K.")
    aspect_ratio: TEN_RATIOS | None = aspect_field()
    reference_images: list[str | ImageReference] | None = image_refs(14)


class ImageD(ImageRequest):
    """image-d: 14 aspect ratios, tiers 512 to 4K (512 is the cheap preview tier).

    Example:
        >>> from genlab.catalog import validate
        >>> request = validate({"model": "image-d", "prompt": "a fox", "resolution": "512"})
        >>> type(request).__name__, request.resolution
        ('ImageD', '512')
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {
        "model": "image-d",
        "prompt": "A preview sketch of a robot gardener",
        "resolution": "512",
    }

    SUMMARY: ClassVar[str] = "14 aspect ratios; resolution tiers 512 to 4K; up to 14 references."
    PROMPT_MAX: ClassVar[int | None] = 6000

    model: Literal["image-d"]
    prompt: str = image_prompt(6000)
    resolution: Literal["512", "1K", "2K", "4K"] = Field(
        "1K", description="Default 1K. 512 is the fastest, cheapest preview tier."
    )
    aspect_ratio: IMAGE_D_RATIOS | None = aspect_field()
    reference_images: list[str | ImageReference] | None = image_refs(14)

