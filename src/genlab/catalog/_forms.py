"""What a form needs from the catalog, without any widget: field specs, bodies and previews.

:func:`form_fields` reads a request class (its ``model_fields``, constraints, descriptions and
rule data) into :class:`FieldSpec` rows that a form maps to controls. :func:`form_body` turns a
form's values into the request body they stand for, and :func:`preview` judges any body
without raising: valid or not, the detected mode, every error, the notices and the credits.

Example:
    >>> from genlab.catalog import CATALOG, form_body, preview
    >>> body = form_body(CATALOG["video-c"], {
    ...     "prompt": "a lighthouse", "aspect_ratio": "9:16",
    ...     "reference_images": [{"url": "https://x/a.png", "reference_type": "first_frame"}]})
    >>> "aspect_ratio" in body                  # refused in first-frame mode: left out
    False
    >>> preview(body).mode.label
    'image-to-video, first frame'
    >>> preview({"model": "video-a", "prompt": ""}).errors[0].message
    'video-a: prompt must not be empty'
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from genlab._errors import ErrorDetail, InvalidParameterError
from genlab.catalog._base import RequestBase
from genlab.catalog._parts import REF_TYPES, Mode, Reference, Shot, field_bounds
from genlab.catalog._registry import CATALOG, estimate_credits, validate

FieldKind = Literal["prompt", "enum", "int", "bool", "text", "references", "extra", "shots"]


class _Omit:
    """The value of a control that leaves its field out of the body (a "(default)" choice)."""

    def __repr__(self) -> str:
        return "OMIT"

    def __reduce__(self) -> str:
        return "OMIT"  # copies and pickles are this very object


OMIT: Any = _Omit()
"""Give this as a field's value to :func:`form_body` to leave the field out."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a request class, as a form shows it.

    Attributes:
        name: the body key, e.g. ``duration`` (or ``seed`` inside ``extra_params``).
        kind: which control fits: ``prompt``, ``enum``, ``int``, ``bool``, ``text``,
            ``references`` (a reference list), ``extra`` (a nested object of ``fields``) or
            ``shots`` (the multi-shot list).
        description: the field's description: the control's tooltip.
        required: the body must carry it.
        default: the value the service assumes when the field is omitted (None: none stated).
        omittable: optional with no stated default; the form offers "(default)", which
            leaves the field out.
        choices: the accepted values of an ``enum``.
        min, max: bounds of an ``int``; ``max`` is the character limit of a ``prompt`` and of
            each shot's prompt (None: no limit).
        max_items: the most items a ``references`` or ``shots`` list holds.
        roles: the ``reference_type`` values a reference list accepts, in a stable order.
        allow_data_uri: a reference list takes ``data:image/...;base64,`` values.
        media_kind, media: what a reference list holds (``image``...) and its rules in words.
        fields: the sub-fields of ``extra``; the per-item options of ``references``.
        label: what a person reads beside the control ("Reference images"); ``name``, the
            wire name, goes in the tooltip.

    Example:
        >>> from genlab.catalog import CATALOG, form_fields
        >>> spec = form_fields(CATALOG["video-a"])[0]
        >>> spec.name, spec.kind, spec.required, spec.max
        ('prompt', 'prompt', True, 20000)
    """

    name: str
    kind: FieldKind
    description: str = ""
    required: bool = False
    default: Any = None
    omittable: bool = False
    choices: tuple[Any, ...] = ()
    min: int | None = None
    max: int | None = None
    max_items: int | None = None
    roles: tuple[str, ...] = ()
    allow_data_uri: bool = False
    media_kind: str = ""
    media: str = ""
    fields: tuple[FieldSpec, ...] = ()
    label: str = ""

    @property
    def tooltip(self) -> str:
        """The control's tooltip: the wire name, then the description."""
        return f"{self.name}: {self.description}" if self.description else self.name


@dataclass(frozen=True, slots=True)
class Preview:
    """What the catalog says about a body, valid or not. Built by :func:`preview`.

    Attributes:
        valid: the body would be accepted.
        request: the validated request (None when invalid).
        mode: the input mode the references decide, also for an invalid body (None when
            the model is unknown).
        errors: every problem, with its location and the catalog's message.
        notices: what the service would adjust or ignore.
        credits: the estimate; None when invalid or where no price is published.
        model: the body's model, when it names a known one.
        hidden: fields the mode refuses or ignores -> why; a form hides them.

    Example:
        >>> from genlab.catalog import preview
        >>> shown = preview({"model": "video-a", "prompt": "a fox", "duration": 4})
        >>> shown.valid, shown.credits, str(shown.mode)
        (True, 640, 'text-to-video')
    """

    valid: bool
    request: RequestBase | None
    mode: Mode | None
    errors: list[ErrorDetail] = field(default_factory=list)
    notices: tuple[str, ...] = ()
    credits: int | None = None
    model: str | None = None
    hidden: Mapping[str, str] = field(default_factory=dict)

    def messages_for(self, name: str) -> list[str]:
        """The error messages located at field ``name`` (or inside it)."""
        return [e.message for e in self.errors if e.loc and e.loc[0] == name]

    @property
    def credits_text(self) -> str:
        """``"800 credits"``, ``"price not published"``, or ``""`` while invalid."""
        if not self.valid:
            return ""
        return f"{self.credits} credits" if self.credits is not None else "price not published"


# --- field specs ---------------------------------------------------------------------------

# What a form calls a field where the wire name would read as code. A field's own pydantic
# ``title`` wins; any other name is shown with its underscores as spaces. Short enough to sit
# in a form's label column on one line.
LABELS: dict[str, str] = {
    "aspect_ratio": "Aspect ratio",
    "duration": "Duration (s)",
    "generate_audio": "Audio track",
    "reference_images": "Reference images",
    "reference_videos": "Reference videos",
    "reference_audios": "Reference audio",
    "extra_params": "More options",
    "return_last_frame": "Last frame",
    "audio_setting": "Audio",
    "character_orientation": "Orientation",
    "keep_original_sound": "Original sound",
    "multi_shot": "Multi-shot",
    "shot_type": "Shot type",
    "multi_prompt": "Shots",
    "n": "Images",
}


def field_label(name: str, info: FieldInfo | None = None) -> str:
    """The label a person reads for field ``name`` (its wire name goes in the tooltip).

    Example:
        >>> field_label("reference_images"), field_label("seed")
        ('Reference images', 'Seed')
    """
    if info is not None and info.title:
        return info.title
    shown = LABELS.get(name) or name.replace("_", " ")
    return shown[:1].upper() + shown[1:]

_SPECS: dict[type[BaseModel], list[FieldSpec]] = {}


def form_fields(cls: type[RequestBase]) -> list[FieldSpec]:
    """Every field of a request class except ``model``, in declaration order, as specs.

    Example:
        >>> from genlab.catalog import CATALOG
        >>> [(f.name, f.kind) for f in form_fields(CATALOG["video-d"])][:3]
        [('prompt', 'prompt'), ('resolution', 'enum'), ('reference_images', 'references')]
    """
    cached = _SPECS.get(cls)
    if cached is None:
        cached = _SPECS[cls] = [
            _spec(cls, name, info) for name, info in cls.model_fields.items() if name != "model"
        ]
    return list(cached)


def _spec(cls: type[RequestBase], name: str, info: FieldInfo, *, top: bool = True) -> FieldSpec:
    """One field's spec; ``top`` is False inside ``extra_params`` and reference items."""
    inner = _unwrap_optional(info.annotation)
    required = info.is_required()
    default = None if required else info.default
    low, high, max_items = field_bounds(info)
    common: dict[str, Any] = {
        "name": name,
        "description": info.description or "",
        "required": required,
        "default": default,
        "label": field_label(name, info),
    }
    if top and name in cls.LIST_RULES:
        rule, media = cls.LIST_RULES[name], cls.MEDIA.get(name)
        (item,) = typing.get_args(inner) or (None,)
        options: tuple[FieldSpec, ...] = ()
        if isinstance(item, type) and issubclass(item, Reference):
            # Item fields beyond url and reference_type (video-e's keep_original_sound).
            options = tuple(
                _spec(cls, n, i, top=False)
                for n, i in item.model_fields.items()
                if n not in ("url", "reference_type")
            )
        return FieldSpec(
            kind="references",
            max_items=max_items,
            roles=tuple(r for r in REF_TYPES if r in rule.roles),
            allow_data_uri=bool(media and media.allow_data_uri),
            media_kind=media.kind if media else "image",
            media=media.describe() if media else "",
            fields=options,
            **common,
        )
    if top and name == "prompt":
        limit = cls.PROMPT_MAX if cls.PROMPT_MAX is not None else max_items
        return FieldSpec(kind="prompt", max=limit, **common)
    if top and isinstance(inner, type) and issubclass(inner, BaseModel):
        subs = tuple(_spec(cls, n, i, top=False) for n, i in inner.model_fields.items())
        return FieldSpec(kind="extra", fields=subs, **common)
    if typing.get_origin(inner) is list and typing.get_args(inner) == (Shot,):
        return FieldSpec(kind="shots", max=cls.PROMPT_MAX, max_items=max_items, **common)
    common["omittable"] = not required and default is None
    choices = _choices(inner)
    if choices:
        return FieldSpec(kind="enum", choices=choices, **common)
    if inner is bool:
        return FieldSpec(kind="bool", **common)
    if inner is int:
        return FieldSpec(kind="int", min=_whole(low), max=_whole(high), **common)
    return FieldSpec(kind="text", **common)


def _unwrap_optional(annotation: Any) -> Any:
    """``X | None`` -> ``X``; other unions lose their None member."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return annotation


def _choices(annotation: Any) -> tuple[Any, ...]:
    """Literal values (and True/False where a union admits bool); () when not an enum."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(annotation)
        out: list[Any] = []
        for member in members:
            if typing.get_origin(member) is typing.Annotated:
                member = typing.get_args(member)[0]
            if member is bool:
                out += [True, False]
            elif typing.get_origin(member) is Literal:
                out += typing.get_args(member)
            else:
                return ()
        return tuple(out)
    return ()


def _whole(bound: int | float | None) -> int | None:
    return None if bound is None else int(bound)


# --- bodies and previews -----------------------------------------------------------------


def form_body(cls: type[RequestBase], values: Mapping[str, Any]) -> dict[str, Any]:
    """The request body a form's values stand for.

    Left out: values equal to an optional field's default, :data:`OMIT`, empty lists, an
    ``extra_params`` with nothing set, and the fields the detected mode refuses or ignores
    (video-c's ``aspect_ratio`` once a first frame is set). Shots get their ``index`` from
    their position. Values are not judged here: that is :func:`preview`'s job.

    Example:
        >>> from genlab.catalog import CATALOG, OMIT
        >>> form_body(CATALOG["video-a"], {"prompt": "a fox", "duration": 4, "resolution": OMIT})
        {'model': 'video-a', 'prompt': 'a fox', 'duration': 4}
    """
    name = cls.model_id()
    body: dict[str, Any] = {"model": name}
    for spec in form_fields(cls):
        value = _compose(spec, values.get(spec.name, OMIT))
        if value is not OMIT:
            body[spec.name] = value
    for hidden in hidden_fields(cls, detect_mode(cls, body)):
        body.pop(hidden, None)
    return body


def _compose(spec: FieldSpec, value: Any) -> Any:
    # Values of an unexpected shape go into the body as given: the catalog says what is wrong.
    if value is OMIT or value is None:
        return OMIT
    if spec.kind in ("references", "shots") and isinstance(value, list | tuple):
        if not value:
            return OMIT
        if spec.kind == "shots":
            return [
                {**shot, "index": i} if isinstance(shot, Mapping) else shot
                for i, shot in enumerate(value)
            ]
        return [_item(item) for item in value]
    if spec.kind == "extra" and isinstance(value, Mapping):
        known = {s.name: s for s in spec.fields}
        out = {}
        for key, sub_value in value.items():
            # Keys the catalog does not name pass through untouched, as the service allows.
            composed = _compose(known[key], sub_value) if key in known else sub_value
            if composed is not OMIT:
                out[key] = composed
        return out or OMIT
    if not spec.required and type(value) is type(spec.default) and value == spec.default:
        return OMIT
    return value


def _item(item: Any) -> Any:
    if isinstance(item, Mapping):
        return {k: v for k, v in item.items() if v is not OMIT and v is not None}
    return item


def hidden_fields(cls: type[RequestBase], mode: Mode | None) -> dict[str, str]:
    """Fields a mode refuses or ignores, with the reason a form shows in their place.

    Example:
        >>> from genlab.catalog import CATALOG, Mode
        >>> hidden_fields(CATALOG["video-c"], Mode.FIRST_FRAME)
        {'aspect_ratio': 'not accepted in image-to-video, first frame mode: the output follows the first frame'}
    """  # noqa: E501
    if mode is None:
        return {}
    out = {
        name: f"not accepted in {mode.label} mode: {reason}"
        for name, reason in cls.REJECTED_IN_MODE.get(mode, {}).items()
    }
    for name, reason in cls.IGNORED_IN_MODE.get(mode, {}).items():
        out.setdefault(name, f"ignored in {mode.label} mode: {reason}")
    return out


def detect_mode(cls: type[RequestBase], body: Mapping[str, Any]) -> Mode | None:
    """The mode a body's references (and multi-shot) decide, even when the body is invalid.

    Uses the class's own mode logic on a leniently built instance, so the rules stay in one
    place. Never raises; None when nothing can be said.

    Example:
        >>> from genlab.catalog import CATALOG
        >>> str(detect_mode(CATALOG["video-a"], {"prompt": "a fox"}))
        'text-to-video'
        >>> str(detect_mode(CATALOG["video-a"], {"prompt": "a fox", "reference_images": [
        ...     {"url": "https://example.com/a.png", "reference_type": "first_frame"}]}))
        'first-frame'
    """
    try:
        data: dict[str, Any] = {}
        for name, info in cls.model_fields.items():
            if name not in body:
                continue
            value = body[name]
            inner = _unwrap_optional(info.annotation)
            if name in cls.LIST_RULES and isinstance(value, list):
                (item,) = typing.get_args(inner) or (None,)
                value = [_lenient(item, v) for v in value]
            elif isinstance(inner, type) and issubclass(inner, BaseModel):
                value = _lenient(inner, value)
            data[name] = value
        instance = cls.model_construct(**data)
        return instance._detect_mode()
    except Exception:  # a preview must never fail; the validation errors say what is wrong
        return None


def _lenient(model: Any, value: Any) -> Any:
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return value
    if not isinstance(value, Mapping):
        return value
    try:
        return model.model_validate(value)
    except Exception:
        try:
            return model.model_construct(**{str(k): v for k, v in value.items()})
        except Exception:
            return value


def preview(body: Mapping[str, Any] | Any) -> Preview:
    """Judge a body without raising: validity, mode, every error, notices and credits.

    Example:
        >>> p = preview({"model": "video-a", "prompt": "a fox", "duration": 5})
        >>> p.valid, p.mode.label, p.credits_text
        (True, 'text-to-video', '800 credits')
    """
    model = body.get("model") if isinstance(body, Mapping) else None
    cls = CATALOG.get(model) if isinstance(model, str) else None
    name = model if cls is not None else None
    try:
        request = validate(body, warn=False)  # the form shows the changes
    except InvalidParameterError as exc:
        mode = detect_mode(cls, body) if cls is not None else None
        hidden = hidden_fields(cls, mode) if cls is not None else {}
        return Preview(False, None, mode, list(exc.errors), model=name, hidden=hidden)
    except Exception as exc:  # never raise: a form calls this on every keystroke
        problem = ErrorDetail((), f"the request could not be checked: {exc}")
        return Preview(False, None, None, [problem], model=name)
    try:
        credits = estimate_credits(request)
    except Exception:
        credits = None
    return Preview(
        True,
        request,
        request.mode,
        [],
        request.notices,
        credits,
        request.model_name,
        hidden_fields(type(request), request.mode),
    )


__all__ = [
    "OMIT",
    "FieldKind",
    "FieldSpec",
    "Preview",
    "detect_mode",
    "field_label",
    "form_body",
    "form_fields",
    "hidden_fields",
    "preview",
]
