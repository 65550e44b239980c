"""Property tests: whatever JSON arrives, ``genlab.validate`` answers with a request or with
``InvalidParameterError``, never with anything else; and what it accepts it accepts again."""

from __future__ import annotations

import copy
import typing
import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import genlab
from genlab import CATALOG, ErrorDetail, InvalidParameterError, RequestAdjustedWarning
from genlab.catalog import output_size

FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)

# Real names and values, so that many examples get past the first check.
FIELD_NAMES = sorted(
    {name for cls in CATALOG.values() for name in cls.model_fields} - {"model"}
    | {"video_mode", "keep_original_sound", "generate_bgm", "seed"}
)


def _literals(annotation: Any) -> set[str]:
    if typing.get_origin(annotation) is typing.Literal:
        return {a for a in typing.get_args(annotation) if isinstance(a, str)}
    out: set[str] = set()
    for arg in typing.get_args(annotation):
        out |= _literals(arg)
    return out


ENUM_VALUES = sorted(
    {v for cls in CATALOG.values() for f in cls.model_fields.values() for v in _literals(
        f.annotation)} - set(CATALOG)
)
GOOD_URLS = ["https://example.com/a.png", "http://example.com/b.mp4", "https://example.com/c.mp3"]
URLS = [
    *GOOD_URLS, "data:image/png;base64,AAAA", "data:video/mp4;base64,AAAA", "ftp://example.com/a",
    "", "a.png",
]
ROLES = ["asset", "first_frame", "last_frame", "edit_source", "", None, "background"]

urls = st.sampled_from(URLS)
reference_items = st.one_of(
    st.fixed_dictionaries(
        {"url": st.sampled_from(GOOD_URLS)},
        optional={"reference_type": st.sampled_from(ROLES[:3])},
    ),
    st.fixed_dictionaries(
        {"url": urls},
        optional={
            "reference_type": st.sampled_from(ROLES),
            "keep_original_sound": st.sampled_from([True, False, "yes", "no", 1, None]),
        },
    ),
    urls,
    json_values,
)
reference_lists = st.none() | st.lists(reference_items, max_size=3)
shots = st.fixed_dictionaries(
    {
        "index": st.integers(-1, 3) | json_values,
        "duration": st.sampled_from(["3", "2.5", "0", "-1", "abc", "inf", "1e999"])
        | st.integers(-2, 20)
        | st.floats(allow_nan=False)
        | json_values,
        "prompt": st.text(min_size=1, max_size=5) | json_values,
    },
    optional={"camera": json_values},
)
extra_params = st.fixed_dictionaries(
    {},
    optional={
        "multi_shot": st.booleans(),
        "shot_type": st.sampled_from(["customize", "intelligence", "auto"]),
        "multi_prompt": st.lists(shots, max_size=3) | json_values,
        "seed": st.integers(-3, 2**33),
        "watermark": st.booleans(),
        "return_last_frame": st.booleans(),
        "character_orientation": st.sampled_from(["video", "image", "side"]),
        "audio_setting": st.sampled_from(["auto", "origin", "mute"]),
        "vendor_key": json_values,
    },
)
PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "prompt": st.text(max_size=30) | st.just("a fox in snow"),
    "resolution": st.sampled_from(ENUM_VALUES),
    "aspect_ratio": st.sampled_from(ENUM_VALUES),
    "quality": st.sampled_from(ENUM_VALUES),
    "duration": st.integers(-2, 32),
    "n": st.integers(-1, 12),
    "generate_audio": st.booleans(),
    "reference_images": reference_lists,
    "reference_videos": reference_lists,
    "reference_audios": reference_lists,
    "extra_params": st.none() | extra_params,
}


def _own_values(model: str, name: str) -> list[str]:
    field = CATALOG[model].model_fields.get(name)
    return sorted(_literals(field.annotation)) if field is not None else []


@st.composite
def model_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A body with a real model and mostly its own fields, the values mostly plausible."""
    model = draw(st.sampled_from(list(CATALOG)))
    own = [name for name in CATALOG[model].model_fields if name != "model"]
    names = draw(st.lists(st.sampled_from(own), unique=True, max_size=len(own)))
    if draw(st.integers(0, 9)) == 0:  # now and then a field of another model
        names.append(draw(st.sampled_from(FIELD_NAMES)))
    request_body: dict[str, Any] = {"model": model}
    for name in names:
        values = _own_values(model, name)
        value: Any
        if draw(st.integers(0, 9)) == 0:
            value = draw(json_values)
        elif draw(st.booleans()) and values:
            value = draw(st.sampled_from(values))
        else:
            value = draw(PLAUSIBLE.get(name, json_values))
        request_body[name] = value
    return request_body


IMG = {"url": "https://example.com/a.png"}
VID = {"url": "https://example.com/b.mp4"}
SEEDS: list[dict[str, Any]] = [  # valid bodies, one or more per mode
    {"model": "video-a", "prompt": "fox", "duration": 10, "resolution": "1080P"},
    {"model": "video-a", "prompt": "fox", "reference_images": [
        {**IMG, "reference_type": "first_frame"}, {**IMG, "reference_type": "last_frame"}]},
    {"model": "video-a", "prompt": "fox", "reference_images": [IMG], "reference_videos": [VID],
     "reference_audios": [{"url": "https://example.com/c.mp3"}]},
    {"model": "video-b", "prompt": "fox", "extra_params": {"seed": 7, "return_last_frame": True}},
    {"model": "video-b", "prompt": "fox", "reference_videos": [
        {**VID, "reference_type": "edit_source"}, VID], "reference_images": [IMG]},
    {"model": "video-c", "prompt": "fox", "reference_images": [
        {**IMG, "reference_type": "first_frame"}]},
    {"model": "video-c", "prompt": "fox", "reference_videos": [
        {**VID, "reference_type": "edit_source"}], "extra_params": {"audio_setting": "origin"}},
    {"model": "video-d", "reference_images": [IMG], "reference_videos": [VID],
     "extra_params": {"character_orientation": "image"}},
    {"model": "video-e", "prompt": "fox", "reference_videos": [
        {**VID, "keep_original_sound": "yes"}], "reference_images": [IMG, IMG]},
    {"model": "video-e", "extra_params": {"multi_shot": True, "multi_prompt": [
        {"index": 0, "prompt": "a", "duration": "3"}, {"index": 1, "prompt": "b", "duration": 2}]}},
    {"model": "video-f", "prompt": "fox", "aspect_ratio": "9:16", "reference_images": [IMG] * 4},
    {"model": "video-f", "extra_params": {"multi_shot": True, "multi_prompt": [
        {"index": 0, "prompt": "a", "duration": 5}]}},
    {"model": "image-a", "prompt": "kite", "resolution": "2K", "aspect_ratio": "9:21",
     "quality": "high", "n": 3},
    {"model": "image-b", "prompt": "kite", "resolution": "4K"},
    {"model": "image-c", "prompt": "kite", "reference_images": ["https://example.com/a.png", IMG]},
    {"model": "image-d", "prompt": "kite", "resolution": "512", "aspect_ratio": "1:8"},
]


@st.composite
def mutated_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A valid body with a few fields replaced, removed or added."""
    request_body: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    model = request_body["model"]
    own = [name for name in CATALOG[model].model_fields if name != "model"]
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(own) | st.sampled_from(FIELD_NAMES))
        action = draw(st.sampled_from(["plausible", "plausible", "arbitrary", "remove"]))
        if action == "remove":
            request_body.pop(name, None)
        elif action == "arbitrary":
            request_body[name] = draw(json_values)
        else:
            values = _own_values(model, name)
            strategy: st.SearchStrategy[Any] = PLAUSIBLE.get(name, json_values)
            request_body[name] = draw(st.sampled_from(values) if values else strategy)
    return request_body


def check(request_body: Any) -> None:
    """Validate; on success the body it would send validates to the same body. The only
    warning is one RequestAdjustedWarning, given exactly when the catalog changed a value."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            request = genlab.validate(request_body)
        except InvalidParameterError as exc:
            assert caught == []
            refused(request_body, exc)
            return
    told = tuple(c.message for c in request.adjustments)
    assert [(type(w.message), getattr(w.message, "changes", None)) for w in caught] == (
        [(RequestAdjustedWarning, told)] if told else [])
    sent = request.to_body()
    again = genlab.validate(sent)  # the values sent are the model's own: nothing to change
    assert again.to_body() == sent and again.adjustments == ()
    assert again.mode is request.mode
    assert request.kind in ("video", "image")
    credits = genlab.estimate_credits(request)
    assert credits is None or (isinstance(credits, int) and credits > 0)
    width, height = output_size(request, (640, 480))
    assert width > 0 and height > 0


def refused(request_body: Any, exc: InvalidParameterError) -> None:
    """A refusal lists every problem, each naming the model."""
    assert exc.code == "INVALID_PARAMETER" and exc.status == 400
    assert exc.errors
    for detail in exc.errors:
        assert isinstance(detail, ErrorDetail)
        assert isinstance(detail.message, str) and detail.message
        assert all(isinstance(part, str | int) for part in detail.loc)
    model = request_body.get("model") if isinstance(request_body, dict) else None
    if isinstance(model, str) and model in CATALOG:
        for detail in exc.errors:
            assert model in detail.message, detail.message


@FUZZ
@given(json_values)
def test_any_json_value(value: Any) -> None:
    check(value)


@FUZZ
@given(st.dictionaries(st.text(max_size=12), json_values, max_size=6))
def test_any_json_object(value: dict[str, Any]) -> None:
    check(value)


@FUZZ
@given(st.sampled_from(list(CATALOG)), st.dictionaries(st.sampled_from(FIELD_NAMES), json_values))
def test_real_model_arbitrary_fields(model: str, fields: dict[str, Any]) -> None:
    check({**fields, "model": model})


@FUZZ
@given(model_bodies())
def test_plausible_bodies(request_body: dict[str, Any]) -> None:
    check(request_body)


@FUZZ
@given(mutated_bodies())
def test_mutated_valid_bodies(request_body: dict[str, Any]) -> None:
    check(request_body)


def test_seeds_are_valid_and_cover_every_mode() -> None:
    modes = {genlab.validate(seed, warn=False).mode for seed in SEEDS}
    assert modes == set(genlab.Mode)
