"""extra_params, fields a model must not receive, strictly typed generate_audio, and
reference URLs, data URIs and item shapes."""

from __future__ import annotations

from typing import Any

import pytest

import genlab
from genlab import CATALOG

from ._tables import (
    DATA_IMG,
    IMAGE_MODELS,
    IMG,
    MINIMAL,
    VIDEO_MODELS,
    body,
    errors_of,
    img,
    rejected,
)

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
