"""The catalog against the service interface (../shared/spec/service-interface.md).

Every table here is copied from the interface or from docs/spec-decisions.md, not read back
from the catalog, so a test fails when the catalog drifts from the interface. Where a table
must cover the whole catalog, a test checks that it does (adding a model without adding its
rows here fails).
"""

from __future__ import annotations

import typing
from typing import Any

import pytest

import genlab
from genlab import CATALOG, ErrorDetail, InvalidParameterError, Mode
from genlab.catalog import MediaInfo, RequestBase, media_problems_for, output_size

IMG = "https://example.com/cat.png"
VID = "https://example.com/dance.mp4"
AUD = "https://example.com/voice.mp3"
DATA_IMG = "data:image/png;base64,iVBORw0KGgo="
MB = 1024 * 1024


def img(role: str | None = None, url: str = IMG) -> dict[str, Any]:
    return {"url": url} if role is None else {"url": url, "reference_type": role}


def vid(role: str | None = None, url: str = VID, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"url": url}
    if role is not None:
        item["reference_type"] = role
    return {**item, **extra}


def aud(role: str | None = None, url: str = AUD) -> dict[str, Any]:
    return {"url": url} if role is None else {"url": url, "reference_type": role}


# The smallest valid body of each model.
MINIMAL: dict[str, dict[str, Any]] = {
    "video-a": {"model": "video-a", "prompt": "a fox in snow"},
    "video-b": {"model": "video-b", "prompt": "a fox in snow"},
    "video-c": {"model": "video-c", "prompt": "a fox in snow"},
    "video-d": {"model": "video-d", "reference_images": [img()], "reference_videos": [vid()]},
    "video-e": {"model": "video-e", "prompt": "a fox in snow"},
    "video-f": {"model": "video-f", "prompt": "a fox in snow"},
    "image-a": {
        "model": "image-a", "prompt": "a kite", "resolution": "1K", "aspect_ratio": "1:1",
        "quality": "low",
    },
    "image-b": {"model": "image-b", "prompt": "a kite"},
    "image-c": {"model": "image-c", "prompt": "a kite"},
    "image-d": {"model": "image-d", "prompt": "a kite"},
}
VIDEO_MODELS = [m for m in MINIMAL if m.startswith("video-")]
IMAGE_MODELS = [m for m in MINIMAL if m.startswith("image-")]


def body(model: str, **fields: Any) -> dict[str, Any]:
    """The model's minimal body with ``fields`` added or replaced."""
    return {**MINIMAL[model], **fields}


def errors_of(request_body: Any) -> list[ErrorDetail]:
    with pytest.raises(InvalidParameterError) as caught:
        genlab.validate(request_body)
    exc = caught.value
    assert exc.code == "INVALID_PARAMETER"
    assert exc.status == 400
    assert exc.errors, "an InvalidParameterError must list its problems"
    return exc.errors


def rejected(request_body: Any, *words: str) -> str:
    """Assert the body is refused and every word appears in one of the messages."""
    errors = errors_of(request_body)
    text = "\n".join(e.message for e in errors)
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    return text


def notices_text(request: RequestBase) -> str:
    return "\n".join(request.notices)


def multi_shot(*durations: Any, **extra: Any) -> dict[str, Any]:
    shots = [
        {"index": i, "prompt": f"shot {i}", "duration": d} for i, d in enumerate(durations)
    ]
    return {"multi_shot": True, "multi_prompt": shots, **extra}


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


# --- duration ------------------------------------------------------------------------

DURATION = {  # Limits > Duration
    "video-a": (2, 30),
    "video-b": (4, 15),
    "video-c": (3, 15),
    "video-e": (3, 15),
    "video-f": (3, 15),
}
NO_DURATION = ["video-d", *IMAGE_MODELS]


def test_duration_table_covers_catalog() -> None:
    assert set(DURATION) | set(NO_DURATION) == set(CATALOG)


@pytest.mark.parametrize(
    ("model", "value", "accepted"),
    [
        case
        for model, (low, high) in DURATION.items()
        for case in [
            (model, low - 1, False), (model, low, True), (model, high, True),
            (model, high + 1, False), (model, -1, False), (model, 0, False),
        ]
    ],
)
def test_duration_bounds(model: str, value: int, accepted: bool) -> None:
    request_body = body(model, duration=value)
    if accepted:
        request = genlab.validate(request_body)
        assert request.to_body()["duration"] == value
    else:
        low, high = DURATION[model]
        errors = errors_of(request_body)
        assert [e.loc for e in errors] == [("duration",)]
        assert errors[0].message == (
            f"{model}: duration must be from {low} to {high} (got {value})"
        )


@pytest.mark.parametrize("model", list(DURATION))
def test_duration_defaults_to_5(model: str) -> None:
    request = genlab.validate(MINIMAL[model])
    assert request.duration == 5  # type: ignore[attr-defined]
    assert "duration" not in request.to_body()


@pytest.mark.parametrize("model", list(DURATION))
@pytest.mark.parametrize("value", ["5", 5.0, True, None, [5]])
def test_duration_must_be_an_integer(model: str, value: Any) -> None:
    errors = errors_of(body(model, duration=value))
    assert [e.loc for e in errors] == [("duration",)]
    assert errors[0].message.startswith(f"{model}: duration must be an integer")
    assert repr(value) in errors[0].message


@pytest.mark.parametrize("model", NO_DURATION)
def test_duration_not_accepted(model: str) -> None:
    rejected(body(model, duration=5), model, "duration is not accepted by")


# --- prompt ----------------------------------------------------------------------------

PROMPT_MAX = {  # Limits > Prompt length; video-b has no hard maximum
    "video-a": 20000,
    "video-c": 5000,
    "video-d": 2500,
    "video-e": 2500,
    "video-f": 2500,
    "image-a": 32000,
    "image-b": 6000,
    "image-c": 6000,
    "image-d": 6000,
}


def test_prompt_table_covers_catalog() -> None:
    assert set(PROMPT_MAX) | {"video-b"} == set(CATALOG)


@pytest.mark.parametrize(("model", "limit"), PROMPT_MAX.items())
def test_prompt_at_maximum_is_accepted(model: str, limit: int) -> None:
    request = genlab.validate(body(model, prompt="x" * limit))
    assert len(request.to_body()["prompt"]) == limit


@pytest.mark.parametrize(("model", "limit"), PROMPT_MAX.items())
def test_prompt_over_maximum_is_rejected(model: str, limit: int) -> None:
    errors = errors_of(body(model, prompt="x" * (limit + 1)))
    assert [e.loc for e in errors] == [("prompt",)]
    assert errors[0].message == (
        f"{model}: prompt is {limit + 1} characters; the maximum is {limit}"
    )


def test_video_b_prompt_has_no_hard_maximum() -> None:
    genlab.validate(body("video-b", prompt="x" * 100_000))


def test_video_f_prompt_over_2500_is_the_interfaces_example() -> None:
    rejected(body("video-f", prompt="y" * 2501), "video-f", "prompt", "2501", "2500")


@pytest.mark.parametrize("model", list(CATALOG))
@pytest.mark.parametrize("value", [5, None, ["a"], {"text": "a"}])
def test_prompt_must_be_a_string(model: str, value: Any) -> None:
    rejected(body(model, prompt=value), model, "prompt must be a string")


@pytest.mark.parametrize(
    "request_body",
    [
        {"model": "video-a"},
        body("video-a", prompt=""),
        body("video-a", prompt="", reference_images=[img("first_frame")]),
        body("video-a", prompt="", reference_images=[img()]),
    ],
)
def test_video_a_always_needs_a_prompt(request_body: dict[str, Any]) -> None:
    errors = errors_of(request_body)
    assert [e.loc for e in errors] == [("prompt",)]
    assert errors[0].message.startswith("video-a: prompt ")


def test_video_a_one_character_prompt_is_enough() -> None:
    genlab.validate(body("video-a", prompt="x"))


@pytest.mark.parametrize(
    "request_body",
    [
        {"model": "video-e"},
        body("video-e", prompt=""),
        body("video-e", prompt="", reference_images=[img("first_frame")]),
        body("video-e", prompt="", reference_images=[img()]),
        body("video-e", prompt="", reference_videos=[vid("edit_source")]),
        body("video-e", prompt="", extra_params={"multi_shot": True}),
        body("video-e", prompt="", extra_params={"multi_shot": True, "shot_type": "intelligence"}),
    ],
)
def test_video_e_needs_a_prompt_unless_customized_multi_shot(
    request_body: dict[str, Any],
) -> None:
    errors = errors_of(request_body)
    assert [e.loc for e in errors] == [("prompt",)]
    assert errors[0].message.startswith("video-e: prompt is required")


def test_video_e_customized_multi_shot_needs_no_prompt() -> None:
    request = genlab.validate({"model": "video-e", "extra_params": multi_shot("3", "2")})
    assert request.mode is Mode.MULTI_SHOT


def test_video_d_never_needs_a_prompt() -> None:
    request = genlab.validate(MINIMAL["video-d"])
    assert "prompt" not in request.to_body()
    genlab.validate(body("video-d", prompt=""))


@pytest.mark.parametrize("model", ["video-b", "video-c", "video-f", *IMAGE_MODELS])
@pytest.mark.parametrize("prompt", [None, ""])
def test_text_only_modes_need_a_prompt(model: str, prompt: str | None) -> None:
    request_body = body(model)
    if prompt is None:
        del request_body["prompt"]
    else:
        request_body["prompt"] = prompt
    errors = errors_of(request_body)
    mode = "text-to-video" if model.startswith("video-") else "text-to-image"
    assert [e.loc for e in errors] == [("prompt",)]
    assert errors[0].message == (
        f"{model}: prompt is required in {mode} mode; describe what to generate"
    )


@pytest.mark.parametrize(
    "request_body",
    [
        body("video-b", prompt="", reference_images=[img("first_frame")]),
        body("video-b", prompt="", reference_images=[img()]),
        body("video-b", prompt="", reference_videos=[vid("edit_source")]),
        body("video-c", prompt="", reference_images=[img("first_frame")]),
        body("video-c", prompt="", reference_images=[img()]),
        body("video-c", prompt="", reference_videos=[vid("edit_source")]),
        body("video-f", prompt="", reference_images=[img("first_frame"), img("last_frame")]),
        body("video-f", prompt="", extra_params=multi_shot("5")),
        *[body(m, prompt="", reference_images=[IMG]) for m in IMAGE_MODELS],
    ],
)
def test_prompt_may_be_empty_when_there_is_something_else(request_body: dict[str, Any]) -> None:
    genlab.validate(request_body)


# --- reference lists ---------------------------------------------------------------------

LISTS = ("reference_images", "reference_videos", "reference_audios")
REF_MAX = {  # Limits > Number of reference items
    ("video-a", "reference_images"): 10,
    ("video-a", "reference_videos"): 5,
    ("video-a", "reference_audios"): 5,
    ("video-b", "reference_images"): 9,
    ("video-b", "reference_videos"): 3,
    ("video-b", "reference_audios"): 3,
    ("video-c", "reference_images"): 9,
    ("video-c", "reference_videos"): 1,
    ("video-d", "reference_images"): 1,
    ("video-d", "reference_videos"): 1,
    ("video-e", "reference_images"): 7,
    ("video-e", "reference_videos"): 1,
    ("video-f", "reference_images"): 4,
    ("image-a", "reference_images"): 3,
    ("image-b", "reference_images"): 3,
    ("image-c", "reference_images"): 14,
    ("image-d", "reference_images"): 14,
}
NOT_ACCEPTED_LISTS = [
    (model, name) for model in CATALOG for name in LISTS if (model, name) not in REF_MAX
]


@pytest.mark.parametrize("model", list(CATALOG))
def test_reference_table_matches_the_catalogs_fields(model: str) -> None:
    fields = {name for name in CATALOG[model].model_fields if name in LISTS}
    assert fields == {name for (m, name) in REF_MAX if m == model}


def refs_body(model: str, list_name: str, count: int) -> dict[str, Any]:
    make = {"reference_images": img, "reference_videos": vid, "reference_audios": aud}[list_name]
    items: list[Any] = [make() for _ in range(count)]
    if model.startswith("image-"):
        items = [IMG] * count
    request_body = body(model, **{list_name: items})
    if list_name == "reference_audios":
        request_body["reference_images"] = [img()]  # audio cannot come alone
    return request_body


@pytest.mark.parametrize(("model", "list_name"), REF_MAX)
def test_reference_list_at_maximum_is_accepted(model: str, list_name: str) -> None:
    limit = REF_MAX[model, list_name]
    request = genlab.validate(refs_body(model, list_name, limit))
    assert len(request.to_body()[list_name]) == limit


@pytest.mark.parametrize(("model", "list_name"), REF_MAX)
def test_reference_list_over_maximum_is_rejected(model: str, list_name: str) -> None:
    limit = REF_MAX[model, list_name]
    errors = errors_of(refs_body(model, list_name, limit + 1))
    assert [e.loc for e in errors] == [(list_name,)]
    assert errors[0].message == (
        f"{model}: {list_name} has {limit + 1} items; at most {limit} are accepted"
    )


def test_video_e_more_than_one_video_is_the_interfaces_example() -> None:
    rejected(body("video-e", reference_videos=[vid(), vid()]), "video-e", "reference_videos")


@pytest.mark.parametrize(("model", "list_name"), NOT_ACCEPTED_LISTS)
def test_reference_list_the_model_does_not_take(model: str, list_name: str) -> None:
    request_body = body(model, **{list_name: [{"url": AUD}]})
    errors = errors_of(request_body)
    assert [e.loc for e in errors] == [(list_name,)]
    assert errors[0].message.startswith(f"{model}: {list_name} is not accepted by {model}")


@pytest.mark.parametrize(("model", "list_name"), [k for k in REF_MAX if k[0] != "video-d"])
@pytest.mark.parametrize("empty", [None, []])
def test_null_or_empty_list_means_none(model: str, list_name: str, empty: Any) -> None:
    request = genlab.validate(body(model, **{list_name: empty}))
    assert request.mode in (Mode.TEXT_TO_VIDEO, Mode.TEXT_TO_IMAGE)
    assert request.to_body()[list_name] == empty


# --- enums -------------------------------------------------------------------------------

TEN_RATIOS = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
ENUMS: dict[tuple[str, str], list[str]] = {
    ("video-a", "resolution"): ["480P", "720P", "1080P"],
    ("video-a", "aspect_ratio"): ["16:9", "9:16", "1:1", "4:3", "3:4"],
    ("video-b", "resolution"): ["480P", "720P"],
    ("video-b", "aspect_ratio"): ["16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"],
    ("video-c", "resolution"): ["720P", "1080P"],
    ("video-c", "aspect_ratio"): ["16:9", "9:16", "1:1", "4:3", "3:4"],
    ("video-d", "resolution"): ["720P", "1080P"],
    ("video-e", "resolution"): ["720P", "1080P"],
    ("video-e", "aspect_ratio"): ["16:9", "9:16", "1:1"],
    ("video-f", "resolution"): ["720P", "1080P"],
    ("video-f", "aspect_ratio"): ["16:9", "9:16", "1:1"],
    ("image-a", "resolution"): ["1K", "2K", "4K"],
    ("image-a", "aspect_ratio"): [*TEN_RATIOS, "9:21"],
    ("image-a", "quality"): ["low", "medium", "high"],
    ("image-b", "aspect_ratio"): TEN_RATIOS,
    ("image-c", "resolution"): ["1K", "2K", "4K"],
    ("image-c", "aspect_ratio"): TEN_RATIOS,
    ("image-d", "resolution"): ["512", "1K", "2K", "4K"],
    ("image-d", "aspect_ratio"): [*TEN_RATIOS, "1:4", "1:8", "4:1", "8:1"],
}
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


@pytest.mark.parametrize("resolution", ["2K", "4K", "512", "8K", "", "whatever"])
def test_image_b_downgrades_any_resolution_to_1k(resolution: str) -> None:
    request = genlab.validate(body("image-b", resolution=resolution))
    assert request.to_body()["resolution"] == "1K"
    assert "downgraded to 1K" in notices_text(request)
    assert repr(resolution) in notices_text(request)


def test_image_b_1k_is_not_a_downgrade() -> None:
    request = genlab.validate(body("image-b", resolution="1K"))
    assert request.notices == ()
    assert request.to_body()["resolution"] == "1K"


def test_image_b_resolution_must_be_a_string() -> None:
    rejected(body("image-b", resolution=1024), "image-b", "resolution must be a string")


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


# --- modes -------------------------------------------------------------------------------

SUPPORTED_MODES = {
    "video-a": {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.FIRST_LAST_FRAME, Mode.REFERENCE},
    "video-b": {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.FIRST_LAST_FRAME, Mode.REFERENCE,
                Mode.VIDEO_EDIT},
    "video-c": {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.REFERENCE, Mode.VIDEO_EDIT},
    "video-d": {Mode.MOTION_CONTROL},
    "video-e": {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.FIRST_LAST_FRAME, Mode.REFERENCE,
                Mode.VIDEO_EDIT, Mode.MULTI_SHOT},
    "video-f": {Mode.TEXT_TO_VIDEO, Mode.FIRST_FRAME, Mode.FIRST_LAST_FRAME, Mode.REFERENCE,
                Mode.MULTI_SHOT},
    **{m: {Mode.TEXT_TO_IMAGE, Mode.IMAGE_TO_IMAGE} for m in IMAGE_MODELS},
}
FIRST = [img("first_frame")]
FIRST_LAST = [img("first_frame"), img("last_frame")]
MODE_CASES: list[tuple[dict[str, Any], Mode]] = [
    (body("video-a"), Mode.TEXT_TO_VIDEO),
    (body("video-a", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-a", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-a", reference_images=[img(), img("asset")], reference_videos=[vid()],
          reference_audios=[aud()]), Mode.REFERENCE),
    (body("video-a", reference_videos=[vid()]), Mode.REFERENCE),
    (body("video-a", reference_videos=[vid()], reference_audios=[aud()]), Mode.REFERENCE),
    (body("video-b"), Mode.TEXT_TO_VIDEO),
    (body("video-b", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-b", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-b", reference_images=[img()] * 9), Mode.REFERENCE),
    (body("video-b", reference_images=[img()], reference_videos=[vid()] * 3,
          reference_audios=[aud()] * 3), Mode.REFERENCE),
    (body("video-b", reference_videos=[vid("edit_source")]), Mode.VIDEO_EDIT),
    (body("video-b", reference_videos=[vid(), vid("edit_source"), vid()],
          reference_images=[img()], reference_audios=[aud()], duration=10,
          aspect_ratio="21:9"), Mode.VIDEO_EDIT),
    (body("video-c"), Mode.TEXT_TO_VIDEO),
    (body("video-c", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-c", reference_images=[img()] * 9, aspect_ratio="9:16"), Mode.REFERENCE),
    (body("video-c", reference_videos=[vid("edit_source")]), Mode.VIDEO_EDIT),
    (body("video-c", reference_videos=[vid("edit_source")], reference_images=[img()] * 5,
          extra_params={"audio_setting": "origin"}), Mode.VIDEO_EDIT),
    (body("video-d"), Mode.MOTION_CONTROL),
    (body("video-d", prompt="she dances", resolution="1080P", generate_audio=True,
          extra_params={"character_orientation": "image"}), Mode.MOTION_CONTROL),
    (body("video-e"), Mode.TEXT_TO_VIDEO),
    (body("video-e", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-e", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-e", reference_images=[img()] * 7), Mode.REFERENCE),
    (body("video-e", reference_videos=[vid()], reference_images=[img()] * 4), Mode.REFERENCE),
    (body("video-e", reference_videos=[vid("edit_source")]), Mode.VIDEO_EDIT),
    (body("video-e", reference_videos=[vid("edit_source")], reference_images=[img()] * 4),
     Mode.VIDEO_EDIT),
    ({"model": "video-e", "extra_params": multi_shot("3", 2)}, Mode.MULTI_SHOT),
    (body("video-e", extra_params={"multi_shot": True}), Mode.MULTI_SHOT),
    (body("video-f"), Mode.TEXT_TO_VIDEO),
    (body("video-f", reference_images=FIRST), Mode.FIRST_FRAME),
    (body("video-f", reference_images=FIRST_LAST), Mode.FIRST_LAST_FRAME),
    (body("video-f", reference_images=[img()] * 4), Mode.REFERENCE),
    ({"model": "video-f", "extra_params": multi_shot("2.5", "2.5")}, Mode.MULTI_SHOT),
    (body("video-f", reference_images=FIRST, extra_params=multi_shot(5)), Mode.MULTI_SHOT),
    *[
        case
        for m in IMAGE_MODELS
        for case in [
            (body(m), Mode.TEXT_TO_IMAGE),
            (body(m, reference_images=[IMG]), Mode.IMAGE_TO_IMAGE),
            (body(m, reference_images=[{"url": IMG}, DATA_IMG]), Mode.IMAGE_TO_IMAGE),
        ]
    ],
]


def test_mode_cases_cover_every_mode_of_every_model() -> None:
    covered: dict[str, set[Mode]] = {}
    for request_body, mode in MODE_CASES:
        covered.setdefault(request_body["model"], set()).add(mode)
    assert covered == SUPPORTED_MODES
    assert set().union(*SUPPORTED_MODES.values()) == set(Mode)


@pytest.mark.parametrize(("request_body", "mode"), MODE_CASES)
def test_mode(request_body: dict[str, Any], mode: Mode) -> None:
    request = genlab.validate(request_body)
    assert request.mode is mode
    assert request.kind == ("video" if request_body["model"].startswith("video-") else "image")


@pytest.mark.parametrize(("request_body", "mode"), MODE_CASES)
def test_to_body_round_trips(request_body: dict[str, Any], mode: Mode) -> None:
    sent = genlab.validate(request_body).to_body()
    assert set(sent) == set(request_body), "to_body sends exactly the given fields"
    again = genlab.validate(sent)
    assert again.to_body() == sent
    assert again.mode is mode


def test_mode_is_a_str_enum_with_labels() -> None:
    assert Mode("first-last-frame") is Mode.FIRST_LAST_FRAME
    assert str(Mode.FIRST_LAST_FRAME) == "first-last-frame"
    assert Mode.FIRST_LAST_FRAME.label == "image-to-video, first and last frame"
    assert Mode.TEXT_TO_VIDEO.label == "text-to-video"
    assert Mode.MOTION_CONTROL.label == "motion control"
    labels = [m.label for m in Mode]
    assert all(labels) and len(set(labels)) == len(labels)


@pytest.mark.parametrize(
    ("request_body", "words"),
    [
        (body("video-a", reference_videos=[vid("edit_source")]),
         ["video-a", "does not support video edit"]),
        (body("video-c", reference_images=FIRST_LAST), ["video-c", "last_frame"]),
        (body("video-f", reference_videos=[vid("edit_source")]),
         ["video-f", "reference_videos is not accepted"]),
        (body("video-d", reference_images=[img("first_frame")]),
         ["video-d", "first_frame", "use one of asset"]),
    ],
)
def test_unsupported_mode_is_rejected(request_body: dict[str, Any], words: list[str]) -> None:
    rejected(request_body, *words)


# --- reference_type roles ----------------------------------------------------------------

ROLES = ("asset", "first_frame", "last_frame", "edit_source")
ACCEPTED_ROLES = {  # Endpoints, per model and list
    ("video-a", "reference_images"): {"asset", "first_frame", "last_frame"},
    ("video-a", "reference_videos"): {"asset"},
    ("video-a", "reference_audios"): {"asset"},
    ("video-b", "reference_images"): {"asset", "first_frame", "last_frame"},
    ("video-b", "reference_videos"): {"asset", "edit_source"},
    ("video-b", "reference_audios"): {"asset"},
    ("video-c", "reference_images"): {"asset", "first_frame"},
    ("video-c", "reference_videos"): {"asset", "edit_source"},
    ("video-d", "reference_images"): {"asset"},
    ("video-d", "reference_videos"): {"asset"},
    ("video-e", "reference_images"): {"asset", "first_frame", "last_frame"},
    ("video-e", "reference_videos"): {"asset", "edit_source"},
    ("video-f", "reference_images"): {"asset", "first_frame", "last_frame"},
}


def test_role_table_covers_every_video_list() -> None:
    assert set(ACCEPTED_ROLES) == {k for k in REF_MAX if k[0].startswith("video-")}


def _takes_first_frame(model: str, list_name: str) -> bool:
    return "first_frame" in ACCEPTED_ROLES.get((model, list_name), set())


def role_body(model: str, list_name: str, role: str | None) -> dict[str, Any]:
    """A body whose one item of ``list_name`` has ``role``, otherwise valid."""
    url = {"reference_images": IMG, "reference_videos": VID, "reference_audios": AUD}[list_name]
    item: dict[str, Any] = {"url": url, "reference_type": role}
    if role == "last_frame" and _takes_first_frame(model, list_name):
        return body(model, reference_images=[img("first_frame"), item])
    request_body = body(model, **{list_name: [item]})
    if list_name == "reference_audios":
        request_body["reference_images"] = [img()]
    return request_body


@pytest.mark.parametrize(
    ("model", "list_name", "role"),
    [(m, name, role) for (m, name), roles in ACCEPTED_ROLES.items() for role in sorted(roles)],
)
def test_accepted_role(model: str, list_name: str, role: str) -> None:
    request = genlab.validate(role_body(model, list_name, role))
    ignored_video = model == "video-c" and list_name == "reference_videos" and role == "asset"
    assert (request.notices != ()) is ignored_video


@pytest.mark.parametrize(
    ("model", "list_name", "role"),
    [
        (m, name, role)
        for (m, name), roles in ACCEPTED_ROLES.items()
        for role in ROLES
        if role not in roles
    ],
)
def test_known_role_the_list_does_not_take_is_rejected(
    model: str, list_name: str, role: str
) -> None:
    errors = errors_of(role_body(model, list_name, role))
    allowed = ", ".join(sorted(ACCEPTED_ROLES[model, list_name]))
    i = 1 if role == "last_frame" and _takes_first_frame(model, list_name) else 0
    assert (
        f"{model}: {list_name}[{i}].reference_type {role!r} is not accepted in {list_name}; "
        f"use one of {allowed}"
    ) in [e.message for e in errors]


@pytest.mark.parametrize(
    ("model", "list_name"), [k for k in ACCEPTED_ROLES if k[0] != "video-a"]
)
def test_unknown_role_is_rejected_outside_video_a(model: str, list_name: str) -> None:
    errors = errors_of(role_body(model, list_name, "background"))
    assert [e.loc for e in errors] == [(list_name, 0, "reference_type")]
    assert "'background'" in errors[0].message
    assert "use one of " + ", ".join(sorted(ACCEPTED_ROLES[model, list_name])) in (
        errors[0].message
    )


@pytest.mark.parametrize("list_name", ["reference_images", "reference_videos", "reference_audios"])
def test_video_a_unknown_role_becomes_asset_with_a_notice(list_name: str) -> None:
    request = genlab.validate(role_body("video-a", list_name, "background"))
    assert request.mode is Mode.REFERENCE
    sent = request.to_body()
    assert sent[list_name][0]["reference_type"] == "asset"
    assert f"{list_name}[0].reference_type 'background' is unknown; treated as asset" in (
        request.notices
    )
    assert genlab.validate(sent).notices == ()


@pytest.mark.parametrize(("model", "list_name"), ACCEPTED_ROLES)
@pytest.mark.parametrize("role", [None, ""])
def test_null_and_empty_role_mean_asset(model: str, list_name: str, role: str | None) -> None:
    request = genlab.validate(role_body(model, list_name, role))
    assert request.mode in (Mode.REFERENCE, Mode.MOTION_CONTROL, Mode.TEXT_TO_VIDEO)
    assert request.to_body()[list_name][0]["reference_type"] == role


@pytest.mark.parametrize("role", [1, True, ["asset"]])
def test_role_must_be_a_string(role: Any) -> None:
    rejected(body("video-b", reference_images=[img(role)]), "video-b", "reference_type")


# --- combination rules -------------------------------------------------------------------

FRAME_MODELS = ["video-a", "video-b", "video-e", "video-f"]


@pytest.mark.parametrize("model", [*FRAME_MODELS, "video-c"])
def test_frames_cannot_be_mixed_with_asset_images(model: str) -> None:
    errors = errors_of(body(model, reference_images=[img("first_frame"), img()]))
    assert [e.loc for e in errors] == [("reference_images",)]
    assert errors[0].message.startswith(f"{model}: frame inputs (first_frame, last_frame) "
                                        "cannot be mixed with asset references")


@pytest.mark.parametrize("model", ["video-a", "video-b"])
@pytest.mark.parametrize(
    "extra",
    [{"reference_videos": [vid()]}, {"reference_audios": [aud()]}],
    ids=["asset-video", "audio"],
)
def test_frames_cannot_be_mixed_with_asset_videos_or_audios(
    model: str, extra: dict[str, Any]
) -> None:
    rejected(body(model, reference_images=FIRST_LAST, **extra), model, "cannot be mixed")


@pytest.mark.parametrize("model", FRAME_MODELS)
def test_last_frame_needs_a_first_frame(model: str) -> None:
    errors = errors_of(body(model, reference_images=[img("last_frame")]))
    assert [e.message for e in errors] == [f"{model}: a last_frame requires a first_frame"]


@pytest.mark.parametrize("model", [*FRAME_MODELS, "video-c"])
def test_one_first_frame_only(model: str) -> None:
    rejected(
        body(model, reference_images=[img("first_frame"), img("first_frame")]),
        model, "one first_frame",
    )


@pytest.mark.parametrize("model", FRAME_MODELS)
def test_one_last_frame_only(model: str) -> None:
    rejected(
        body(model, reference_images=[img("first_frame"), img("last_frame"), img("last_frame")]),
        model, "one last_frame",
    )


@pytest.mark.parametrize("model", ["video-a", "video-b"])
def test_audio_cannot_come_alone(model: str) -> None:
    errors = errors_of(body(model, reference_audios=[aud()]))
    assert [e.loc for e in errors] == [("reference_audios",)]
    assert errors[0].message == (
        f"{model}: reference_audios need at least one reference image or reference video"
    )


@pytest.mark.parametrize("model", ["video-a", "video-b"])
@pytest.mark.parametrize("companion", ["reference_images", "reference_videos"])
def test_audio_with_an_asset_image_or_video_is_accepted(model: str, companion: str) -> None:
    item = img() if companion == "reference_images" else vid()
    request = genlab.validate(body(model, reference_audios=[aud()], **{companion: [item]}))
    assert request.mode is Mode.REFERENCE


@pytest.mark.parametrize("model", ["video-b", "video-c", "video-e"])
def test_frames_cannot_be_combined_with_editing(model: str) -> None:
    rejected(
        body(model, reference_images=FIRST, reference_videos=[vid("edit_source")]),
        model, "cannot be combined with video editing",
    )


def test_video_b_only_one_video_to_edit() -> None:
    rejected(
        body("video-b", reference_videos=[vid("edit_source"), vid("edit_source")]),
        "video-b: only one video can be marked edit_source",
    )


# video-c ---------------------------------------------------------------------------------

VIDEO_C_FF = body("video-c", reference_images=FIRST)
VIDEO_C_REF = body("video-c", reference_images=[img(), img()])
VIDEO_C_EDIT = body("video-c", reference_videos=[vid("edit_source")])


def test_video_c_aspect_ratio_in_first_frame_mode_is_the_interfaces_example() -> None:
    errors = errors_of({**VIDEO_C_FF, "aspect_ratio": "16:9"})
    assert [e.loc for e in errors] == [("aspect_ratio",)]
    assert errors[0].message.startswith(
        "video-c: aspect_ratio is not accepted in image-to-video, first frame mode "
        "(the output follows the first frame)"
    )


@pytest.mark.parametrize(
    ("request_body", "aspect_ok", "duration_ok"),
    [
        (body("video-c"), True, True),
        (VIDEO_C_REF, True, True),
        (VIDEO_C_FF, False, True),
        (VIDEO_C_EDIT, False, False),
    ],
    ids=["text-to-video", "reference", "first-frame", "video-edit"],
)
def test_video_c_aspect_ratio_and_duration_per_mode(
    request_body: dict[str, Any], aspect_ok: bool, duration_ok: bool
) -> None:
    for field, value, ok in (("aspect_ratio", "9:16", aspect_ok), ("duration", 8, duration_ok)):
        with_field = {**request_body, field: value}
        if ok:
            assert genlab.validate(with_field).to_body()[field] == value
        else:
            errors = errors_of(with_field)
            assert [e.loc for e in errors] == [(field,)]
            assert errors[0].message.startswith(f"video-c: {field} is not accepted in ")
            assert errors[0].message.endswith("; remove it")


def test_video_c_edit_lists_aspect_ratio_and_duration_together() -> None:
    errors = errors_of({**VIDEO_C_EDIT, "aspect_ratio": "1:1", "duration": 5})
    assert [e.loc for e in errors] == [("aspect_ratio",), ("duration",)]


@pytest.mark.parametrize(("count", "accepted"), [(n, n <= 5) for n in range(7)])
def test_video_c_edit_takes_0_to_5_asset_images(count: int, accepted: bool) -> None:
    request_body = {**VIDEO_C_EDIT, "reference_images": [img()] * count}
    if accepted:
        assert genlab.validate(request_body).mode is Mode.VIDEO_EDIT
    else:
        rejected(request_body, "video-c: at most 5 asset images may accompany a reference video")


@pytest.mark.parametrize(
    ("images", "mode"),
    [([], Mode.TEXT_TO_VIDEO), (FIRST, Mode.FIRST_FRAME), ([img()] * 9, Mode.REFERENCE)],
)
def test_video_c_asset_videos_are_ignored(images: list[Any], mode: Mode) -> None:
    request = genlab.validate(body("video-c", reference_images=images, reference_videos=[vid()]))
    assert request.mode is mode
    assert "asset reference_videos are ignored and do not trigger editing" in request.notices


@pytest.mark.parametrize("value", ["auto", "origin"])
def test_video_c_audio_setting(value: str) -> None:
    assert genlab.validate({**VIDEO_C_EDIT, "extra_params": {"audio_setting": value}}).notices == ()
    request = genlab.validate(body("video-c", extra_params={"audio_setting": value}))
    assert "only takes effect in video-edit mode" in notices_text(request)


def test_video_c_audio_setting_enum() -> None:
    rejected(
        {**VIDEO_C_EDIT, "extra_params": {"audio_setting": "mute"}},
        "video-c", "extra_params.audio_setting", "'mute'",
    )


# video-d ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("images", "videos"),
    [(0, 0), (1, 0), (0, 1)],
)
def test_video_d_needs_exactly_one_image_and_one_video(images: int, videos: int) -> None:
    request_body: dict[str, Any] = {"model": "video-d", "prompt": "dance"}
    if images:
        request_body["reference_images"] = [img()] * images
    if videos:
        request_body["reference_videos"] = [vid()] * videos
    text = rejected(request_body, "video-d", "exactly 1 reference image")
    assert f"got {images} image(s) and {videos} video(s)" in text


@pytest.mark.parametrize(
    "field", ["duration", "aspect_ratio", "reference_audios", "video_mode"]
)
def test_video_d_does_not_take(field: str) -> None:
    rejected(body("video-d", **{field: 5}), "video-d", f"{field} is not accepted by video-d")


@pytest.mark.parametrize("orientation", ["video", "image"])
def test_video_d_character_orientation(orientation: str) -> None:
    request = genlab.validate(
        body("video-d", extra_params={"character_orientation": orientation})
    )
    assert request.character_orientation == orientation  # type: ignore[attr-defined]


def test_video_d_character_orientation_enum() -> None:
    rejected(
        body("video-d", extra_params={"character_orientation": "side"}),
        "video-d", "extra_params.character_orientation", "'side'",
    )


# video-e ---------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["asset", "edit_source"])
@pytest.mark.parametrize(("count", "accepted"), [(0, True), (4, True), (5, False)])
def test_video_e_up_to_4_asset_images_with_a_video(role: str, count: int, accepted: bool) -> None:
    request_body = body("video-e", reference_videos=[vid(role)], reference_images=[img()] * count)
    if accepted:
        genlab.validate(request_body)
    else:
        errors = errors_of(request_body)
        assert [e.message for e in errors] == [
            "video-e: at most 4 asset images may accompany a reference video; got 5"
        ]


@pytest.mark.parametrize("role", ["asset", "edit_source"])
@pytest.mark.parametrize("images", [FIRST, FIRST_LAST], ids=["first", "first-last"])
def test_video_e_frames_cannot_come_with_a_video(role: str, images: list[Any]) -> None:
    rejected(
        body("video-e", reference_videos=[vid(role)], reference_images=images),
        "video-e", "first_frame/last_frame cannot be combined with",
    )


def test_video_e_edit_ignores_duration_and_bills_on_the_input() -> None:
    request = genlab.validate(body("video-e", reference_videos=[vid("edit_source")], duration=9))
    assert request.mode is Mode.VIDEO_EDIT
    assert "duration is ignored in video edit mode" in notices_text(request)
    assert request.to_body()["duration"] == 9
    assert request.billed_seconds(7.6) == 8  # type: ignore[attr-defined]
    assert request.billed_seconds(7.4) == 7  # type: ignore[attr-defined]
    assert request.billed_seconds() is None  # type: ignore[attr-defined]
    assert genlab.estimate_credits(request, input_video_seconds=7.6) is None


def test_video_e_audio_has_no_effect_with_a_video() -> None:
    with_video = genlab.validate(body("video-e", generate_audio=True, reference_videos=[vid()]))
    assert not with_video.generates_audio  # type: ignore[attr-defined]
    alone = genlab.validate(body("video-e", generate_audio=True))
    assert alone.generates_audio  # type: ignore[attr-defined]
    edit = genlab.validate(
        body("video-e", generate_audio=True, reference_videos=[vid("edit_source")])
    )
    assert "generate_audio is ignored in video edit mode" in notices_text(edit)


@pytest.mark.parametrize("value", [True, False, "yes", "no", None])
def test_video_e_keep_original_sound_on_the_video_item(value: Any) -> None:
    sent = genlab.validate(
        body("video-e", reference_videos=[vid("edit_source", keep_original_sound=value)])
    ).to_body()
    assert sent["reference_videos"][0]["keep_original_sound"] == value
    assert genlab.validate(sent).to_body() == sent


@pytest.mark.parametrize("value", [1, 0, "true", "maybe", ["yes"]])
def test_video_e_keep_original_sound_values(value: Any) -> None:
    errors = errors_of(body("video-e", reference_videos=[vid(keep_original_sound=value)]))
    assert [e.loc for e in errors] == [("reference_videos", 0, "keep_original_sound")]
    assert errors[0].message == (
        "video-e: reference_videos[0].keep_original_sound must be true, false, 'yes' or 'no' "
        f"(got {value!r})"
    )


@pytest.mark.parametrize(
    "request_body",
    [
        body("video-e", keep_original_sound=True),
        body("video-e", reference_images=[img(), {"url": IMG, "keep_original_sound": True}]),
        body("video-b", reference_videos=[vid(keep_original_sound=True)]),
    ],
    ids=["top-level", "image-item", "other-model"],
)
def test_keep_original_sound_only_on_video_e_videos(request_body: dict[str, Any]) -> None:
    rejected(request_body, request_body["model"], "keep_original_sound")


# multi-shot ------------------------------------------------------------------------------

MULTI_SHOT_MODELS = ["video-e", "video-f"]


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_multi_shot_defaults_to_customize_with_multi_prompt(model: str) -> None:
    request = genlab.validate({"model": model, "duration": 5, "extra_params": multi_shot("3", 2)})
    assert request.mode is Mode.MULTI_SHOT
    assert request.mode.label == "multi-shot"
    assert request.notices == ()
    sent = request.to_body()
    assert [s["duration"] for s in sent["extra_params"]["multi_prompt"]] == ["3", "2"]
    assert "shot_type" not in sent["extra_params"]


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_multi_shot_defaults_to_intelligence_without_multi_prompt(model: str) -> None:
    assert genlab.validate(
        body(model, extra_params={"multi_shot": True})
    ).mode is Mode.MULTI_SHOT
    rejected(
        {"model": model, "extra_params": {"multi_shot": True}}, model, "prompt is required"
    )


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
@pytest.mark.parametrize("shots", [None, []], ids=["omitted", "empty"])
def test_customize_needs_shots(model: str, shots: list[Any] | None) -> None:
    extra: dict[str, Any] = {"multi_shot": True, "shot_type": "customize"}
    if shots is not None:
        extra["multi_prompt"] = shots
    errors = errors_of(body(model, extra_params=extra))
    assert [e.loc for e in errors] == [("extra_params", "multi_prompt")]
    assert errors[0].message.startswith(f"{model}: multi-shot with shot_type 'customize' needs")


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_shot_indexes_are_unique(model: str) -> None:
    extra = multi_shot("2", "3")
    extra["multi_prompt"][1]["index"] = 0
    rejected(body(model, extra_params=extra), model, "shot indexes must be unique", "[0, 0]")


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
@pytest.mark.parametrize(
    ("duration", "sent"),
    [("3", "3"), (3, "3"), (2.5, "2.5"), ("2.5", "2.5"), ("03", "3"), (3.0, "3")],
)
def test_shot_duration_is_a_number_of_seconds(model: str, duration: Any, sent: str) -> None:
    request = genlab.validate(body(model, extra_params=multi_shot(duration)))
    assert request.to_body()["extra_params"]["multi_prompt"][0]["duration"] == sent


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
@pytest.mark.parametrize("duration", [0, -1, "0", "-2", "abc", "", "inf", "nan", True, None, [3]])
def test_shot_duration_must_be_positive_seconds(model: str, duration: Any) -> None:
    errors = errors_of(body(model, extra_params=multi_shot(duration)))
    assert [e.loc for e in errors] == [("extra_params", "multi_prompt", 0, "duration")]
    message = errors[0].message
    assert message.startswith(f"{model}: extra_params.multi_prompt[0].duration")
    assert "number of seconds" in message
    assert repr(duration) in message
    assert "{" not in message.replace(repr(duration), "")


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_shot_durations_differing_from_duration_give_a_notice(model: str) -> None:
    request = genlab.validate(body(model, duration=10, extra_params=multi_shot("3", "4")))
    assert "the shots last 7 s in all while duration is 10 s" in notices_text(request)
    request = genlab.validate(body(model, duration=7, extra_params=multi_shot("3", "4")))
    assert "the shots last" not in notices_text(request)


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_customize_ignores_the_prompt_with_a_notice(model: str) -> None:
    request = genlab.validate(body(model, extra_params=multi_shot("5")))
    assert "prompt is ignored" in notices_text(request)


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_shot_prompts(model: str) -> None:
    extra = multi_shot("5")
    extra["multi_prompt"][0]["prompt"] = ""
    rejected(body(model, extra_params=extra), model, "multi_prompt[0].prompt is empty")
    extra["multi_prompt"][0]["prompt"] = "z" * 2501
    rejected(body(model, extra_params=extra), model, "multi_prompt[0].prompt", "2500")


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
@pytest.mark.parametrize(
    ("key", "value"),
    [("multi_shot", "true"), ("multi_shot", 1), ("shot_type", "auto"), ("multi_prompt", "x")],
)
def test_multi_shot_key_types(model: str, key: str, value: Any) -> None:
    extra = {**multi_shot("5"), key: value}
    rejected(body(model, extra_params=extra), model, f"extra_params.{key}")


def test_multi_shot_cannot_edit_a_video() -> None:
    errors = errors_of(
        body("video-e", reference_videos=[vid("edit_source")], extra_params=multi_shot("5"))
    )
    assert [e.loc for e in errors] == [("extra_params", "multi_shot")]
    assert errors[0].message.startswith(
        "video-e: multi-shot cannot be combined with video editing"
    )


@pytest.mark.parametrize("model", MULTI_SHOT_MODELS)
def test_multi_prompt_without_multi_shot_is_ignored(model: str) -> None:
    extra = {**multi_shot("5"), "multi_shot": False}
    request = genlab.validate(body(model, extra_params=extra))
    assert request.mode is Mode.TEXT_TO_VIDEO
    assert "multi_prompt is ignored" in notices_text(request)


# --- extra_params ------------------------------------------------------------------------

EXTRA_PARAMS_MODELS = ["video-b", "video-c", "video-d", "video-e", "video-f"]


def test_extra_params_models_match_the_catalog() -> None:
    assert [m for m, cls in CATALOG.items() if "extra_params" in cls.model_fields] == (
        EXTRA_PARAMS_MODELS
    )


@pytest.mark.parametrize("model", EXTRA_PARAMS_MODELS)
def test_unknown_extra_params_keys_pass_through(model: str) -> None:
    extra = {"vendor_flag": True, "nested": {"a": [1, 2.5, None, "x"]}, "cfg": 7.5}
    request = genlab.validate(body(model, extra_params=extra))
    assert request.to_body()["extra_params"] == extra


@pytest.mark.parametrize("model", EXTRA_PARAMS_MODELS)
@pytest.mark.parametrize("value", [[], "seed=1", 5])
def test_extra_params_must_be_an_object(model: str, value: Any) -> None:
    errors = errors_of(body(model, extra_params=value))
    assert [e.loc for e in errors] == [("extra_params",)]
    assert errors[0].message.startswith(f"{model}: extra_params must be an object")


@pytest.mark.parametrize(
    ("seed", "accepted"),
    [(-2, False), (-1, True), (0, True), (2**32 - 1, True), (2**32, False)],
)
def test_video_b_seed_bounds(seed: int, accepted: bool) -> None:
    request_body = body("video-b", extra_params={"seed": seed})
    if accepted:
        assert genlab.validate(request_body).to_body()["extra_params"] == {"seed": seed}
    else:
        errors = errors_of(request_body)
        assert [e.loc for e in errors] == [("extra_params", "seed")]
        assert errors[0].message.startswith("video-b: extra_params.seed must be ")
        assert f"(got {seed})" in errors[0].message


@pytest.mark.parametrize(
    ("key", "value"),
    [("seed", "7"), ("seed", 7.0), ("seed", True), ("watermark", 1), ("watermark", "yes"),
     ("return_last_frame", 0), ("return_last_frame", "false")],
)
def test_video_b_extension_parameter_types(key: str, value: Any) -> None:
    rejected(body("video-b", extra_params={key: value}), "video-b", f"extra_params.{key}")


def test_video_b_extension_parameters() -> None:
    extra = {"seed": 42, "watermark": True, "return_last_frame": True}
    request = genlab.validate(body("video-b", extra_params=extra))
    assert request.to_body()["extra_params"] == extra
    assert request.wants_last_frame  # type: ignore[attr-defined]
    assert not genlab.validate(MINIMAL["video-b"]).wants_last_frame  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("field", "value"),
    [("video_mode", "edit"), ("keep_original_sound", True), ("generate_bgm", True),
     ("extra_params", {}), ("extra_params", None), ("extra_params", {"seed": 1})],
)
def test_video_a_refuses_fields_it_must_not_receive(field: str, value: Any) -> None:
    errors = errors_of(body("video-a", **{field: value}))
    assert [e.loc for e in errors] == [(field,)]
    assert errors[0].message.startswith("video-a: ")
    assert field in errors[0].message.removeprefix("video-a: ")
    assert errors[0].message.endswith(f"remove {field}")


FOREIGN_FIELDS = [  # (model, a field some other model takes)
    ("video-b", "n"), ("video-c", "generate_audio"), ("video-c", "reference_audios"),
    ("video-e", "reference_audios"), ("video-e", "seed"), ("video-f", "reference_videos"),
    ("image-a", "duration"), ("image-a", "extra_params"), ("image-b", "quality"),
    ("image-b", "generate_audio"), ("image-c", "quality"), ("image-c", "reference_videos"),
    ("image-d", "quality"), ("image-d", "n"), ("video-a", "watermark"),
]


@pytest.mark.parametrize(("model", "field"), FOREIGN_FIELDS)
def test_fields_of_other_models_are_refused(model: str, field: str) -> None:
    errors = errors_of(body(model, **{field: True}))
    assert [e.loc for e in errors] == [(field,)]
    assert errors[0].message.startswith(f"{model}: {field} is not accepted by {model}; it accepts")


# --- strict types ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model", [m for m, cls in CATALOG.items() if "generate_audio" in cls.model_fields]
)
@pytest.mark.parametrize("value", [1, 0, "true", None])
def test_generate_audio_is_strictly_a_bool(model: str, value: Any) -> None:
    errors = errors_of(body(model, generate_audio=value))
    assert [e.message for e in errors] == [
        f"{model}: generate_audio must be true or false (got {value!r})"
    ]


@pytest.mark.parametrize(
    "model", [m for m, cls in CATALOG.items() if "generate_audio" in cls.model_fields]
)
@pytest.mark.parametrize("value", [True, False])
def test_generate_audio_accepts_bools(model: str, value: bool) -> None:
    assert genlab.validate(body(model, generate_audio=value)).to_body()["generate_audio"] is value


# --- URLs and data URIs ------------------------------------------------------------------

DATA_VID = "data:video/mp4;base64,AAAA"
DATA_AUD = "data:audio/mpeg;base64,AAAA"
URL_CASES = [
    # (model, list, url, accepted)
    ("video-a", "reference_images", DATA_IMG, True),
    ("video-c", "reference_images", DATA_IMG, True),
    ("video-b", "reference_images", DATA_IMG, False),
    ("video-d", "reference_images", DATA_IMG, False),
    ("video-e", "reference_images", DATA_IMG, False),
    ("video-f", "reference_images", DATA_IMG, False),
    ("video-a", "reference_videos", DATA_VID, False),
    ("video-a", "reference_videos", DATA_IMG, False),
    ("video-b", "reference_videos", DATA_VID, False),
    ("video-c", "reference_videos", DATA_VID, False),
    ("video-d", "reference_videos", DATA_VID, False),
    ("video-e", "reference_videos", DATA_VID, False),
    ("video-a", "reference_audios", DATA_AUD, False),
    ("video-b", "reference_audios", DATA_AUD, False),
    ("video-a", "reference_images", "data:text/plain;base64,AAAA", False),
    ("video-a", "reference_images", "ftp://example.com/a.png", False),
    ("video-b", "reference_videos", "/tmp/a.mp4", False),
    ("video-e", "reference_videos", "example.com/a.mp4", False),
    ("video-a", "reference_images", "http://example.com/a.png", True),
    ("video-b", "reference_videos", "HTTPS://EXAMPLE.COM/A.MP4", True),
    *[(m, "reference_images", DATA_IMG, True) for m in IMAGE_MODELS],
    *[(m, "reference_images", "data:text/plain;base64,AA", False) for m in IMAGE_MODELS],
    *[(m, "reference_images", "file:///tmp/a.png", False) for m in IMAGE_MODELS],
]


@pytest.mark.parametrize(("model", "list_name", "url", "accepted"), URL_CASES)
def test_reference_url(model: str, list_name: str, url: str, accepted: bool) -> None:
    items: list[Any] = [url if model.startswith("image-") else {"url": url}]
    request_body = body(model, **{list_name: items})
    if list_name == "reference_audios":
        request_body["reference_images"] = [img()]
    if accepted:
        genlab.validate(request_body)
    else:
        errors = errors_of(request_body)
        assert [e.loc for e in errors] == [(list_name, 0, "url")]
        assert errors[0].message.startswith(f"{model}: {list_name}[0].url ")


@pytest.mark.parametrize("model", IMAGE_MODELS)
def test_image_reference_items_are_urls_or_objects_with_url(model: str) -> None:
    items = [IMG, {"url": IMG}, {"url": DATA_IMG, "weight": 0.5, "note": "style"}]
    sent = genlab.validate(body(model, reference_images=items)).to_body()
    assert sent["reference_images"] == items


@pytest.mark.parametrize("model", IMAGE_MODELS)
@pytest.mark.parametrize("item", [5, None, {"uri": IMG}, {"url": 5}, [IMG], {"url": ""}])
def test_bad_image_reference_item(model: str, item: Any) -> None:
    errors = errors_of(body(model, reference_images=[IMG, item]))
    assert [e.loc for e in errors] == [("reference_images", 1)]
    assert errors[0].message == (
        f"{model}: reference_images[1] must be a URL string or an object with a url string "
        f"(got {item!r})"
    )


@pytest.mark.parametrize("model", VIDEO_MODELS)
def test_video_reference_items_are_objects(model: str) -> None:
    rejected(body(model, reference_images=[IMG]), model, "reference_images[0] must be an object")
    rejected(
        body(model, reference_images=[{"url": IMG, "weight": 1}]),
        model, "reference_images[0].weight is not a known key",
    )
    rejected(body(model, reference_images=[{"reference_type": "asset"}]), model, "url")


# --- unreadable bodies -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_body", "words"),
    [
        ({}, ["model is required", "video-a", "image-d"]),
        ({"prompt": "x"}, ["model is required"]),
        ({"model": "video-z", "prompt": "x"}, ["'video-z' is unknown", "video-a"]),
        ({"model": None}, ["model"]),
        ({"model": 5}, ["model"]),
        ([], ["JSON object"]),
        ("video-a", ["JSON object"]),
        (None, ["JSON object"]),
    ],
)
def test_unreadable_bodies(request_body: Any, words: list[str]) -> None:
    rejected(request_body, *words)


# --- error reporting ---------------------------------------------------------------------


def test_several_field_problems_are_listed_at_once() -> None:
    with pytest.raises(InvalidParameterError) as caught:
        genlab.validate(
            body("video-a", resolution="4K", duration=31, generate_audio="yes", extra_params={})
        )
    exc = caught.value
    assert [e.loc for e in exc.errors] == [
        ("resolution",), ("duration",), ("generate_audio",), ("extra_params",)
    ]
    assert all(e.message.startswith("video-a: ") for e in exc.errors)
    assert exc.message.startswith("4 problems in the request:")
    assert all(e.message in exc.message for e in exc.errors)
    assert str(exc).startswith("400 INVALID_PARAMETER: 4 problems")


def test_several_rule_problems_are_listed_at_once() -> None:
    errors = errors_of(
        body("video-b", prompt="", reference_images=[img("last_frame"),
             {"url": "ftp://x", "reference_type": "middle"}])
    )
    locs = [e.loc for e in errors]
    assert ("reference_images", 1, "url") in locs
    assert ("reference_images", 1, "reference_type") in locs
    assert len(errors) >= 2
    assert all(e.message.startswith("video-b") for e in errors)


def test_error_detail_field_is_a_dotted_path() -> None:
    errors = errors_of(body("video-b", extra_params={"seed": -5}))
    assert errors[0].field == "extra_params.seed"


def test_a_single_problem_is_the_message() -> None:
    with pytest.raises(InvalidParameterError) as caught:
        genlab.validate(body("video-c", duration=16))
    assert caught.value.message == "video-c: duration must be from 3 to 15 (got 16)"


# --- credits -----------------------------------------------------------------------------

PRICE = {"480P": 80, "720P": 160, "1080P": 280}  # Limits > Credits (video-a)


@pytest.mark.parametrize("resolution", list(PRICE))
@pytest.mark.parametrize("duration", [2, 5, 17, 30])
def test_video_a_credits(resolution: str, duration: int) -> None:
    request_body = body("video-a", resolution=resolution, duration=duration)
    assert genlab.estimate_credits(request_body) == PRICE[resolution] * duration
    assert genlab.estimate_credits(genlab.validate(request_body)) == PRICE[resolution] * duration


def test_video_a_default_credits() -> None:
    assert genlab.estimate_credits(MINIMAL["video-a"]) == 160 * 5


@pytest.mark.parametrize(
    "extra",
    [
        {"generate_audio": True},
        {"reference_videos": [vid()]},
        {"reference_images": FIRST_LAST},
        {"reference_images": [img()], "reference_videos": [vid()], "reference_audios": [aud()]},
    ],
    ids=["audio", "reference-video", "frames", "references"],
)
def test_video_a_credits_do_not_depend_on_audio_or_references(extra: dict[str, Any]) -> None:
    request_body = body("video-a", duration=10, resolution="1080P", **extra)
    assert genlab.estimate_credits(request_body) == 2800
    assert genlab.estimate_credits(request_body, input_video_seconds=12.0) == 2800


@pytest.mark.parametrize("request_body", [b for b, _ in MODE_CASES if b["model"] != "video-a"])
def test_other_models_have_no_published_price(request_body: dict[str, Any]) -> None:
    assert genlab.estimate_credits(request_body) is None


def test_estimate_credits_validates() -> None:
    with pytest.raises(InvalidParameterError):
        genlab.estimate_credits(body("video-a", duration=31))


# --- output sizes ------------------------------------------------------------------------

OUTPUT_SIZES = [
    # (body, reference_size, (width, height))
    (body("video-a", aspect_ratio="16:9"), None, (1280, 720)),
    (body("video-a", aspect_ratio="9:16"), None, (720, 1280)),
    (body("video-a", aspect_ratio="16:9", resolution="480P"), None, (854, 480)),
    (body("video-a", aspect_ratio="9:16", resolution="480P"), None, (480, 854)),
    (body("video-a", aspect_ratio="1:1", resolution="1080P"), None, (1080, 1080)),
    (body("video-a", aspect_ratio="4:3", resolution="1080P"), None, (1440, 1080)),
    (body("video-a", aspect_ratio="3:4"), None, (720, 960)),
    (body("video-a"), None, (1280, 720)),
    (body("video-a", reference_images=FIRST), (1000, 500), (1440, 720)),
    (body("video-b", aspect_ratio="21:9", resolution="480P"), None, (1120, 480)),
    (body("video-b"), (600, 600), (720, 720)),
    (body("video-b"), (100, 1000), (720, 1800)),
    (body("video-b"), (5000, 100), (1800, 720)),
    (body("video-c"), None, (1920, 1080)),
    (VIDEO_C_FF, (1080, 1920), (1080, 1920)),
    (VIDEO_C_EDIT, (1280, 720), (1920, 1080)),
    (VIDEO_C_EDIT, (720, 720), (1080, 1080)),
    (body("video-d"), (720, 1280), (720, 1280)),
    (body("video-d", resolution="1080P"), None, (1920, 1080)),
    (body("video-e", aspect_ratio="9:16", resolution="1080P"), None, (1080, 1920)),
    (body("video-e", reference_videos=[vid("edit_source")]), (1000, 1000), (720, 720)),
    (body("video-f", aspect_ratio="1:1"), None, (720, 720)),
    (body("image-a", aspect_ratio="16:9"), None, (1024, 576)),
    (body("image-a", aspect_ratio="9:16"), None, (576, 1024)),
    (body("image-a", resolution="2K", aspect_ratio="21:9"), None, (2048, 880)),
    (body("image-a", resolution="4K", aspect_ratio="9:21"), None, (1752, 4096)),
    (body("image-b", aspect_ratio="3:2"), None, (1024, 680)),
    (body("image-b", resolution="4K", aspect_ratio="1:1"), None, (1024, 1024)),
    (body("image-c", resolution="2K", aspect_ratio="4:5"), None, (1640, 2048)),
    (body("image-c"), None, (1024, 1024)),
    (body("image-d", resolution="512", aspect_ratio="1:8"), None, (64, 512)),
    (body("image-d", resolution="4K", aspect_ratio="8:1"), None, (4096, 512)),
    (body("image-d", reference_images=[IMG]), (800, 600), (1024, 768)),
]


@pytest.mark.parametrize(("request_body", "reference", "size"), OUTPUT_SIZES)
def test_output_size(
    request_body: dict[str, Any], reference: tuple[int, int] | None, size: tuple[int, int]
) -> None:
    assert output_size(genlab.validate(request_body), reference) == size


# docs/spec-decisions.md, "Output sizes": ratio -> sizes per tier (None: no model has it).
SIZE_TABLE: dict[str, list[str | None]] = {
    "16:9": ["854x480", "1280x720", "1920x1080", "512x288", "1024x576", "2048x1152", "4096x2304"],
    "9:16": ["480x854", "720x1280", "1080x1920", "288x512", "576x1024", "1152x2048", "2304x4096"],
    "1:1": ["480x480", "720x720", "1080x1080", "512x512", "1024x1024", "2048x2048", "4096x4096"],
    "4:3": ["640x480", "960x720", "1440x1080", "512x384", "1024x768", "2048x1536", "4096x3072"],
    "3:4": ["480x640", "720x960", "1080x1440", "384x512", "768x1024", "1536x2048", "3072x4096"],
    "21:9": ["1120x480", "1680x720", None, "512x216", "1024x440", "2048x880", "4096x1752"],
}
TIERS = ["480P", "720P", "1080P", "512", "1K", "2K", "4K"]


def _model_for(resolution: str, ratio: str) -> str | None:
    """The first model that takes both the tier and the ratio."""
    for model in CATALOG:
        if resolution in ENUMS.get((model, "resolution"), []) and ratio in ENUMS.get(
            (model, "aspect_ratio"), []
        ):
            return model
    return None


@pytest.mark.parametrize(
    ("ratio", "resolution", "size"),
    [
        (ratio, resolution, size)
        for ratio, sizes in SIZE_TABLE.items()
        for resolution, size in zip(TIERS, sizes, strict=True)
        if size is not None
    ],
)
def test_output_size_table_of_the_decisions(ratio: str, resolution: str, size: str) -> None:
    model = _model_for(resolution, ratio)
    assert model is not None
    request = genlab.validate(body(model, resolution=resolution, aspect_ratio=ratio))
    width, height = output_size(request)
    assert f"{width}x{height}" == size


VIDEO_TIER = {"480P": 480, "720P": 720, "1080P": 1080}
IMAGE_TIER = {"512": 512, "1K": 1024, "2K": 2048, "4K": 4096}
SIZE_GRID = [
    (model, resolution, ratio)
    for (model, field), values in ENUMS.items()
    if field == "resolution"
    for resolution in values
    for ratio in ENUMS.get((model, "aspect_ratio"), ["16:9"])
    if ratio != "adaptive"
]


@pytest.mark.parametrize(("model", "resolution", "ratio"), SIZE_GRID)
def test_output_size_follows_the_tier_rules(model: str, resolution: str, ratio: str) -> None:
    fields: dict[str, Any] = {"resolution": resolution}
    if (model, "aspect_ratio") in ENUMS:
        fields["aspect_ratio"] = ratio
    width, height = output_size(genlab.validate(body(model, **fields)))
    w, h = (float(x) for x in ratio.split(":"))
    if model.startswith("video-"):
        assert min(width, height) == VIDEO_TIER[resolution]
        assert width % 2 == 0 and height % 2 == 0
    else:
        assert max(width, height) == IMAGE_TIER[resolution]
        assert width % 8 == 0 and height % 8 == 0
    assert (width >= height) == (w >= h)
    assert abs(width / height - w / h) < 0.05 * (w / h)


# --- media rules -------------------------------------------------------------------------


def video_info(seconds: float, *, width: int = 1280, height: int = 720, fps: float = 24.0,
               fmt: str = "mp4") -> MediaInfo:
    return MediaInfo("video", fmt, 5 * MB, width=width, height=height, duration=seconds, fps=fps)


def image_info(width: int, height: int, fmt: str = "png") -> MediaInfo:
    return MediaInfo("image", fmt, 1 * MB, width=width, height=height)


def test_video_a_input_videos_may_total_15_s() -> None:
    request = genlab.validate(body("video-a", reference_videos=[vid(), vid()]))
    assert media_problems_for(request, {"reference_videos": [video_info(7), video_info(8)]}) == []
    problems = media_problems_for(request, {"reference_videos": [video_info(7), video_info(8.5)]})
    assert [p.loc for p in problems] == [("reference_videos",)]
    assert problems[0].message.startswith("video-a: reference_videos last 15.50 s in all")
    assert "15 s" in problems[0].message


def test_video_a_input_plus_output_may_total_30_s() -> None:
    request = genlab.validate(body("video-a", duration=20, reference_videos=[vid()]))
    assert media_problems_for(request, {"reference_videos": [video_info(10)]}) == []
    problems = media_problems_for(request, {"reference_videos": [video_info(10.5)]})
    assert [p.loc for p in problems] == [("duration",)]
    assert problems[0].message.startswith("video-a: input videos (10.50 s) plus the requested")


def test_video_a_each_input_video_lasts_1_to_15_s() -> None:
    request = genlab.validate(body("video-a", reference_videos=[vid()]))
    problems = media_problems_for(request, {"reference_videos": [video_info(0.5)]})
    assert [p.loc for p in problems] == [("reference_videos", 0)]
    assert "at least 1 s" in problems[0].message
    problems = media_problems_for(request, {"reference_videos": [video_info(16)]})
    assert ("reference_videos", 0) in [p.loc for p in problems]


@pytest.mark.parametrize(("fps", "ok"), [(20, False), (23.5, False), (24, True), (60, True),
                                         (61, False)])
def test_video_b_frame_rate_24_to_60(fps: float, ok: bool) -> None:
    request = genlab.validate(body("video-b", reference_videos=[vid()]))
    info = video_info(5, width=720, height=1280, fps=fps)
    problems = media_problems_for(request, {"reference_videos": [info]})
    if ok:
        assert problems == []
    else:
        assert [p.loc for p in problems] == [("reference_videos", 0)]
        assert problems[0].message.startswith("video-b: reference_videos[0] runs at ")
        assert "fps" in problems[0].message


@pytest.mark.parametrize(
    ("extra_params", "seconds", "ok"),
    [
        (None, 12, True),
        ({"character_orientation": "video"}, 12, True),
        ({"character_orientation": "video"}, 30, True),
        ({"character_orientation": "video"}, 31, False),
        ({"character_orientation": "image"}, 10, True),
        ({"character_orientation": "image"}, 12, False),
        (None, 2, False),
    ],
)
def test_video_d_clip_length_depends_on_orientation(
    extra_params: dict[str, Any] | None, seconds: float, ok: bool
) -> None:
    fields = {} if extra_params is None else {"extra_params": extra_params}
    request = genlab.validate(body("video-d", **fields))
    problems = media_problems_for(
        request,
        {"reference_images": [image_info(800, 1200)], "reference_videos": [video_info(seconds)]},
    )
    if ok:
        assert problems == []
    else:
        assert [p.loc for p in problems] == [("reference_videos", 0)]
        assert problems[0].message.startswith(
            f"video-d: reference_videos[0] lasts {seconds:.2f} s"
        )


@pytest.mark.parametrize(
    ("request_body", "side", "ok"),
    [
        (VIDEO_C_FF, 250, False),
        (VIDEO_C_FF, 300, True),
        (VIDEO_C_FF, 350, True),
        (VIDEO_C_REF, 350, False),
        (VIDEO_C_REF, 400, True),
    ],
    ids=["first-frame-250", "first-frame-300", "first-frame-350", "reference-350",
         "reference-400"],
)
def test_video_c_image_size_depends_on_mode(
    request_body: dict[str, Any], side: int, ok: bool
) -> None:
    request = genlab.validate(request_body)
    infos = [image_info(side, side)] * len(request_body["reference_images"])
    problems = media_problems_for(request, {"reference_images": infos})
    if ok:
        assert problems == []
    else:
        assert problems and problems[0].loc == ("reference_images", 0)
        assert problems[0].message.startswith(f"video-c: reference_images[0] is {side}x{side}")


@pytest.mark.parametrize("model", ["video-a", "video-b", "video-e", "image-c"])
def test_an_image_that_is_a_video_is_rejected(model: str) -> None:
    items: list[Any] = [IMG] if model.startswith("image-") else [img()]
    request = genlab.validate(body(model, reference_images=items))
    problems = media_problems_for(request, {"reference_images": [video_info(5)]})
    assert [p.loc for p in problems] == [("reference_images", 0)]
    assert problems[0].message == f"{model}: reference_images[0] is a video, not image"


def test_video_b_audio_clips_total_15_s() -> None:
    request = genlab.validate(body("video-b", reference_images=[img()],
                                   reference_audios=[aud(), aud()]))
    clips = [MediaInfo("audio", "mp3", MB, duration=8.0)] * 2
    problems = media_problems_for(request, {"reference_audios": clips})
    assert [p.loc for p in problems] == [("reference_audios",)]
    assert problems[0].message.startswith("video-b: reference_audios last 16.00 s in all")


@pytest.mark.parametrize(
    ("width", "height", "ok"),
    [(640, 640, True), (834, 1112, True), (1280, 720, True), (600, 600, False),
     (1920, 1080, False)],
)
def test_video_b_video_pixel_product(width: int, height: int, ok: bool) -> None:
    request = genlab.validate(body("video-b", reference_videos=[vid()]))
    info = video_info(5, width=width, height=height)
    problems = media_problems_for(request, {"reference_videos": [info]})
    assert (problems == []) is ok
    assert all("pixels" in p.message for p in problems)


def test_video_e_video_sides_720_to_2160() -> None:
    request = genlab.validate(body("video-e", reference_videos=[vid()]))
    assert media_problems_for(request, {"reference_videos": [video_info(5)]}) == []
    small = video_info(5, width=640, height=360)
    problems = media_problems_for(request, {"reference_videos": [small]})
    assert [p.loc for p in problems] == [("reference_videos", 0)]
    assert "at least 720 px" in problems[0].message


def test_media_format_and_size() -> None:
    request = genlab.validate(body("video-e", reference_images=[img()]))
    problems = media_problems_for(
        request, {"reference_images": [MediaInfo("image", "webp", 11 * MB, width=800, height=800)]}
    )
    text = "\n".join(p.message for p in problems)
    assert "has format webp" in text
    assert "10 MB" in text


def test_media_aspect_ratio_limit() -> None:
    request = genlab.validate(body("video-f", reference_images=[img()]))
    assert media_problems_for(request, {"reference_images": [image_info(1000, 400)]}) == []
    problems = media_problems_for(request, {"reference_images": [image_info(1000, 390)]})
    assert ["aspect ratio" in p.message for p in problems] == [True]
