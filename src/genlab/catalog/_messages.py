"""Turn pydantic's validation errors into messages that name the model, field, value and rule."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import ErrorDetails

from genlab._errors import ErrorDetail
from genlab.catalog._base import RequestBase
from genlab.catalog._parts import field_bounds

_TYPE_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "float_type": "a number",
    "float_parsing": "a number",
}


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _path(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "request"


def convert_errors(
    errors: Sequence[ErrorDetails],
    catalog: Mapping[str, type[RequestBase]],
) -> list[ErrorDetail]:
    """One :class:`ErrorDetail` per problem; union branches of one item collapse into one."""
    out: list[ErrorDetail] = []
    seen_items: set[tuple[str | int, ...]] = set()
    for err in errors:
        loc = tuple(err["loc"])
        model = loc[0] if loc and isinstance(loc[0], str) and loc[0] in catalog else None
        cls = catalog.get(model) if model else None
        inner = loc[1:] if model else loc
        kind = err["type"]
        ctx: Mapping[str, Any] = err.get("ctx") or {}
        prefix = f"{model}: " if model else ""

        if kind == "genlab_rules":
            for sub_loc, message in ctx["problems"]:
                out.append(ErrorDetail(tuple(sub_loc), message))
            continue
        # A value that fits none of a union's members (a reference item given as neither a URL
        # string nor an object with url, ...): pydantic reports one error per member.
        union_branch = _union_item(inner)
        if union_branch is not None:
            if union_branch in seen_items:
                continue
            seen_items.add(union_branch)
            out.append(
                ErrorDetail(
                    union_branch,
                    f"{prefix}{_path(union_branch)} must be {_union_expected(union_branch)} "
                    f"(got {_show(err['input'])})",
                )
            )
            continue
        message = _message(kind, inner, err, ctx, cls, model or "this model", catalog)
        out.append(ErrorDetail(inner, prefix + message))
    return out


# How pydantic names union members in error locations, e.g. ``duration.str``.
_UNION_MEMBER = re.compile(r"^(str|int|float|bool|literal\[.*\]|ImageReference)$")
_UNION_EXPECTED = {
    "reference_images": "a URL string or an object with a url string",
    "keep_original_sound": "true, false, 'yes' or 'no'",
    "duration": "a number of seconds (a number, or a string holding one)",
}


def _union_item(inner: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
    for i, part in enumerate(inner[1:], start=1):
        if isinstance(part, str) and _UNION_MEMBER.match(part):
            return inner[:i]
    return None


def _union_expected(loc: tuple[str | int, ...]) -> str:
    names = [part for part in loc if isinstance(part, str)]
    return _UNION_EXPECTED.get(names[-1] if names else "", "a value of an accepted type")


def _message(
    kind: str,
    inner: tuple[str | int, ...],
    err: ErrorDetails,
    ctx: Mapping[str, Any],
    cls: type[RequestBase] | None,
    model: str,
    catalog: Mapping[str, type[RequestBase]],
) -> str:
    path = _path(inner)
    value = err.get("input")
    field = str(inner[0]) if inner else ""
    models = ", ".join(catalog)
    if kind == "union_tag_invalid":
        return f"model {_show(ctx.get('tag'))} is unknown; use one of {models}"
    if kind == "union_tag_not_found":
        return f"model is required; use one of {models}"
    if kind == "model_attributes_type" and not inner:
        return "the request body must be a JSON object with a model field"
    if kind == "extra_forbidden":
        if len(inner) == 1:
            reason = cls.NOT_ACCEPTED.get(field) if cls is not None else None
            if reason:
                return f"{reason}; remove {field}"
            accepted = ", ".join(n for n in (cls.model_fields if cls else {}) if n != "model")
            return f"{field} is not accepted by {model}; it accepts {accepted}"
        return f"{path} is not a known key here; remove it"
    if kind == "missing":
        return f"{path} is required" + _choices_hint(cls, field, len(inner) == 1)
    if kind == "literal_error":
        return f"{path} must be one of {ctx.get('expected')} (got {_show(value)})"
    if kind in ("greater_than_equal", "less_than_equal"):
        declared = cls.model_fields.get(field) if cls is not None and len(inner) == 1 else None
        low, high, _ = field_bounds(declared)
        low = ctx.get("ge", low)
        high = ctx.get("le", high)
        if low is not None and high is not None:
            return f"{path} must be from {low} to {high} (got {_show(value)})"
        bound = f"at least {low}" if low is not None else f"at most {high}"
        return f"{path} must be {bound} (got {_show(value)})"
    if kind == "string_too_long":
        size = len(value) if isinstance(value, str) else "?"
        return f"{path} is {size} characters; the maximum is {ctx.get('max_length')}"
    if kind == "string_too_short":
        return f"{path} must not be empty"
    if kind == "too_long":
        return (
            f"{path} has {ctx.get('actual_length')} items; at most {ctx.get('max_length')} "
            "are accepted"
        )
    if kind in _TYPE_WORDS:
        return f"{path} must be {_TYPE_WORDS[kind]} (got {_show(value)})"
    return f"{path}: {err['msg']}"


def _choices_hint(cls: type[RequestBase] | None, field: str, top_level: bool) -> str:
    if cls is None or not top_level or field not in cls.model_fields:
        return ""
    args = typing.get_args(cls.model_fields[field].annotation)
    if args and all(isinstance(a, str) for a in args):
        return f"; choose one of {', '.join(args)}"
    return ""
