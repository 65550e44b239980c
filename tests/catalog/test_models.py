"""The catalog itself: its ten models in order, each model's minimal body and example,
and the defaults that are not sent."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import CATALOG, Mode

from ._tables import (
    MINIMAL,
)

# --- the catalog itself ----------------------------------------------------------------


def test_catalog_holds_the_ten_models_of_the_interface_in_order() -> None:
    assert list(CATALOG) == [
        "video-a", "video-b", "video-c", "video-d", "video-e", "video-f",
        "image-a", "image-b", "image-c", "image-d",
    ]
    assert set(MINIMAL) == set(CATALOG)


@pytest.mark.parametrize("model", list(CATALOG))
def test_minimal_body_is_valid(model: str) -> None:
    request = genlab.validate(MINIMAL[model])
    assert isinstance(request, CATALOG[model])
    assert request.kind == ("video" if model.startswith("video-") else "image")
    assert isinstance(request.mode, Mode)
    assert request.to_body() == MINIMAL[model]
    assert genlab.validate(request) is request


@pytest.mark.parametrize("model", list(CATALOG))
def test_each_class_carries_a_valid_example(model: str) -> None:
    example = dict(CATALOG[model].EXAMPLE)
    assert example["model"] == model
    request = genlab.validate(example)
    assert request.to_body() == example
    assert request.notices == ()


# --- defaults ----------------------------------------------------------------------------

DEFAULTS: dict[str, dict[str, Any]] = {
    "video-a": {"resolution": "720P", "duration": 5, "aspect_ratio": None,
                "generate_audio": False},
    "video-b": {"resolution": "720P", "duration": 5, "aspect_ratio": "adaptive",
                "generate_audio": True},
    "video-c": {"resolution": "1080P", "duration": 5, "aspect_ratio": "16:9"},
    "video-d": {"resolution": "720P", "generate_audio": False, "character_orientation": "video"},
    "video-e": {"resolution": "720P", "duration": 5, "aspect_ratio": "16:9",
                "generate_audio": False},
    "video-f": {"resolution": "720P", "duration": 5, "aspect_ratio": "16:9",
                "generate_audio": False},
    "image-a": {"n": 1},
    "image-b": {"resolution": "1K", "aspect_ratio": None},
    "image-c": {"resolution": "1K", "aspect_ratio": None},
    "image-d": {"resolution": "1K", "aspect_ratio": None},
}


@pytest.mark.parametrize(("model", "field"), [(m, f) for m, d in DEFAULTS.items() for f in d])
def test_default(model: str, field: str) -> None:
    request = genlab.validate(MINIMAL[model])
    assert getattr(request, field) == DEFAULTS[model][field]
    assert field not in request.to_body(), "defaults are not sent"
