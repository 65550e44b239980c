"""Unreadable bodies, and how problems are reported: several at once, dotted field paths,
a single problem as the message."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import InvalidParameterError

from ._tables import (
    body,
    errors_of,
    img,
    rejected,
)

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
