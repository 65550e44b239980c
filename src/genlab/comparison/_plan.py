"""A comparison's grid: prompts x models x swept parameters x repeats, validated and priced
by :mod:`genlab.grid` (a comparison is a grid without prompt versions).

Nothing here sends anything: :func:`plan` is what ``genlab.compare`` will run, and what it
will cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from genlab.catalog import RequestBase
from genlab.grid import Checker, check_models, money_line, sweep


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
        """E.g. ``12 runs (2 invalid): 10 to send: 4,000 credits estimated; 8 runs have no
        published price``; without any price, ``5 runs: no published price, so no estimate``
        (the one money line, :func:`genlab.grid.money_line`).

        Example:
            >>> plan(["a fox"], ["video-b", "video-c"], {}).money_line
            '2 runs: no published price, so no estimate'
        """
        sending = [r.credits for r in self.runs if r.request is not None]
        return money_line(len(self.runs), unit="run", invalid=self.invalid, sending=sending)


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
    model_list = check_models(_as_list(models, "model"), "compare")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number of at least 1, got {repeats!r}")
    swept = sweep(params, model_list)
    check = Checker(addresses=False)  # a comparison finds nothing by address
    runs: list[Run] = []
    for prompt, model in itertools.product(prompt_list, model_list):
        for n, applied in enumerate(swept.for_model(model)):
            body = {"model": model, "prompt": prompt, **applied}
            cell = check(body, (model, prompt, n))
            values = {k: applied.get(k) for k in swept.names}
            runs += [
                Run(prompt, model, values, repeat, body, cell.request, cell.invalid, cell.credits)
                for repeat in range(1, repeats + 1)
            ]
    return Plan(runs, swept.names, swept.swept)
