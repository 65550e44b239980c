"""Scorers in experiments: the built-in ones by name (:mod:`genlab.media.scores`), and any
function of a :class:`genlab.Result` returning a number.

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

from collections.abc import Iterable, Mapping

from genlab.media import Result
from genlab.media.scores import Scorer, resolve, score


def resolve_scorers(scorers: Iterable[str | Scorer] | None) -> dict[str, Scorer]:
    """Name -> function for ``scorers``, checked before anything runs
    (:func:`genlab.media.scores.resolve`).

    Example:
        >>> def words(result):
        ...     return len((result.prompt or "").split())
        >>> sorted(resolve_scorers(["sharpness", words]))
        ['sharpness', 'words']
    """
    return resolve(list(scorers or ()))


def run_scorers(result: Result, scorers: Mapping[str, Scorer]) -> dict[str, float | None]:
    """Each scorer's number for ``result``; None where one cannot judge or fails (logged).

    Example:
        >>> def letters(result):
        ...     return float(len(result.prompt or ""))
        >>> run_scorers(Result(task_id="t1", status="succeeded", request={"prompt": "kite"}),
        ...             resolve_scorers([letters]))
        {'letters': 4.0}
    """
    return score(result, scorers)


__all__ = ["Scorer", "resolve_scorers", "run_scorers"]
