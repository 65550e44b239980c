"""A changed request is said: where the interface lets the service change a value (image-b
makes 1K only), the catalog sends the new value and tells the person, at validation (a
``genlab.RequestAdjustedWarning`` naming both values) and on the result's card. The
Studio's note is tested with the Studio (tests/widgets/test_widgets.py)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import genlab
from genlab.catalog import result_of
from genlab.emulator import EmulatorHandle

ASKED_2K = {"model": "image-b", "prompt": "a red kite", "resolution": "2K"}
SAID = "asked 2K; image-b makes 1K only"


def test_validating_image_b_at_2k_warns_naming_both_values() -> None:
    with pytest.warns(genlab.RequestAdjustedWarning) as caught:
        request = genlab.validate(ASKED_2K)
    (warning,) = caught
    assert str(warning.message) == "image-b: resolution 2K is sent as 1K (image-b makes 1K only)"
    assert warning.message.changes == (f"resolution: {SAID}",)  # type: ignore[union-attr]
    assert warning.filename == __file__  # it points at the line that validated
    assert request.to_body()["resolution"] == "1K"
    assert [(c.field, c.asked, c.made) for c in request.adjustments] == [
        ("resolution", "2K", "1K")]


@pytest.mark.parametrize("body", [
    {"model": "image-b", "prompt": "a red kite"},
    {"model": "image-b", "prompt": "a red kite", "resolution": "1K"},
    {"model": "image-c", "prompt": "a red kite", "resolution": "2K"},
])
def test_a_request_sent_as_asked_says_nothing(body: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        request = genlab.validate(body)
    assert request.adjustments == ()


def test_the_card_says_what_was_asked_and_what_the_model_makes(
    client_server: EmulatorHandle, client_options: dict[str, Any],
) -> None:
    with genlab.Client(client_server.base_url, client_server.api_key,
                       **client_options) as client:
        with pytest.warns(genlab.RequestAdjustedWarning, match="resolution 2K is sent as 1K"):
            result = client.generate(ASKED_2K, progress=False)
    assert result.request is not None and result.request["resolution"] == "1K"
    assert result.adjusted == (f"resolution: {SAID}",)
    assert result.images[0].width == 1024  # type: ignore[index]
    page = result._repr_html_()
    assert "resolution 1K" in page and f"changed: resolution: {SAID}" in page
    # Drawn again from the result (a Result given to the catalog again keeps what it says).
    again = result_of(result)
    assert SAID in again._repr_html_()


def test_a_request_sent_as_asked_has_no_changed_line(
    client_server: EmulatorHandle, client_options: dict[str, Any],
) -> None:
    with genlab.Client(client_server.base_url, client_server.api_key,
                       **client_options) as client:
        result = client.generate({**ASKED_2K, "resolution": "1K"}, progress=False)
    assert result.adjusted == () and "changed:" not in result._repr_html_()
