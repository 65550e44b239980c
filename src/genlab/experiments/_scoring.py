"""Scorers: plain functions of a kept result returning a number (or None where they cannot
judge). Built-in ones are named (``"motion"``, ``"sharpness"``, ... from
:mod:`genlab.media.scores`); any function of a :class:`genlab.Result` plugs in.

Example:
    >>> def words(result):
    ...     return float(len((result.prompt or "").split()))
    >>> from genlab.media import Result
    >>> scorers = resolve_scorers([words])
    >>> run_scorers(Result(task_id="t1", status="succeeded", request={"prompt": "a kite"}),
    ...             scorers)
    {'words': 2.0}
"""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from genlab.media import Result

logger = logging.getLogger("genlab")

Scorer = Callable[[Result], "float | int | None"]


def _builtin() -> Mapping[str, Scorer]:
    try:
        module = importlib.import_module("genlab.media.scores")
    except ModuleNotFoundError:
        return {}
    found: Mapping[str, Scorer] = getattr(module, "SCORERS", {})
    return found


def resolve_scorers(scorers: Iterable[str | Scorer] | None) -> dict[str, Scorer]:
    """Name -> function for ``scorers`` (built-in names, or functions named by their
    ``__name__``).

    Raises:
        ValueError: an unknown name, something neither a name nor a function, or two scorers
            of the same name.
    """
    out: dict[str, Scorer] = {}
    for scorer in scorers or ():
        if isinstance(scorer, str):
            builtin = _builtin()
            if scorer not in builtin:
                known = ", ".join(sorted(builtin)) or "none in this genlab"
                raise ValueError(
                    f"unknown scorer {scorer!r}; the built-in ones are {known}, and any "
                    "function of a result returning a number plugs in: scorers=[my_score]"
                )
            name, function = scorer, builtin[scorer]
        elif callable(scorer):
            name, function = getattr(scorer, "__name__", type(scorer).__name__), scorer
        else:
            raise ValueError(f"a scorer is a built-in name or a function, got {scorer!r}")
        if name in out:
            raise ValueError(f"two scorers are named {name!r}; give one function another name")
        out[name] = function
    return out


def run_scorers(result: Result, scorers: Mapping[str, Scorer]) -> dict[str, float | None]:
    """Each scorer's number for ``result``; None where one cannot judge or fails (logged)."""
    scores: dict[str, float | None] = {}
    for name, function in scorers.items():
        value: Any
        try:
            value = function(result)
        except Exception as exc:  # one scorer's trouble never loses the others' scores
            logger.warning("genlab: scorer %s failed on task %s: %s", name, result.task_id, exc)
            value = None
        if value is not None:
            try:
                value = float(value)
            except (TypeError, ValueError):
                logger.warning("genlab: scorer %s gave %r for task %s, not a number",
                               name, value, result.task_id)
                value = None
        scores[name] = None if value is None or math.isnan(value) else value
    return scores
