"""The one sweep grammar of every grid: a list value sweeps, any other value is fixed.

``{"duration": [4, 8], "resolution": "720P"}`` is two cells per model, both 720P. A field
whose value is itself a list (reference images) takes one list for every cell; a list of
lists sweeps over them. Each parameter applies only to the models that have the field, so a
model without a swept field gets one cell, not one per value.

Example:
    >>> grid = sweep({"duration": [4, 8], "resolution": "720P"}, ["video-a", "image-b"])
    >>> grid.swept, grid.fixed
    (('duration',), {'resolution': '720P'})
    >>> grid.for_model("video-a")
    [{'duration': 4, 'resolution': '720P'}, {'duration': 8, 'resolution': '720P'}]
    >>> grid.for_model("image-b")
    [{'resolution': '720P'}]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, Union, get_args, get_origin

from genlab.catalog import CATALOG, RequestBase


def _accepts_list(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (list, tuple, Sequence) or annotation in (list, tuple):
        return True
    if origin in (Union, UnionType):
        return any(_accepts_list(arm) for arm in get_args(annotation))
    return False


def is_sweep(name: str, value: Any, classes: Sequence[type[RequestBase]] = ()) -> bool:
    """Whether ``value`` sweeps ``name``: a list or tuple does, unless one of ``classes``
    takes a list in that field (then only a list of lists does).

    Example:
        >>> is_sweep("duration", [4, 8]), is_sweep("duration", 4)
        (True, False)
    """
    if not isinstance(value, list | tuple):
        return False
    fields = [cls.model_fields[name] for cls in classes if name in cls.model_fields]
    if any(_accepts_list(f.annotation) for f in fields):
        # A list-valued field (reference lists): one list applies to every cell; a list of
        # lists is a sweep over them.
        return bool(value) and all(isinstance(v, list | tuple) for v in value)
    return True


def combinations(
    values: Mapping[str, Any], classes: Sequence[type[RequestBase]] = (), *, what: str = "params"
) -> list[dict[str, Any]]:
    """Every combination of ``values`` under the grammar (see :func:`is_sweep`), in the order
    given: the first name varies slowest.

    Raises:
        ValueError: a swept value is an empty list.

    Example:
        >>> combinations({"subject": ["kite", "owl"], "place": "dunes"}, what="vars")
        [{'subject': 'kite', 'place': 'dunes'}, {'subject': 'owl', 'place': 'dunes'}]
    """
    axes = []
    for name, value in values.items():
        if is_sweep(name, value, classes):
            if not value:
                raise ValueError(f"{what}[{name!r}] is an empty list: there is nothing to sweep; "
                                 "give it at least one value")
            axes.append(list(value))
        else:
            axes.append([value])
    return [dict(zip(values, combo, strict=True)) for combo in itertools.product(*axes)]


@dataclass(slots=True)
class Sweep:
    """Request parameters expanded by the grammar, checked against the models they go to.

    Attributes:
        names: every parameter given, in order.
        fixed: the parameters that apply to every cell.
        swept: the names of the swept parameters.
        combos: every combination (fixed values included).
    """

    names: tuple[str, ...]
    fixed: dict[str, Any]
    swept: tuple[str, ...]
    combos: list[dict[str, Any]]
    _per_model: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)

    def for_model(self, model: str) -> list[dict[str, Any]]:
        """The distinct parameter sets ``model`` gets: each combination restricted to the
        model's fields (a swept field it lacks does not multiply its cells)."""
        known = self._per_model.get(model)
        if known is not None:
            return known
        fields = CATALOG[model].model_fields
        seen: set[str] = set()
        out = []
        for combo in self.combos:
            applied = {k: v for k, v in combo.items() if k in fields}
            identity = repr([applied.get(k, "<not a field>") for k in self.swept])
            if identity not in seen:
                seen.add(identity)
                out.append(applied)
        self._per_model[model] = out
        return out


def check_models(models: Iterable[str], what: str = "a grid") -> list[str]:
    """The models, in order, once each; refuses an empty list or a model the catalog lacks.

    Example:
        >>> check_models(["video-a", "video-a", "image-b"])
        ['video-a', 'image-b']
    """
    model_list = list(dict.fromkeys([models] if isinstance(models, str) else models))
    if not model_list:
        raise ValueError(f"{what} needs at least one model: models=['image-b']")
    unknown = [m for m in model_list if m not in CATALOG]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}; the catalog has {', '.join(CATALOG)}")
    return model_list


def sweep(params: Mapping[str, Any] | None, models: Sequence[str]) -> Sweep:
    """Expand ``params`` for ``models`` (see the module docstring).

    Raises:
        ValueError: ``model`` or ``prompt`` in ``params``, a parameter none of the models
            has, or an empty sweep.

    Example:
        >>> sweep({"duration": [4, 8]}, ["video-a"]).combos
        [{'duration': 4}, {'duration': 8}]
    """
    given = dict(params or {})
    classes = [CATALOG[m] for m in models]
    for name in given:
        if name in ("model", "prompt"):
            raise ValueError(f"give {name}s with {name}s=[...], not in params")
        if not any(name in cls.model_fields for cls in classes):
            raise ValueError(
                f"{name!r} is not a field of {', '.join(models)}; "
                "see genlab.CATALOG[model].model_fields"
            )
    swept = tuple(k for k, v in given.items() if is_sweep(k, v, classes))
    fixed = {k: v for k, v in given.items() if k not in swept}
    return Sweep(tuple(given), fixed, swept, combinations(given, classes))
