"""Modes detected from the references, round trips through to_body, and the reference_type
roles each model and list accept."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import Mode

from ._tables import (
    AUD,
    FIRST_LAST,
    IMAGE_MODELS,
    IMG,
    MODE_CASES,
    REF_MAX,
    VID,
    body,
    errors_of,
    img,
    rejected,
    vid,
)

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
def test_video_a_unknown_role_becomes_asset_and_says_so(list_name: str) -> None:
    with pytest.warns(genlab.RequestAdjustedWarning,
                      match=rf"{list_name}\[0\]\.reference_type background is sent as asset"):
        request = genlab.validate(role_body("video-a", list_name, "background"))
    assert request.mode is Mode.REFERENCE
    sent = request.to_body()
    assert sent[list_name][0]["reference_type"] == "asset"
    assert (f"{list_name}[0].reference_type: asked background; video-a treats an unknown "
            "role as asset") in request.notices
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
