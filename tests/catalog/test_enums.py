"""Enumerated fields: accepted values per model and field, values from elsewhere, image-a's
required fields and n, image-b's resolution downgrade."""

from __future__ import annotations

import typing
from typing import Any

import pytest

import genlab
from genlab import CATALOG

from ._tables import (
    ENUMS,
    MINIMAL,
    body,
    errors_of,
    notices_text,
    rejected,
)

# --- enums -------------------------------------------------------------------------------

FOREIGN = {  # a value some other model accepts, or a near miss, that this field refuses
    ("video-a", "resolution"): "2K",
    ("video-a", "aspect_ratio"): "21:9",
    ("video-b", "resolution"): "1080P",
    ("video-b", "aspect_ratio"): "2:3",
    ("video-c", "resolution"): "480P",
    ("video-c", "aspect_ratio"): "adaptive",
    ("video-d", "resolution"): "480P",
    ("video-e", "resolution"): "480P",
    ("video-e", "aspect_ratio"): "4:3",
    ("video-f", "resolution"): "480P",
    ("video-f", "aspect_ratio"): "21:9",
    ("image-a", "resolution"): "512",
    ("image-a", "aspect_ratio"): "1:4",
    ("image-a", "quality"): "ultra",
    ("image-b", "aspect_ratio"): "9:21",
    ("image-c", "resolution"): "512",
    ("image-c", "aspect_ratio"): "9:21",
    ("image-d", "resolution"): "720P",
    ("image-d", "aspect_ratio"): "9:21",
}


def _literal_values(annotation: Any) -> set[Any] | None:
    if typing.get_origin(annotation) is typing.Literal:
        return set(typing.get_args(annotation))
    values: set[Any] = set()
    for arg in typing.get_args(annotation):
        if arg is type(None):
            continue
        inner = _literal_values(arg)
        if inner is None:
            return None
        values |= inner
    return values or None


def test_enum_tables_cover_every_enumerated_field_of_the_catalog() -> None:
    found = {}
    for model, cls in CATALOG.items():
        for name, field in cls.model_fields.items():
            values = _literal_values(field.annotation)
            if name != "model" and values is not None:
                found[model, name] = values
    assert found == {key: set(values) for key, values in ENUMS.items()}
    assert set(FOREIGN) == set(ENUMS)


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [(model, field, value) for (model, field), values in ENUMS.items() for value in values],
)
def test_enum_value_is_accepted(model: str, field: str, value: str) -> None:
    request = genlab.validate(body(model, **{field: value}))
    assert request.to_body()[field] == value


@pytest.mark.parametrize(("model", "field"), FOREIGN)
def test_enum_value_from_elsewhere_is_rejected(model: str, field: str) -> None:
    value = FOREIGN[model, field]
    errors = errors_of(body(model, **{field: value}))
    assert [e.loc for e in errors] == [(field,)]
    message = errors[0].message
    assert message.startswith(f"{model}: {field} must be one of ")
    assert f"(got {value!r})" in message
    assert repr(ENUMS[model, field][0]) in message


@pytest.mark.parametrize(("model", "field"), FOREIGN)
def test_enum_values_are_strings_only(model: str, field: str) -> None:
    rejected(body(model, **{field: 1}), model, field)


@pytest.mark.parametrize("field", ["resolution", "aspect_ratio", "quality"])
def test_image_a_requires_resolution_aspect_ratio_and_quality(field: str) -> None:
    request_body = dict(MINIMAL["image-a"])
    del request_body[field]
    errors = errors_of(request_body)
    assert [e.loc for e in errors] == [(field,)]
    assert errors[0].message.startswith(f"image-a: {field} is required; choose one of ")


def test_image_a_lists_every_missing_field_at_once() -> None:
    errors = errors_of({"model": "image-a", "prompt": "a kite"})
    assert [e.loc for e in errors] == [("resolution",), ("aspect_ratio",), ("quality",)]


@pytest.mark.parametrize(("value", "accepted"), [(0, False), (1, True), (10, True), (11, False)])
def test_image_a_n_bounds(value: int, accepted: bool) -> None:
    request_body = body("image-a", n=value)
    if accepted:
        request = genlab.validate(request_body)
        assert request.image_count == value  # type: ignore[attr-defined]
    else:
        errors = errors_of(request_body)
        assert [e.message for e in errors] == [f"image-a: n must be from 1 to 10 (got {value})"]


def test_image_a_n_defaults_to_1() -> None:
    request = genlab.validate(MINIMAL["image-a"])
    assert request.n == 1  # type: ignore[attr-defined]
    assert "n" not in request.to_body()


@pytest.mark.parametrize("value", [True, "2", 2.0])
def test_image_a_n_is_strictly_an_integer(value: Any) -> None:
    rejected(body("image-a", n=value), "image-a: n must be an integer")


@pytest.mark.parametrize("model", [m for m in CATALOG if m != "image-a"])
def test_n_and_quality_belong_to_image_a_only(model: str) -> None:
    rejected(body(model, n=2), model, "n is not accepted by")
    rejected(body(model, quality="high"), model, "quality is not accepted by")


@pytest.mark.parametrize(("resolution", "said"), [
    ("2K", "2K"), ("4K", "4K"), ("512", "512"), ("8K", "8K"), ("", "''"),
    ("whatever", "whatever"), ("two words", "'two words'"),
])
def test_image_b_downgrades_any_resolution_to_1k_and_says_so(resolution: str, said: str) -> None:
    with pytest.warns(genlab.RequestAdjustedWarning) as caught:
        request = genlab.validate(body("image-b", resolution=resolution))
    assert request.to_body()["resolution"] == "1K"
    assert f"resolution: asked {said}; image-b makes 1K only" in notices_text(request)
    (warning,) = caught
    assert str(warning.message) == (
        f"image-b: resolution {said} is sent as 1K (image-b makes 1K only)")


def test_image_b_1k_is_not_a_downgrade() -> None:
    request = genlab.validate(body("image-b", resolution="1K"))
    assert request.notices == ()
    assert request.to_body()["resolution"] == "1K"


def test_image_b_resolution_must_be_a_string() -> None:
    rejected(body("image-b", resolution=1024), "image-b", "resolution must be a string")
