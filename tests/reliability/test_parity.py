"""Parity fuzz: for every generated body, ``genlab.validate`` and the emulator give the same
verdict (valid = 200, invalid = 400 INVALID_PARAMETER), and the emulator never answers 5xx.

Bodies come from ``_bodies``: valid ones built from each class's EXAMPLE and field bounds,
with real reference media (uploads and data: URIs) that meet every media rule, and subtly
invalid ones (one thing broken). The emulator runs in-process (``httpx.ASGITransport``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import genlab
from genlab import CATALOG, InvalidParameterError

from ._bodies import Refs, invalid_bodies, json_values, valid_bodies
from ._support import KEY, MediaSet, upload
from .conftest import Scale, current_scale
from .figures import Figures, Section

SCALE = current_scale()
FUZZ = settings(
    max_examples=SCALE.fuzz_examples,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
WILD = settings(FUZZ, max_examples=SCALE.wild_examples)


@dataclass
class Tally:
    """Counts over every parity test of the session."""

    tried: int = 0
    agreed: int = 0
    disagreed: int = 0
    server_errors: int = 0
    valid: int = 0
    invalid: int = 0
    examples: list[str] = field(default_factory=list)
    modes: set[tuple[str, str]] = field(default_factory=set)

    def record(self, section: Section) -> None:
        section.add("bodies tried", self.tried)
        section.add("(model, mode) pairs accepted", f"{len(self.modes)} of {len(ALL_MODES)}")
        section.add("valid (both sides)", self.valid)
        section.add("invalid (both sides)", self.invalid)
        section.goal("agreements", self.agreed, f"all {self.tried}", self.agreed == self.tried)
        section.goal("disagreements", self.disagreed, "0", self.disagreed == 0)
        section.goal("5xx answers", self.server_errors, "0", self.server_errors == 0)
        for example in self.examples[:3]:
            section.note(f"disagreement: {example}")


TALLY = Tally()
ALL_MODES = {(name, mode.value) for name, cls in CATALOG.items() for mode in cls.MODES}


@pytest.fixture
async def http(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """Talks to the in-process emulator; an app crash comes back as a 500, not an exception."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://emulator",
        headers={"Authorization": f"Bearer {KEY}"},
    ) as client:
        yield client


@pytest.fixture
async def refs(http: httpx.AsyncClient, media: MediaSet) -> Refs:
    return Refs(
        image=await upload(http, media.png, "ref.png"),
        video=await upload(http, media.mp4, "ref.mp4"),
        audio=await upload(http, media.wav, "ref.wav"),
        image_data_uri=media.png_data_uri,
    )


def client_verdict(body: Any) -> tuple[str, str | None]:
    """``valid`` or ``invalid`` by ``genlab.validate``, and the endpoint kind when known."""
    try:
        request = genlab.validate(body, warn=False)
    except InvalidParameterError:
        model = body.get("model") if isinstance(body, dict) else None
        cls = CATALOG.get(model) if isinstance(model, str) else None
        return "invalid", cls.KIND if cls is not None else None
    return "valid", request.kind


async def emulator_verdict(http: httpx.AsyncClient, kind: str, content: bytes) -> str:
    answer = await http.post(
        f"/v1/{kind}s/generate", content=content, headers={"Content-Type": "application/json"}
    )
    if answer.status_code == 200:
        return "valid"
    try:
        error = answer.json()["error"]
        code = error["code"]
        assert isinstance(error["message"], str) and error["message"]
    except (ValueError, KeyError, TypeError, AssertionError):
        return f"HTTP {answer.status_code} without an error envelope: {answer.text[:200]}"
    if answer.status_code == 400 and code == "INVALID_PARAMETER":
        return "invalid"
    return f"HTTP {answer.status_code} {code}: {error['message'][:200]}"


async def compare(http: httpx.AsyncClient, body: Any, section: Section,
                  kind: str | None = None) -> tuple[str, str]:
    """Both verdicts for one body; tallied and recorded before anything is asserted."""
    mine, known_kind = client_verdict(body)
    kind = kind or known_kind or "video"
    content = json.dumps(body).encode()
    theirs = await emulator_verdict(http, kind, content)
    TALLY.tried += 1
    if theirs.startswith("HTTP 5"):
        TALLY.server_errors += 1
    if mine == theirs:
        TALLY.agreed += 1
        TALLY.valid += mine == "valid"
        TALLY.invalid += mine == "invalid"
    else:
        TALLY.disagreed += 1
        TALLY.examples.append(f"client {mine}, emulator {theirs}: {content[:300]!r}")
    TALLY.record(section)
    return mine, theirs


def _section(figures: Figures, scale: Scale) -> Section:
    section = figures.section("parity", "Parity fuzz: genlab.validate vs the emulator")
    section.note(
        f"hypothesis, {scale.fuzz_examples} valid and {scale.fuzz_examples} subtly invalid "
        f"bodies per model, {scale.wild_examples} arbitrary JSON bodies; derandomized"
    )
    return section


@pytest.mark.slow
@pytest.mark.parametrize("model", list(CATALOG))
@FUZZ
@given(data=st.data())
async def test_valid_bodies_are_accepted_by_both(
    model: str, data: st.DataObject, http: httpx.AsyncClient, refs: Refs, figures: Figures,
    scale: Scale,
) -> None:
    body = data.draw(valid_bodies(CATALOG[model], refs), label="body")
    if client_verdict(body)[0] == "valid":
        TALLY.modes.add((model, genlab.validate(body, warn=False).mode.value))
    mine, theirs = await compare(http, body, _section(figures, scale))
    assert mine == "valid", "the valid-body generator made a body the catalog refuses"
    assert theirs == "valid", f"genlab.validate accepts it, the emulator says {theirs}"


@pytest.mark.slow
@pytest.mark.parametrize("model", list(CATALOG))
@FUZZ
@given(data=st.data())
async def test_subtly_invalid_bodies_get_the_same_verdict(
    model: str, data: st.DataObject, http: httpx.AsyncClient, refs: Refs, figures: Figures,
    scale: Scale,
) -> None:
    body = data.draw(invalid_bodies(CATALOG[model], refs), label="body")
    mine, theirs = await compare(http, body, _section(figures, scale), kind=CATALOG[model].KIND)
    assert mine == theirs


wild_bodies = (
    json_values
    | st.dictionaries(st.sampled_from(["model", "prompt", "duration", "reference_images"]),
                      json_values, max_size=4)
    | st.builds(lambda m, rest: {"model": m, **rest}, st.sampled_from(list(CATALOG)),
                st.dictionaries(st.text(max_size=12), json_values, max_size=4))
)


@pytest.mark.slow
@WILD
@given(body=wild_bodies, kind=st.sampled_from(["video", "image"]))
async def test_arbitrary_json_gets_the_same_verdict_and_never_a_5xx(
    body: Any, kind: str, http: httpx.AsyncClient, figures: Figures, scale: Scale,
) -> None:
    mine, known = client_verdict(body)
    # A valid body goes to its own endpoint (as the client sends it); anything else anywhere.
    mine, theirs = await compare(http, body, _section(figures, scale),
                                 kind=known if mine == "valid" else kind)
    assert mine == theirs


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"[1, 2]", b"null", b"\xff\xfe", b'{"model": "video-a", "prompt": "\\ud800"}',
     b'{"model": "video-a", "prompt": "x", "duration": 1e999}', b"[" * 5000 + b"]" * 5000],
    ids=["empty", "truncated", "array", "null", "not-utf8", "lone-surrogate", "huge-number",
         "deep-nesting"],
)
async def test_malformed_json_is_a_clear_400(content: bytes, http: httpx.AsyncClient) -> None:
    for kind in ("video", "image"):
        verdict = await emulator_verdict(http, kind, content)
        assert verdict == "invalid", verdict


@pytest.mark.parametrize("model", list(CATALOG))
async def test_a_body_on_the_other_endpoint_is_a_clear_400(
    model: str, http: httpx.AsyncClient, refs: Refs
) -> None:
    cls = CATALOG[model]
    body = {k: v for k, v in cls.EXAMPLE.items() if not k.startswith("reference_")}
    if getattr(cls, "MOTION_CONTROL", False):  # needs its two references to be valid
        body |= {"reference_images": [{"url": refs.image}],
                 "reference_videos": [{"url": refs.video}]}
    other = "image" if cls.KIND == "video" else "video"
    answer = await http.post(f"/v1/{other}s/generate", json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "INVALID_PARAMETER" and f"/v1/{cls.KIND}s/generate" in error["message"]


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [20, 40, 300, 900])
@pytest.mark.parametrize(
    "make",
    [
        lambda v, _: {"model": "video-e", "prompt": "x", "extra_params": {"vendor": v}},
        lambda v, refs: {"model": "image-b", "prompt": "x",
                         "reference_images": [{"url": refs.image, "note": v}]},
        lambda v, _: {"model": "video-f", "extra_params": {"multi_shot": True, "multi_prompt": [
            {"index": 0, "prompt": "a", "duration": 2, "note": v}]}},
    ],
    ids=["extra_params", "image-reference", "shot"],
)
async def test_deeply_nested_pass_through_values(
    make: Any, depth: int, http: httpx.AsyncClient, refs: Refs, figures: Figures, scale: Scale
) -> None:
    # Keys the catalog passes through untouched once reached any depth; past ~255 levels
    # to_body() raised ValueError in the client and the emulator answered 500.
    body = make(_nested(depth), refs)
    mine, theirs = await compare(http, body, _section(figures, scale))
    assert mine == theirs == ("valid" if depth <= 20 else "invalid")
    if mine == "valid":
        json.dumps(genlab.validate(body, warn=False).to_body())  # what the client sends can be sent
