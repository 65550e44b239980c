"""A comparison's grid: prompts x models x swept parameters x repeats, validated and priced.

Nothing here sends anything: :func:`plan` is what ``genlab.compare`` will run, and what it
will cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, Union, get_args, get_origin

from genlab.catalog import CATALOG, RequestBase, checked


@dataclass(slots=True)
class Run:
    """One cell entry of the grid, before it is sent.

    Example:
        >>> run = plan("a kite", ["image-b", "video-a"], {"duration": 3}).runs[1]
        >>> run.model, run.body["duration"], run.credits, run.invalid
        ('video-a', 3, 480, None)
    """

    prompt: str
    model: str
    values: dict[str, Any]  # each parameter as applied; None where the model has no such field
    repeat: int
    body: dict[str, Any]
    request: RequestBase | None = None
    invalid: str | None = None  # the catalog's message when the body breaks a rule
    credits: int | None = None


@dataclass(slots=True)
class Plan:
    """The runs of a grid, validated and priced; nothing sent yet.

    Example:
        >>> p = plan(["a fox"], ["video-a"], {"duration": [2, 4], "resolution": "480P"})
        >>> p.money_line
        '2 runs: 480 credits estimated'
    """

    runs: list[Run]
    params: tuple[str, ...]
    swept: tuple[str, ...]
    estimate: int = field(init=False)
    invalid: int = field(init=False)
    unpriced: int = field(init=False)

    def __post_init__(self) -> None:
        valid = [r for r in self.runs if r.request is not None]
        self.invalid = len(self.runs) - len(valid)
        self.estimate = sum(r.credits or 0 for r in valid)
        self.unpriced = sum(r.credits is None for r in valid)

    @property
    def money_line(self) -> str:
        """E.g. ``12 runs (2 invalid): 4,800 credits estimated; 8 runs have no published price``;
        without any price, ``5 runs: no published price, so no estimate``.

        Example:
            >>> plan(["a fox"], ["video-b", "video-c"], {}).money_line
            '2 runs: no published price, so no estimate'
        """
        total = len(self.runs)
        text = f"{total:,} run{'' if total == 1 else 's'}"
        if self.invalid:
            text += f" ({self.invalid:,} invalid)"
        valid = total - self.invalid
        if not valid:
            return text + ": nothing to send"
        if self.unpriced == valid:  # "0 credits estimated" would read as free
            return text + (": no published price, so no estimate" if valid == total else
                           f"; {valid:,} to send, with no published price, so no estimate")
        text += f": {self.estimate:,} credits estimated"
        if self.unpriced:
            verb = "has" if self.unpriced == 1 else "have"
            text += f"; {self.unpriced:,} run{'' if self.unpriced == 1 else 's'} {verb} no "
            text += "published price"
        return text


def _accepts_list(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (list, tuple, Sequence) or annotation in (list, tuple):
        return True
    if origin in (Union, UnionType):
        return any(_accepts_list(arm) for arm in get_args(annotation))
    return False


def _is_sweep(name: str, value: Any, classes: Sequence[type[RequestBase]]) -> bool:
    if not isinstance(value, list | tuple):
        return False
    fields = [cls.model_fields[name] for cls in classes if name in cls.model_fields]
    if any(_accepts_list(f.annotation) for f in fields):
        # A list-valued field (reference lists): one list applies to every run; a list of
        # lists is a sweep over them.
        return bool(value) and all(isinstance(v, list | tuple) for v in value)
    return True


def _as_list(value: str | Iterable[str], what: str) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    if not items:
        raise ValueError(f"compare needs at least one {what}")
    return items


def plan(
    prompts: str | Iterable[str],
    models: str | Iterable[str],
    params: Mapping[str, Any] | None = None,
    repeats: int = 1,
) -> Plan:
    """Expand and validate a grid without sending anything: what ``compare`` will run.

    A parameter given as a list is swept; other values apply to every run. Each parameter is
    applied only to the models that have that field; a model without a swept field gets one
    run (its column is empty), not one per value. A value a model refuses makes an invalid
    run carrying the catalog's message.

    Raises:
        ValueError: an unknown model, a parameter no listed model has, ``model``/``prompt``
            in ``params``, an empty sweep, or ``repeats`` below 1.

    Example:
        >>> grid = plan(["a kite"], ["image-b", "video-a"], {"duration": [3, 5]})
        >>> [(run.model, run.values["duration"], run.credits) for run in grid.runs]
        [('image-b', None, None), ('video-a', 3, 480), ('video-a', 5, 800)]
    """
    prompt_list = _as_list(prompts, "prompt")
    model_list = list(dict.fromkeys(_as_list(models, "model")))
    unknown = [m for m in model_list if m not in CATALOG]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}; the catalog has {', '.join(CATALOG)}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number of at least 1, got {repeats!r}")
    given = dict(params or {})
    classes = [CATALOG[m] for m in model_list]
    for name in given:
        if name in ("model", "prompt"):
            raise ValueError(f"give {name}s with {name}s=[...], not in params")
        if not any(name in cls.model_fields for cls in classes):
            raise ValueError(
                f"{name!r} is not a field of {', '.join(model_list)}; "
                "see genlab.CATALOG[model].model_fields"
            )
    swept = tuple(k for k, v in given.items() if _is_sweep(k, v, classes))
    for name in swept:
        if not given[name]:
            raise ValueError(f"params[{name!r}] is an empty list: there is nothing to sweep")
    fixed = {k: v for k, v in given.items() if k not in swept}
    combos = list(itertools.product(*(given[k] for k in swept)))

    runs: list[Run] = []
    for prompt, model in itertools.product(prompt_list, model_list):
        fields = CATALOG[model].model_fields
        seen: set[str] = set()
        for combo in combos:
            chosen = {**fixed, **dict(zip(swept, combo, strict=True))}
            applied = {k: v for k, v in chosen.items() if k in fields}
            identity = repr([applied.get(k, "<not a field>") for k in swept])
            if identity in seen:  # the model lacks a swept field: these runs would be equal
                continue
            seen.add(identity)
            body = {"model": model, "prompt": prompt, **applied}
            request, invalid, credits = checked(body)
            values = {k: applied.get(k) for k in given}
            runs += [
                Run(prompt, model, values, repeat, body, request, invalid, credits)
                for repeat in range(1, repeats + 1)
            ]
    return Plan(runs, tuple(given), swept)
