"""Form specs, form bodies and previews: what a form reads from the catalog, without widgets."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import genlab
from genlab.catalog import (
    CATALOG,
    OMIT,
    Mode,
    RequestBase,
    detect_mode,
    form_body,
    form_fields,
    hidden_fields,
    preview,
)

MODELS = list(CATALOG)


def _bounds(cls: type[RequestBase], name: str) -> tuple[Any, Any, Any]:
    low = high = items = None
    for meta in cls.model_fields[name].metadata:
        low = getattr(meta, "ge", low)
        high = getattr(meta, "le", high)
        items = getattr(meta, "max_length", items)
    return low, high, items


@pytest.mark.parametrize("model", MODELS)
def test_every_field_but_model_has_a_spec_in_order(model: str) -> None:
    cls = CATALOG[model]
    assert [s.name for s in form_fields(cls)] == [n for n in cls.model_fields if n != "model"]


@pytest.mark.parametrize("model", MODELS)
def test_specs_carry_the_catalogs_constraints(model: str) -> None:
    cls = CATALOG[model]
    for spec in form_fields(cls):
        info = cls.model_fields[spec.name]
        assert spec.description == (info.description or "")
        assert spec.required == info.is_required()
        low, high, items = _bounds(cls, spec.name)
        if spec.kind == "enum":
            assert set(spec.choices) <= set(_literals(info.annotation))
            assert spec.choices
        elif spec.kind == "int":
            assert (spec.min, spec.max) == (low, high)
            assert spec.default == info.default
        elif spec.kind == "prompt":
            assert spec.max == (cls.PROMPT_MAX if cls.PROMPT_MAX is not None else items)
        elif spec.kind == "references":
            rule, media = cls.LIST_RULES[spec.name], cls.MEDIA[spec.name]
            assert spec.max_items == items
            assert set(spec.roles) == set(rule.roles)
            assert spec.allow_data_uri == media.allow_data_uri
            assert spec.media == media.describe()
        elif spec.kind == "extra":
            (extra_cls,) = [a for a in typing.get_args(info.annotation) if a is not type(None)]
            assert [s.name for s in spec.fields] == list(extra_cls.model_fields)


def _literals(annotation: Any) -> list[Any]:
    out = []
    for arg in typing.get_args(annotation) or ():
        out += _literals(arg) if typing.get_args(arg) else [arg]
    return out or [annotation]


@pytest.mark.parametrize(
    ("model", "field", "omittable"),
    [
        ("video-a", "aspect_ratio", True),
        ("image-b", "aspect_ratio", True),
        ("image-d", "aspect_ratio", True),
        ("video-c", "aspect_ratio", False),  # has a default: 16:9
        ("image-a", "aspect_ratio", False),  # required
    ],
)
def test_optional_fields_without_default_are_omittable(
    model: str, field: str, omittable: bool
) -> None:
    (spec,) = [s for s in form_fields(CATALOG[model]) if s.name == field]
    assert spec.omittable is omittable


def test_extra_params_specs_name_the_vendor_keys() -> None:
    def keys(model: str) -> dict[str, str]:
        (extra,) = [s for s in form_fields(CATALOG[model]) if s.kind == "extra"]
        return {s.name: s.kind for s in extra.fields}

    assert keys("video-b") == {"seed": "int", "watermark": "bool", "return_last_frame": "bool"}
    assert keys("video-c") == {"audio_setting": "enum"}
    assert keys("video-e") == {"multi_shot": "bool", "shot_type": "enum", "multi_prompt": "shots"}


def test_reference_items_options_come_from_the_item_class() -> None:
    (videos,) = [s for s in form_fields(CATALOG["video-e"]) if s.name == "reference_videos"]
    (option,) = videos.fields
    assert option.name == "keep_original_sound"
    assert set(option.choices) == {True, False, "yes", "no"}


@pytest.mark.parametrize("model", MODELS)
def test_the_example_survives_a_round_trip_through_form_values(model: str) -> None:
    cls = CATALOG[model]
    values = {k: v for k, v in cls.EXAMPLE.items() if k != "model"}
    body = form_body(cls, values)
    checked = preview(body)
    assert checked.valid, checked.errors
    expected = genlab.validate(cls.EXAMPLE)
    for name in values:
        assert getattr(checked.request, name) == getattr(expected, name)


def test_form_body_leaves_out_defaults_omitted_values_and_empty_lists() -> None:
    body = form_body(
        CATALOG["video-a"],
        {
            "prompt": "a fox",
            "resolution": "720P",  # the default
            "duration": 10,
            "aspect_ratio": OMIT,
            "generate_audio": False,  # the default
            "reference_images": [],
        },
    )
    assert body == {"model": "video-a", "prompt": "a fox", "duration": 10}


def test_form_body_numbers_shots_and_drops_an_untouched_extra() -> None:
    cls = CATALOG["video-f"]
    untouched = {"multi_shot": False, "shot_type": OMIT, "multi_prompt": OMIT}
    assert "extra_params" not in form_body(cls, {"prompt": "x", "extra_params": untouched})
    shots = [{"prompt": "a", "duration": 2}, {"prompt": "b", "duration": 3}]
    body = form_body(cls, {"extra_params": {"multi_shot": True, "multi_prompt": shots}})
    assert body["extra_params"] == {
        "multi_shot": True,
        "multi_prompt": [
            {"prompt": "a", "duration": 2, "index": 0},
            {"prompt": "b", "duration": 3, "index": 1},
        ],
    }
    assert preview(body).mode is Mode.MULTI_SHOT


def test_form_body_drops_fields_the_mode_refuses() -> None:
    cls = CATALOG["video-c"]
    frame = [{"url": "https://example.com/a.png", "reference_type": "first_frame"}]
    body = form_body(cls, {"prompt": "x", "aspect_ratio": "9:16", "reference_images": frame})
    assert "aspect_ratio" not in body
    assert preview(body).valid
    assert form_body(cls, {"prompt": "x", "aspect_ratio": "9:16"})["aspect_ratio"] == "9:16"


def test_hidden_fields_name_the_reason() -> None:
    hidden = hidden_fields(CATALOG["video-c"], Mode.VIDEO_EDIT)
    assert set(hidden) == {"aspect_ratio", "duration"}
    assert "follows the original video" in hidden["aspect_ratio"]
    ignored = hidden_fields(CATALOG["video-e"], Mode.VIDEO_EDIT)
    assert ignored["duration"].startswith("ignored in video edit mode")
    assert hidden_fields(CATALOG["video-a"], None) == {}


def test_preview_of_a_valid_body() -> None:
    checked = preview({"model": "video-a", "prompt": "a fox", "duration": 5})
    assert checked.valid and checked.request is not None
    assert checked.mode is Mode.TEXT_TO_VIDEO
    assert (checked.credits, checked.credits_text) == (800, "800 credits")
    assert checked.errors == []
    unpriced = preview({"model": "video-b", "prompt": "waves"})
    assert unpriced.valid and unpriced.credits_text == "price not published"


def test_preview_of_an_invalid_body_still_knows_the_mode() -> None:
    body = {
        "model": "video-a",
        "prompt": "x",
        "reference_images": [{"url": "https://example.com/b.png", "reference_type": "last_frame"}],
    }
    checked = preview(body)
    assert not checked.valid and checked.request is None
    assert checked.mode is Mode.FIRST_LAST_FRAME
    assert checked.mode.label == "image-to-video, first and last frame"
    assert checked.messages_for("reference_images") == [
        "video-a: a last_frame requires a first_frame"
    ]
    assert checked.credits is None and checked.credits_text == ""


def test_preview_mode_of_an_invalid_multi_shot_body() -> None:
    body = {"model": "video-e", "extra_params": {"multi_shot": True, "shot_type": "customize"}}
    checked = preview(body)
    assert not checked.valid
    assert checked.mode is Mode.MULTI_SHOT
    assert any("at least one shot" in m for m in checked.messages_for("extra_params"))


def test_omit_survives_copies() -> None:
    import copy
    import pickle

    assert copy.deepcopy(OMIT) is OMIT and pickle.loads(pickle.dumps(OMIT)) is OMIT


def test_detect_mode_tolerates_broken_items() -> None:
    cls = CATALOG["video-c"]
    broken = {"reference_images": [{"url": 3, "reference_type": "first_frame"}, "junk", None]}
    assert detect_mode(cls, broken) in set(Mode)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                   max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from([*MODELS, "nope", 3, None]),
    fields=st.dictionaries(
        st.sampled_from(
            ["prompt", "duration", "resolution", "aspect_ratio", "reference_images",
             "reference_videos", "extra_params", "n", "other"]
        ),
        json_values,
        max_size=4,
    ),
)
def test_preview_never_raises(model: Any, fields: dict[str, Any]) -> None:
    checked = preview({"model": model, **fields})
    assert checked.valid == (checked.request is not None)
    assert checked.valid or checked.errors


@settings(max_examples=100, deadline=None)
@given(model=st.sampled_from(MODELS), values=st.dictionaries(
    st.sampled_from(["prompt", "duration", "reference_images", "extra_params", "x"]),
    json_values, max_size=4))
def test_form_body_and_preview_never_raise(model: str, values: dict[str, Any]) -> None:
    body = form_body(CATALOG[model], values)
    assert body["model"] == model
    preview(body)


@pytest.mark.parametrize("junk", [None, [], "video-a", 3, {"model": []}])
def test_preview_of_non_bodies(junk: Any) -> None:
    checked = preview(junk)
    assert not checked.valid and checked.errors and checked.mode is None
