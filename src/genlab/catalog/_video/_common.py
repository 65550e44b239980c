"""Data the video models share: aspect bounds, image formats, role sets and frame modes."""

from __future__ import annotations

from genlab.catalog._parts import Mode

ASPECT = (1 / 2.5, 2.5)
IMAGE_FORMATS = ("jpeg", "png", "webp", "bmp", "tiff", "gif")
ALL_FRAMES = frozenset({"asset", "first_frame", "last_frame"})
ASSET = frozenset({"asset"})
ASSET_OR_EDIT = frozenset({"asset", "edit_source"})
FRAME_MODES = frozenset(
    {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.FIRST_LAST_FRAME, Mode.REFERENCE}
)
