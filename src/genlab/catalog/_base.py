"""The request classes' common base: shared class data, typed views of common fields, and the
rule engine.

A request class declares its rules as data (class variables and field constraints); the one
``@model_validator(mode="after")`` here reads that data, decides the input mode and collects
every broken rule. Model-specific rules that are not data live in ``_extra_rules`` overrides
in the model's own class.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from genlab.catalog._media import MediaRequirements
from genlab.catalog._parts import REF_TYPES, ListRule, Mode, Reference

# (location, message) pairs collected by the rule engine.
Problem = tuple[tuple[str | int, ...], str]


@dataclass(frozen=True, slots=True)
class Adjustment:
    """A value the catalog changed because the interface says the service changes it
    (image-b's resolution: "other values are downgraded"): the request is sent with ``made``.

    ``validate()`` warns of each (:class:`genlab.RequestAdjustedWarning`), the Studio shows
    them, and a result keeps them (``Result.adjusted``) for its card.

    Attributes:
        field: where, as the body names it (``resolution``,
            ``reference_images[0].reference_type``).
        asked: the value given.
        made: the value sent.
        why: what the model does, for people (``image-b makes 1K only``).

    Example:
        >>> from genlab.catalog import validate
        >>> (change,) = validate({"model": "image-b", "prompt": "x", "resolution": "2K"},
        ...                      warn=False).adjustments
        >>> change.message
        'resolution: asked 2K; image-b makes 1K only'
        >>> change.sent
        'resolution 2K is sent as 1K'
    """

    field: str
    asked: Any
    made: Any
    why: str

    @property
    def message(self) -> str:
        """What was asked and what the model does, in one phrase (a card's and the Studio's)."""
        return f"{self.field}: asked {said(self.asked)}; {self.why}"

    @property
    def sent(self) -> str:
        """Both values, in one phrase: ``resolution 2K is sent as 1K``."""
        return f"{self.field} {said(self.asked)} is sent as {said(self.made)}"

    def __str__(self) -> str:
        return self.message


def said(value: Any) -> str:
    """A value as a person gave it: a plain word as itself, anything else as its repr.

    Example:
        >>> said("2K"), said(""), said("two words"), said(4)
        ('2K', "''", "'two words'", '4')
    """
    if isinstance(value, str):
        plain = value and value.isprintable() and not any(c.isspace() for c in value)
        return value if plain else repr(value)
    return repr(value)


class RequestBase(BaseModel):
    """Fields, data and the rule engine shared by every request class.

    Example:
        >>> from genlab.catalog import CATALOG
        >>> all(issubclass(cls, RequestBase) for cls in CATALOG.values())
        True
        >>> CATALOG["video-a"].model_id()
        'video-a'
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    KIND: ClassVar[Literal["video", "image"]]
    SUMMARY: ClassVar[str] = ""
    # A valid body, for docs, demos, forms and tests parametrized over the catalog.
    EXAMPLE: ClassVar[Mapping[str, Any]] = {}
    MODES: ClassVar[frozenset[Mode]]
    PROMPT_MAX: ClassVar[int | None] = None
    LIST_RULES: ClassVar[Mapping[str, ListRule]] = {}
    MEDIA: ClassVar[Mapping[str, MediaRequirements]] = {}
    CREDITS_PER_SECOND: ClassVar[Mapping[str, int] | None] = None
    # Why a field this model does not accept is refused, for a better message.
    NOT_ACCEPTED: ClassVar[Mapping[str, str]] = {}
    # Fields refused in some modes, and fields merely ignored in some modes.
    REJECTED_IN_MODE: ClassVar[Mapping[Mode, Mapping[str, str]]] = {}
    IGNORED_IN_MODE: ClassVar[Mapping[Mode, Mapping[str, str]]] = {}
    # The output's aspect ratio when none is requested and no input decides it.
    DEFAULT_ASPECT: ClassVar[str]
    # Modes whose output length (and shape) follows the input video, with an optional cap on
    # the length.
    FOLLOWS_INPUT_VIDEO: ClassVar[Mapping[Mode, float | None]] = {}
    # The most seconds input videos plus the requested output may last together (video-a).
    MAX_INPUT_PLUS_OUTPUT: ClassVar[float | None] = None

    _mode: Mode = PrivateAttr(default=Mode.TEXT_TO_VIDEO)
    _notices: list[str] = PrivateAttr(default_factory=list)
    _adjustments: list[Adjustment] = PrivateAttr(default_factory=list)

    @classmethod
    def model_id(cls) -> str:
        """The ``model`` value this class accepts, read from its ``Literal`` tag.

        Example:
            >>> from genlab.catalog import VideoA
            >>> VideoA.model_id()
            'video-a'
        """
        annotation = cls.model_fields["model"].annotation
        return str(get_args(annotation)[0])

    @property
    def model_name(self) -> str:
        """The model value, e.g. ``video-a``."""
        return str(self.__dict__["model"])

    @property
    def kind(self) -> Literal["video", "image"]:
        """``"video"`` or ``"image"``: which endpoint serves this request."""
        return self.KIND

    @property
    def mode(self) -> Mode:
        """The input mode decided by the references (and multi-shot)."""
        return self._mode

    @property
    def notices(self) -> tuple[str, ...]:
        """Things the service will adjust or ignore, e.g. a downgraded resolution."""
        return tuple(self._notices)

    @property
    def adjustments(self) -> tuple[Adjustment, ...]:
        """The values the catalog changed as the interface allows (each is also a notice).

        Example:
            >>> from genlab.catalog import validate
            >>> validate({"model": "image-b", "prompt": "x"}).adjustments
            ()
        """
        return tuple(self._adjustments)

    @property
    def prompt_text(self) -> str:
        """The prompt, or ``""`` for a model or request without one."""
        value = self.__dict__.get("prompt")
        return value if isinstance(value, str) else ""

    @property
    def resolution_label(self) -> str | None:
        """The resolution tier as sent (``"720P"``, ``"1K"``, ``"512"`` ...), or None."""
        value = self.__dict__.get("resolution")
        return None if value is None else str(value)

    @property
    def aspect_label(self) -> str | None:
        """The ``aspect_ratio`` field (``"16:9"``, ``"adaptive"`` ...), or None when unset.

        Example:
            >>> from genlab.catalog import validate
            >>> validate({"model": "video-b", "prompt": "x"}).aspect_label
            'adaptive'
        """
        value = self.__dict__.get("aspect_ratio")
        return None if value is None else str(value)

    @property
    def quality_label(self) -> str | None:
        """The ``quality`` tier (image-a: ``"low"``, ``"medium"``, ``"high"``), or None."""
        value = self.__dict__.get("quality")
        return None if value is None else str(value)

    @property
    def requested_duration(self) -> float | None:
        """The ``duration`` field in seconds, or None for a model or request without one."""
        value = self.__dict__.get("duration")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    def to_body(self) -> dict[str, Any]:
        """The JSON object sent on the wire: the fields that were given, normalised."""
        body: dict[str, Any] = self.model_dump(mode="json", exclude_unset=True)
        body["model"] = self.model_name
        return body

    def references(self, list_name: str) -> Sequence[Any]:
        """The items of one reference list (empty when omitted or null)."""
        value = self.__dict__.get(list_name)
        return value if isinstance(value, list) else []

    def media_requirements(self, list_name: str) -> MediaRequirements | None:
        """The media rules for one reference list, for this request's mode."""
        return self.MEDIA.get(list_name)

    def credits_per_second(self) -> int | None:
        """Published price per output second for this request, or None when not published."""
        table = self.CREDITS_PER_SECOND
        resolution = self.resolution_label
        if table is None or resolution is None:
            return None
        return table.get(resolution)

    # --- the rule engine -------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _not_too_deep(cls, data: Any) -> Any:
        # Keys that pass through untouched (extra_params, image reference objects, shots)
        # could otherwise nest beyond what pydantic can serialize (~255 levels), and to_body()
        # would fail after validation said yes. No body of the interface nests that deep.
        depth = _depth_beyond(data, MAX_NESTING)
        if depth is not None:
            model = data.get("model") if isinstance(data, dict) else None
            message = (
                f"{model if isinstance(model, str) else 'the request'}: values are nested more "
                f"than {MAX_NESTING} levels deep; flatten them"
            )
            raise PydanticCustomError(
                "genlab_rules", "{summary}", {"summary": message, "problems": [((), message)]}
            )
        return data

    @model_validator(mode="after")
    def _check_rules(self) -> RequestBase:
        problems: list[Problem] = []
        notices: list[str] = []
        self._adjustments = []
        self._check_references(problems, notices)
        mode = self._detect_mode()
        if mode not in self.MODES:
            problems.append(((), self._unsupported_mode_message(mode)))
        self._check_mode_fields(mode, problems, notices)
        if self._prompt_required(mode) and not self.__dict__.get("prompt", "").strip():
            problems.append(
                (("prompt",), f"{self.model_name}: prompt is required in {mode.label} mode; "
                 "describe what to generate")
            )
        self._extra_rules(mode, problems, notices)
        if problems:
            raise PydanticCustomError(
                "genlab_rules",
                "{summary}",
                {"summary": "; ".join(m for _, m in problems), "problems": problems},
            )
        self._mode = mode
        self._notices = notices
        return self

    @abstractmethod
    def _detect_mode(self) -> Mode:
        """The input mode, from the references. Each kind of request decides it."""

    def _extra_rules(self, mode: Mode, problems: list[Problem], notices: list[str]) -> None:
        """Model-specific rules that are not data. Overridden where needed."""

    def _adjust(self, notices: list[str], field: str, asked: Any, made: Any, why: str) -> None:
        """Record that ``field`` is sent as ``made`` instead of ``asked``, as the interface
        says the service does; the caller sets the value. Every change the catalog makes to a
        request goes through here, so each one is told (a notice, a warning, a card line)."""
        change = Adjustment(field, asked, made, why)
        self._adjustments.append(change)
        notices.append(change.message)

    def _unsupported_mode_message(self, mode: Mode) -> str:
        modes = ", ".join(m.label for m in sorted(self.MODES))
        return f"{self.model_name} does not support {mode.label}; it supports {modes}"

    def _check_references(self, problems: list[Problem], notices: list[str]) -> None:
        for list_name, rule in self.LIST_RULES.items():
            items = self.__dict__.get(list_name)
            if not items:
                continue
            media = self.MEDIA.get(list_name)
            allow_data = media.allow_data_uri if media else False
            for i, item in enumerate(items):
                loc = (list_name, i)
                url = item if isinstance(item, str) else item.url
                problem = _url_problem(url, media.kind if media else "image", allow_data)
                if problem:
                    text = f"{self.model_name}: {list_name}[{i}].url {problem}"
                    problems.append(((*loc, "url"), text))
                if not isinstance(item, Reference):
                    continue
                role = item.reference_type
                if role in (None, "") or role in rule.roles:
                    continue
                if role not in REF_TYPES and rule.unknown_as_asset:
                    # The interface says unknown roles are treated as asset for this list.
                    self._adjust(notices, f"{list_name}[{i}].reference_type", role, "asset",
                                 f"{self.model_name} treats an unknown role as asset")
                    item.reference_type = "asset"
                    continue
                allowed = ", ".join(sorted(rule.roles))
                problems.append(
                    (
                        (*loc, "reference_type"),
                        f"{self.model_name}: {list_name}[{i}].reference_type {role!r} is not "
                        f"accepted in {list_name}; use one of {allowed}",
                    )
                )

    def _check_mode_fields(self, mode: Mode, problems: list[Problem], notices: list[str]) -> None:
        given = self.model_fields_set
        for name, reason in self.REJECTED_IN_MODE.get(mode, {}).items():
            if name in given:
                problems.append(
                    (
                        (name,),
                        f"{self.model_name}: {name} is not accepted in {mode.label} mode "
                        f"({reason}); remove it",
                    )
                )
        for name, reason in self.IGNORED_IN_MODE.get(mode, {}).items():
            if name in given:
                notices.append(f"{name} is ignored in {mode.label} mode ({reason})")

    def _prompt_required(self, mode: Mode) -> bool:
        """By default a prompt is needed only when there is nothing else to generate from."""
        return mode in (Mode.TEXT_TO_VIDEO, Mode.TEXT_TO_IMAGE)


MAX_NESTING = 32


def _depth_beyond(value: Any, limit: int) -> int | None:
    """``limit + 1`` when lists and objects in ``value`` nest deeper than ``limit``, else None.

    Iterative, so a pathological body cannot exhaust the stack while being measured.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return depth
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in item)
    return None


def _url_problem(url: str, kind: str, allow_data: bool) -> str | None:
    lowered = url[:16].lower()
    if lowered.startswith(("http://", "https://")):
        return None
    if lowered.startswith("data:"):
        if kind != "image":
            return f"is a data: URI; {kind} references must be public http(s) URLs"
        if not lowered.startswith("data:image/"):
            return "is a data: URI that is not data:image/; send an image or a public URL"
        if not allow_data:
            return "is a data:image/ value; this model needs a public http(s) URL"
        return None
    shown = url if len(url) <= 60 else url[:57] + "..."
    return f"{shown!r} is not an http(s) URL"
