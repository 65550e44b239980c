"""Limits of the interface: duration bounds, prompt length and when a prompt is required,
and how many items each reference list takes."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import CATALOG, Mode

from ._tables import (
    AUD,
    IMAGE_MODELS,
    IMG,
    MINIMAL,
    REF_MAX,
    aud,
    body,
    errors_of,
    img,
    multi_shot,
    rejected,
    vid,
)

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
