"""The content address: equivalent bodies share one, any real difference gives another."""

from __future__ import annotations

import base64

import pytest

from genlab.catalog import CATALOG, canonical_body, content_address, media_digest, validate


def address(body: dict[str, object], **kwargs: object) -> str:
    return content_address(validate(body), **kwargs)  # type: ignore[arg-type]


def png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("one", "other"),
    [
        # Defaults written out or left implicit.
        ({"model": "video-a", "prompt": "a fox"},
         {"model": "video-a", "prompt": "a fox", "duration": 5, "resolution": "720P"}),
        # Key order.
        ({"model": "image-d", "prompt": "x", "resolution": "2K"},
         {"resolution": "2K", "prompt": "x", "model": "image-d"}),
        # A role omitted, null or "asset" is one role.
        ({"model": "video-c", "prompt": "p", "reference_images": [{"url": "https://e.com/a.png"}]},
         {"model": "video-c", "prompt": "p",
          "reference_images": [{"url": "https://e.com/a.png", "reference_type": "asset"}]}),
        ({"model": "video-c", "prompt": "p",
          "reference_images": [{"url": "https://e.com/a.png", "reference_type": None}]},
         {"model": "video-c", "prompt": "p", "reference_images": [{"url": "https://e.com/a.png"}]}),
        # An empty reference list asks for nothing, like an omitted one.
        ({"model": "video-a", "prompt": "p", "reference_images": []},
         {"model": "video-a", "prompt": "p"}),
    ],
)
def test_equivalent_bodies_share_an_address(
    one: dict[str, object], other: dict[str, object]
) -> None:
    assert address(one) == address(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"model": "video-a", "prompt": "a fox"}, {"model": "video-a", "prompt": "a fox."}),
        ({"model": "video-a", "prompt": "a fox"},
         {"model": "video-a", "prompt": "a fox", "duration": 6}),
        ({"model": "video-b", "prompt": "a", "extra_params": {"seed": 1}},
         {"model": "video-b", "prompt": "a", "extra_params": {"seed": 2}}),
        ({"model": "image-b", "prompt": "a"}, {"model": "image-c", "prompt": "a"}),
        ({"model": "video-c", "prompt": "p",
          "reference_images": [{"url": "https://e.com/a.png", "reference_type": "first_frame"}]},
         {"model": "video-c", "prompt": "p",
          "reference_images": [{"url": "https://e.com/a.png", "reference_type": "asset"}]}),
    ],
)
def test_different_requests_get_different_addresses(
    one: dict[str, object], other: dict[str, object]
) -> None:
    assert address(one) != address(other)


def test_a_data_image_changed_by_one_byte_changes_the_address() -> None:
    data = bytes(range(256)) * 4
    changed = data[:-1] + bytes([data[-1] ^ 1])
    body = {"model": "image-b", "prompt": "p", "reference_images": [{"url": png_uri(data)}]}
    same = {"model": "image-b", "prompt": "p", "reference_images": [{"url": png_uri(data)}]}
    other = {"model": "image-b", "prompt": "p", "reference_images": [{"url": png_uri(changed)}]}
    assert address(body) == address(same)
    assert address(body) != address(other)
    # Identity is the bytes: the long data: text is not part of the canonical body.
    refs = canonical_body(validate(body))["reference_images"]
    assert refs[0]["url"] == media_digest(data)


def test_uploads_are_identified_by_their_bytes_when_the_caller_knows_them() -> None:
    def body(url: str) -> dict[str, object]:
        return {"model": "video-c", "prompt": "p", "reference_images": [{"url": url}]}

    first, second = "http://127.0.0.1:1/media/uploads/up_1/a.png", "http://h/u/up_2/a.png"
    # Two uploads of the same file get different URLs but are the same reference.
    same = {first: media_digest(b"png"), second: media_digest(b"png")}
    assert address(body(first), media_digests=same) == address(body(second), media_digests=same)
    # Without knowing the bytes, the URL is the identity.
    assert address(body(first)) != address(body(second))


@pytest.mark.parametrize("model", list(CATALOG))
def test_every_example_has_a_stable_address(model: str) -> None:
    example = dict(CATALOG[model].EXAMPLE)
    assert address(example) == address(dict(reversed(list(example.items()))))
    assert len(address(example)) == 64


def test_a_bare_url_string_is_the_same_reference_as_an_item() -> None:
    uri = png_uri(b"same bytes")
    bare = {"model": "image-b", "prompt": "p", "reference_images": [uri]}
    item = {"model": "image-b", "prompt": "p", "reference_images": [{"url": uri}]}
    assert address(bare) == address(item)
    url = "http://127.0.0.1:1/media/uploads/up_1/a.png"
    known = {url: media_digest(b"png")}
    plain = {"model": "image-b", "prompt": "p", "reference_images": [url]}
    assert canonical_body(validate(plain), media_digests=known)["reference_images"][0]["url"] == (
        media_digest(b"png")
    )
