"""Hypothesis strategies for request bodies, built from the catalog's own data.

``valid_bodies(cls, refs)`` draws bodies that break no rule: each class's fields with their
bounds and enums, one of the class's modes with references of the roles its lists take, and
reference media that meet every media rule (counts kept within the media totals, e.g. video-a's
15 s of input video and 30 s of input plus output). ``invalid_bodies`` takes such a body and
breaks one thing, subtly: a number off by one, a wrong enum, an extra field, a wrong type, a
bad role, one reference too many, a missing required field, or a URL that is not http(s).

Nothing here branches on a model name: it reads ``model_fields``, ``MODES``, ``LIST_RULES``,
``MEDIA``, ``REJECTED_IN_MODE`` and friends, so a new model is fuzzed as soon as it is declared.
"""

from __future__ import annotations

import copy
import math
import typing
from dataclasses import dataclass
from typing import Any

import annotated_types
from hypothesis import strategies as st

from genlab.catalog import Mode, RequestBase
from genlab.catalog._base import REF_TYPES
from genlab.catalog._video_base import MultiShotParams

# Durations of the reference media (see _support.MediaSet).
VIDEO_SECONDS = 3.5
AUDIO_SECONDS = 3.0
LISTS = ("reference_images", "reference_videos", "reference_audios")
KIND_OF_LIST = {"reference_images": "image", "reference_videos": "video",
                "reference_audios": "audio"}


@dataclass(frozen=True)
class Refs:
    """URLs of reference media the emulator can read: uploads, and a data: URI image."""

    image: str
    video: str
    audio: str
    image_data_uri: str

    def urls(self, cls: type[RequestBase], list_name: str) -> list[str]:
        kind = KIND_OF_LIST[list_name]
        rules = cls.MEDIA.get(list_name)
        if kind == "image":
            return [self.image, self.image_data_uri] if rules and rules.allow_data_uri else [
                self.image]
        return [self.video] if kind == "video" else [self.audio]


# --- reading the catalog -------------------------------------------------------------------


def literals(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    out: list[Any] = []
    for arg in typing.get_args(annotation):
        out += literals(arg)
    return out


def optional(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


def bounds(info: Any) -> tuple[int | None, int | None]:
    low = high = None
    for meta in info.metadata:
        if isinstance(meta, annotated_types.Ge):
            low = int(meta.ge)  # type: ignore[call-overload]
        if isinstance(meta, annotated_types.Le):
            high = int(meta.le)  # type: ignore[call-overload]
    return low, high


def max_items(info: Any) -> int | None:
    for meta in info.metadata:
        if isinstance(meta, annotated_types.MaxLen):
            return int(meta.max_length)
    return None


def scalar_names(cls: type[Any]) -> list[str]:
    """Fields drawn from their type alone (not model, prompt, references, extra_params)."""
    skip = {"model", "prompt", "extra_params", *LISTS}
    return [name for name in cls.model_fields if name not in skip]


def scalar_value(info: Any) -> st.SearchStrategy[Any]:
    annotation = info.annotation
    values = literals(annotation)
    if values:
        base: st.SearchStrategy[Any] = st.sampled_from(values)
        return base | st.none() if optional(annotation) else base
    inner = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    kind = inner[0]
    if kind is bool:
        return st.booleans()
    if kind is int:
        low, high = bounds(info)
        return st.integers(low, high)
    if kind is str:
        return st.text(st.characters(codec="ascii", categories=("L", "N")), max_size=8)
    raise NotImplementedError(f"no strategy for {annotation!r}")


def item_class(cls: type[RequestBase], list_name: str) -> Any:
    """The class of one item of a reference list (``Reference`` or a subclass)."""
    for arg in typing.get_args(cls.model_fields[list_name].annotation):
        if typing.get_origin(arg) is list:
            return typing.get_args(arg)[0]
    return None


def list_rule_roles(cls: type[RequestBase], list_name: str) -> frozenset[str]:
    rule = cls.LIST_RULES.get(list_name)
    return rule.roles if rule is not None else frozenset()


def list_cap(cls: type[RequestBase], list_name: str) -> int:
    """How many items of this list stay within the list's size and the media totals."""
    info = cls.model_fields.get(list_name)
    if info is None or list_name not in cls.LIST_RULES:
        return 0
    cap = max_items(info) or 1
    rules = cls.MEDIA.get(list_name)
    seconds = {"reference_videos": VIDEO_SECONDS, "reference_audios": AUDIO_SECONDS}
    if rules is not None and rules.max_total_duration is not None and list_name in seconds:
        cap = min(cap, math.floor(rules.max_total_duration / seconds[list_name]))
    return cap


# --- valid bodies --------------------------------------------------------------------------

SAFE_TEXT = st.text(
    st.characters(codec="utf-8", categories=("L", "N", "Zs", "P")), min_size=1, max_size=40
).filter(lambda p: bool(p.strip()) and "nsfw" not in p.lower())


def prompts(cls: type[RequestBase]) -> st.SearchStrategy[str]:
    longest = cls.PROMPT_MAX
    if longest is None:
        return SAFE_TEXT
    return SAFE_TEXT | st.just("p" * longest)  # exactly at the limit


@st.composite
def _item(draw: st.DrawFn, cls: type[RequestBase], list_name: str, refs: Refs,
          role: str | None) -> Any:
    url = draw(st.sampled_from(refs.urls(cls, list_name)))
    if cls.KIND == "image":
        return draw(st.sampled_from([url, {"url": url}, {"url": url, "detail": "high"}]))
    item: dict[str, Any] = {"url": url}
    if role is not None and role != "asset":
        item["reference_type"] = role
    else:
        # The spellings of "asset": omitted, null, empty, explicit; and, where the list
        # promises it, an unknown role that becomes asset.
        spellings: list[Any] = ["omit", None, "", "asset"]
        rule = cls.LIST_RULES[list_name]
        if rule.unknown_as_asset:
            spellings.append("background")
        spelling = draw(st.sampled_from(spellings))
        if spelling != "omit":
            item["reference_type"] = spelling
    fields = getattr(item_class(cls, list_name), "model_fields", {})
    if "keep_original_sound" in fields and draw(st.booleans()):
        item["keep_original_sound"] = draw(st.sampled_from([True, False, "yes", "no"]))
    return item


def _modes(cls: type[RequestBase]) -> list[Mode]:
    return sorted(cls.MODES)


@st.composite
def _references(draw: st.DrawFn, cls: type[RequestBase], mode: Mode,
                refs: Refs) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}

    def items(list_name: str, roles: list[str | None]) -> None:
        out[list_name] = [draw(_item(cls, list_name, refs, role)) for role in roles]

    if mode in (Mode.TEXT_TO_VIDEO, Mode.TEXT_TO_IMAGE, Mode.MULTI_SHOT):
        return out
    if mode is Mode.IMAGE_TO_IMAGE:
        n = draw(st.integers(1, list_cap(cls, "reference_images")))
        items("reference_images", [None] * n)
        return out
    if mode is Mode.MOTION_CONTROL:
        items("reference_images", [None])
        items("reference_videos", [None])
        return out
    if mode is Mode.FIRST_FRAME:
        items("reference_images", ["first_frame"])
        return out
    if mode is Mode.FIRST_LAST_FRAME:
        roles: list[str | None] = draw(st.permutations(["first_frame", "last_frame"]))
        items("reference_images", roles)
        return out
    limit = getattr(cls, "MAX_ASSET_IMAGES_WITH_VIDEO", None)
    image_cap = list_cap(cls, "reference_images")
    if mode is Mode.VIDEO_EDIT:
        items("reference_videos", ["edit_source"])
        n_images = draw(st.integers(0, min(image_cap, limit if limit is not None else image_cap)))
        items("reference_images", [None] * n_images)
    else:  # reference-to-video: asset images, videos and audios
        video_cap = list_cap(cls, "reference_videos") if "asset" in list_rule_roles(
            cls, "reference_videos") else 0
        n_videos = draw(st.integers(0, video_cap))
        if n_videos and limit is not None:
            image_cap = min(image_cap, limit)
        n_images = draw(st.integers(0 if n_videos else 1, image_cap))
        if n_images:
            items("reference_images", [None] * n_images)
        if n_videos:
            items("reference_videos", [None] * n_videos)
    n_audios = draw(st.integers(0, list_cap(cls, "reference_audios")))
    if n_audios:
        items("reference_audios", [None] * n_audios)
    return out


def _mode_strategy(cls: type[RequestBase]) -> st.SearchStrategy[Mode]:
    return st.sampled_from(_modes(cls))


@st.composite
def _extra_params(draw: st.DrawFn, cls: type[RequestBase], mode: Mode) -> dict[str, Any] | None:
    info = cls.model_fields.get("extra_params")
    if info is None:
        return None
    params_class = next(a for a in typing.get_args(info.annotation) if a is not type(None))
    if issubclass(params_class, MultiShotParams):
        if mode is Mode.MULTI_SHOT:
            shot_type = draw(st.sampled_from(["customize", "intelligence", None]))
            extra: dict[str, Any] = {"multi_shot": True}
            if shot_type is not None:
                extra["shot_type"] = shot_type
            if shot_type != "intelligence":
                n = draw(st.integers(1, 4))
                extra["multi_prompt"] = [
                    {"index": i, "prompt": draw(SAFE_TEXT),
                     "duration": draw(st.sampled_from([1, 2, "3", "2.5", 1.5]))}
                    for i in range(n)
                ]
            return extra
        if not draw(st.booleans()):
            return None
        return {"multi_shot": False}
    if not draw(st.booleans()):
        return None
    extra = {}
    for name, field in params_class.model_fields.items():
        if draw(st.booleans()):
            extra[name] = draw(scalar_value(field))
    if draw(st.booleans()):
        extra["vendor_key"] = "passes through"
    return extra


@st.composite
def valid_bodies(draw: st.DrawFn, cls: type[RequestBase], refs: Refs) -> dict[str, Any]:
    """A body that breaks no rule of ``cls`` (nor any media rule, with ``refs``' media)."""
    mode = draw(_mode_strategy(cls))
    # The class's EXAMPLE is the starting point (its media URLs are replaced by real ones).
    body: dict[str, Any] = {k: v for k, v in cls.EXAMPLE.items() if k not in LISTS}
    if not (body.get("prompt") and draw(st.booleans())):
        body["prompt"] = draw(prompts(cls))
    body |= draw(_references(cls, mode, refs))
    rejected = set(cls.REJECTED_IN_MODE.get(mode, {}))
    for name in scalar_names(cls):
        info = cls.model_fields[name]
        if name in rejected:
            body.pop(name, None)
            continue
        if not (info.is_required() or draw(st.booleans())):
            continue
        value = draw(scalar_value(info))
        if name == "duration" and body.get("reference_videos"):
            limit = getattr(cls, "MAX_INPUT_PLUS_OUTPUT", None)
            if limit is not None:
                low, _ = bounds(info)
                top = math.floor(limit - VIDEO_SECONDS * len(body["reference_videos"]))
                value = min(value, top) if low is None else max(low, min(value, top))
        body[name] = value
    extra = draw(_extra_params(cls, mode))
    if extra is not None:
        body["extra_params"] = extra
    return body


# --- invalid bodies ------------------------------------------------------------------------


def _mutations(cls: type[RequestBase], body: dict[str, Any]) -> list[str]:
    kinds = ["extra_field", "wrong_type", "missing_model"]
    if any(bounds(cls.model_fields[n]) != (None, None) for n in scalar_names(cls)):
        kinds.append("off_by_one")
    if cls.PROMPT_MAX is not None:
        kinds.append("prompt_too_long")
    if any(literals(cls.model_fields[n].annotation) for n in scalar_names(cls)):
        kinds.append("wrong_enum")
    if any(n in cls.LIST_RULES for n in LISTS if n in cls.model_fields):
        kinds.append("too_many_references")
    if any(body.get(n) for n in LISTS):
        kinds.append("bad_url")
        if cls.KIND == "video":
            kinds.append("bad_role")
    if any(cls.model_fields[n].is_required() for n in scalar_names(cls)):
        kinds.append("missing_required")
    return kinds


@st.composite
def invalid_bodies(draw: st.DrawFn, cls: type[RequestBase], refs: Refs) -> dict[str, Any]:
    """A valid body with one thing broken (see the module docstring)."""
    body = copy.deepcopy(draw(valid_bodies(cls, refs)))
    kind = draw(st.sampled_from(_mutations(cls, body)))
    names = scalar_names(cls)
    if kind == "extra_field":
        extra = sorted(cls.NOT_ACCEPTED) + ["unknown_field", "Prompt", "seed"]
        body[draw(st.sampled_from(extra))] = draw(st.sampled_from([1, "x", True, None]))
    elif kind == "wrong_type":
        name = draw(st.sampled_from(["prompt", *names]))
        value = body.get(name, "")
        wrong: list[Any] = [[value], {"value": value}]
        if isinstance(value, bool):
            wrong += [int(value), str(value).lower()]
        elif isinstance(value, int):
            wrong += [str(value), float(value) + 0.5, float(value), True]
        elif isinstance(value, str):
            wrong += [5, 1.5, False]
        body[name] = draw(st.sampled_from(wrong))
    elif kind == "missing_model":
        del body["model"]
    elif kind == "off_by_one":
        name = draw(st.sampled_from([n for n in names if bounds(cls.model_fields[n]) != (
            None, None)]))
        low, high = bounds(cls.model_fields[name])
        options = [v for v in (None if low is None else low - 1,
                               None if high is None else high + 1) if v is not None]
        body[name] = draw(st.sampled_from(options))
    elif kind == "prompt_too_long":
        assert cls.PROMPT_MAX is not None
        body["prompt"] = "p" * (cls.PROMPT_MAX + 1)
    elif kind == "wrong_enum":
        name = draw(st.sampled_from([n for n in names if literals(
            cls.model_fields[n].annotation)]))
        values = [v for v in literals(cls.model_fields[name].annotation) if v is not None]
        good = draw(st.sampled_from(values))
        candidates = [str(good).lower(), str(good).upper(), f"{good} ", f"x{good}", "bogus"]
        body[name] = draw(st.sampled_from([c for c in candidates if c not in values]))
    elif kind == "too_many_references":
        lists = [n for n in LISTS if n in cls.LIST_RULES and n in cls.model_fields]
        name = draw(st.sampled_from(lists))
        cap = max_items(cls.model_fields[name]) or 1
        item = (body.get(name) or [None])[0] or draw(_item(cls, name, refs, None))
        body[name] = [copy.deepcopy(item) for _ in range(cap + 1)]
    elif kind == "bad_url":
        name, i = _some_item(draw, body)
        bad = draw(st.sampled_from(["", "ftp://127.0.0.1/a.png", "a.png", "data:text/plain,hi",
                                    "data:video/mp4;base64,AAAA", "//127.0.0.1/a.png"]))
        item = body[name][i]
        if isinstance(item, dict):
            item["url"] = bad
        else:
            body[name][i] = bad
    elif kind == "bad_role":
        name, i = _some_item(draw, body)
        accepted = list_rule_roles(cls, name)
        refused = sorted(set(REF_TYPES) - accepted)
        if not refused and not cls.LIST_RULES[name].unknown_as_asset:
            refused = ["first-frame"]  # a typo of a known role
        if refused:
            item = body[name][i]
            if isinstance(item, dict):
                item["reference_type"] = draw(st.sampled_from(refused))
        else:
            body["unknown_field"] = 1
    elif kind == "missing_required":
        required = [n for n in names if cls.model_fields[n].is_required()]
        del body[draw(st.sampled_from(required))]
    return body


def _some_item(draw: st.DrawFn, body: dict[str, Any]) -> tuple[str, int]:
    places = [(n, i) for n in LISTS for i, _ in enumerate(body.get(n) or [])]
    return draw(st.sampled_from(places))


# --- anything at all -----------------------------------------------------------------------

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
