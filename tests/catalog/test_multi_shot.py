"""Multi-shot (video-e, video-f): shot types, shots, shot durations and prompts."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import Mode

from ._tables import (
    body,
    errors_of,
    multi_shot,
    notices_text,
    rejected,
    vid,
)

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
