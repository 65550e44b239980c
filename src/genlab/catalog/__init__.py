"""The catalog: every model's fields, limits, modes, media rules, output plans and prices,
declared once.

Everything else in genlab derives from it: client-side validation, credit estimates, widget
forms, the emulator's server-side validation and outputs, the site's model table and the
tests.

Example:
    >>> import genlab
    >>> request = genlab.validate({"model": "video-a", "prompt": "a fox", "duration": 10})
    >>> request.kind, request.mode.value, genlab.estimate_credits(request)
    ('video', 'text-to-video', 1600)
    >>> plan = plan_output(request)
    >>> plan.width, plan.height, plan.duration, plan.fps
    (1280, 720, 10.0, 24)
"""

from __future__ import annotations

from genlab.catalog._address import (
    canonical_body,
    content_address,
    media_digest,
    prompt_address,
)
from genlab.catalog._base import Adjustment, RequestBase
from genlab.catalog._delivered import delivery_mismatches
from genlab.catalog._dimensions import DEFAULT_DURATION, DEFAULT_FPS
from genlab.catalog._forms import (
    OMIT,
    FieldSpec,
    Preview,
    detect_mode,
    field_label,
    form_body,
    form_fields,
    hidden_fields,
    preview,
)
from genlab.catalog._image import ImageA, ImageB, ImageC, ImageD, ImageRequest
from genlab.catalog._inputs import media_problems_for
from genlab.catalog._media import MB, MediaRequirements, media_problems
from genlab.catalog._output import OutputPlan, output_size, plan_output
from genlab.catalog._parts import FieldBounds, ImageReference, Mode, Reference, Shot, field_bounds
from genlab.catalog._registry import (
    CATALOG,
    Checked,
    GenerationRequest,
    checked,
    declared_fields,
    estimate_credits,
    validate,
)
from genlab.catalog._result import result_of
from genlab.catalog._video import VideoA, VideoB, VideoC, VideoD, VideoE, VideoF
from genlab.catalog._video_base import VideoRequest

# The facts the media rules judge (media_problems_for, plan_output's inputs) are the measured
# facts of genlab.media, the one MediaInfo; named here too for a preflight check's imports.
from genlab.media import MediaInfo

__all__ = [
    "Adjustment",
    "CATALOG",
    "Checked",
    "DEFAULT_DURATION",
    "DEFAULT_FPS",
    "FieldBounds",
    "FieldSpec",
    "GenerationRequest",
    "ImageA",
    "ImageB",
    "ImageC",
    "ImageD",
    "ImageReference",
    "ImageRequest",
    "MB",
    "MediaInfo",
    "MediaRequirements",
    "Mode",
    "OMIT",
    "OutputPlan",
    "Preview",
    "Reference",
    "RequestBase",
    "Shot",
    "VideoA",
    "VideoB",
    "VideoC",
    "VideoD",
    "VideoE",
    "VideoF",
    "VideoRequest",
    "canonical_body",
    "checked",
    "content_address",
    "declared_fields",
    "delivery_mismatches",
    "detect_mode",
    "estimate_credits",
    "field_bounds",
    "field_label",
    "form_body",
    "form_fields",
    "hidden_fields",
    "media_digest",
    "media_problems",
    "media_problems_for",
    "output_size",
    "plan_output",
    "preview",
    "prompt_address",
    "result_of",
    "validate",
]
