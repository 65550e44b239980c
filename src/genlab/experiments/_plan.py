"""An experiment's matrix: prompt versions x variable sets x models x swept parameters x
seeds, validated and priced before anything is sent, by the one grid (:mod:`genlab.grid`):
``params`` follow its sweep grammar as in ``genlab.compare`` (a list sweeps, a scalar is
fixed), and so do ``vars``.

Each cell's body is the filled prompt, the parameters the model has, and its seed where the
model's request takes one (for other models the seed only numbers a fresh sample). A body the
model refuses is an invalid cell carrying the catalog's message; it is never sent.

Example:
    >>> import os, tempfile
    >>> from genlab.history import History
    >>> from genlab.experiments import prompt
    >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> kite = prompt("A {subject} at dusk", name="kite", history=history)
    >>> cells = plan_cells([kite], ["image-d", "video-b"], {"subject": ["kite", "owl"]},
    ...                    {"resolution": "512"}, [1, 2])
    >>> len(cells), sum(c.invalid is not None for c in cells)
    (8, 4)
    >>> [c for c in cells if c.model == "video-b"][0].invalid.splitlines()[0]
    "video-b: resolution must be one of '480P' or '720P' (got '512')"
    >>> history.close()
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import BaseModel

from genlab.catalog import CATALOG, RequestBase
from genlab.experiments._prompt import Prompt, fill
from genlab.grid import Checker, check_models, combinations, sweep


@dataclass(slots=True)
class Cell:
    """One planned generation of an experiment.

    Attributes:
        key: the cell's stable identity (prompt version, variables, model, seed).
        prompt: the prompt version.
        variables: the values its slots were filled with.
        model: the model.
        seed: the seed (sent where the model takes one; else it numbers a sample).
        text: the filled prompt.
        body: the request body.
        request: the validated request; None when the model refuses the body.
        invalid: the catalog's message for a refused body.
        credits: the published price; None when unknown or invalid.
        address: the request's content address.
        params: the swept request parameters as applied to this cell (``{"duration": 8}``);
            empty when nothing is swept.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> from genlab.experiments import plan_cells
        >>> kite = genlab.prompt("A {colour} kite", name="kite", history=history)
        >>> cell = plan_cells([kite], ["image-b"], {"colour": "red"})[0]
        >>> cell.model, cell.text, cell.variables, cell.seed
        ('image-b', 'A red kite', {'colour': 'red'}, 1)
        >>> history.close()
    """

    key: str
    prompt: Prompt
    variables: dict[str, Any]
    model: str
    seed: int | None
    text: str
    body: dict[str, Any]
    request: RequestBase | None
    invalid: str | None
    credits: int | None
    address: str | None
    params: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The cell as the history records it."""
        return {"cell": self.key, "prompt_name": self.prompt.name,
                "prompt_version": self.prompt.version, "variables": self.variables,
                "model": self.model, "seed": self.seed, "address": self.address}


def variable_sets(variables: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every combination of the variables' values, by the grid's one sweep grammar
    (:func:`genlab.grid.combinations`: a list sweeps, any other value is the one value).

    Example:
        >>> variable_sets({"subject": ["kite", "owl"], "place": "dunes"})
        [{'subject': 'kite', 'place': 'dunes'}, {'subject': 'owl', 'place': 'dunes'}]
    """
    return combinations(dict(variables or {}), what="vars")


def seed_field(cls: type[RequestBase]) -> tuple[str, ...] | None:
    """Where a model's request takes a seed: ``("seed",)``, ``("extra_params", "seed")``, or
    None when it takes none (read from the request class, so a new model needs nothing here).

    Example:
        >>> seed_field(CATALOG["video-b"]), seed_field(CATALOG["image-b"])
        (('extra_params', 'seed'), None)
    """
    fields = cls.model_fields
    if "seed" in fields:
        return ("seed",)
    extra = fields.get("extra_params")
    if extra is None:
        return None
    for arm in (extra.annotation, *get_args(extra.annotation)):
        if isinstance(arm, type) and issubclass(arm, BaseModel) and "seed" in arm.model_fields:
            return ("extra_params", "seed")
    return None


def cell_key(
    prompt: Prompt, variables: Mapping[str, Any], model: str, seed: int | None,
    params: Mapping[str, Any] | None = None,
) -> str:
    """A cell's stable identity: the same call in another process plans the same keys (the
    swept parameters count only when there are any, so earlier experiments keep theirs)."""
    parts: list[Any] = [prompt.name, prompt.version, dict(variables), model, seed]
    if params:
        parts.append(dict(params))
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _with_seed(where: tuple[str, ...] | None, body: dict[str, Any],
               seed: int | None) -> dict[str, Any]:
    if seed is not None and where == ("seed",):
        body["seed"] = seed
    elif seed is not None and where is not None:
        extra = dict(body.get("extra_params") or {})
        extra["seed"] = seed
        body["extra_params"] = extra
    return body


def check_matrix(prompts: Sequence[Prompt], sets: Sequence[Mapping[str, Any]]) -> None:
    """Refuse, before anything is planned, what makes no matrix of prompts: no prompt, a
    variable no version uses or a slot without values (models and parameters are the grid's
    to check: :func:`genlab.grid.check_models`, :func:`genlab.grid.sweep`)."""
    if not prompts:
        raise ValueError("an experiment needs at least one prompt: prompts=[kite, kite2]")
    given = set(sets[0]) if sets else set()
    for version in prompts:
        missing = [v for v in version.variables if v not in given]
        if missing:
            raise ValueError(
                f"{version.ref} needs a value for {', '.join(missing)} (nothing was sent): "
                f"vars={{{', '.join(repr(m) + ': [...]' for m in missing)}}}"
            )
    used = {v for p in prompts for v in p.variables}
    unused = sorted(given - used)
    if unused:
        raise ValueError(
            f"no prompt has a slot for {', '.join(unused)} (nothing was sent); the prompts' "
            f"variables are {', '.join(sorted(used)) or 'none'}"
        )


def plan_cells(
    prompts: Sequence[Prompt],
    models: Iterable[str],
    variables: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    seeds: Iterable[int | None] = (1,),
) -> list[Cell]:
    """Every cell of the matrix, validated and priced (see the module docstring); nothing is
    sent.

    Raises:
        ValueError: what makes no matrix (see :func:`check_matrix`).

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> kite = genlab.prompt("A {colour} kite", name="kite", history=history)
        >>> cells = plan_cells([kite], ["image-b", "image-d"], {"colour": ["red", "blue"]},
        ...                    seeds=[1, 2])
        >>> len(cells), sorted({cell.text for cell in cells})
        (8, ['A blue kite', 'A red kite'])
        >>> history.close()
    """
    if not prompts:
        raise ValueError("an experiment needs at least one prompt: prompts=[kite, kite2]")
    model_list = check_models(models, "an experiment")
    seed_list = list(dict.fromkeys(seeds))
    if not seed_list:
        raise ValueError("an experiment needs at least one seed: seeds=[1, 2]")
    for seed in seed_list:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seeds are whole numbers, got {seed!r}")
    swept = sweep(params, model_list)
    sets = variable_sets(variables)
    check_matrix(prompts, sets)
    check = Checker()
    per_model = [(model, seed_field(CATALOG[model]), list(enumerate(swept.for_model(model))))
                 for model in model_list]
    cells = []
    for version, values in itertools.product(prompts, sets):
        own = {k: v for k, v in values.items() if k in version.variables}
        text = fill(version, own)
        for model, where, applied_sets in per_model:
            for n, applied in applied_sets:
                keyed = {k: applied[k] for k in swept.swept if k in applied}
                for seed in seed_list:
                    body = _with_seed(where, {"model": model, "prompt": text, **applied}, seed)
                    # The body is (model, text, parameter set, seed where it is sent): a model
                    # without a seed field has one body, and one check, for every seed.
                    got = check(body, (model, text, n, seed if where is not None else None))
                    cells.append(Cell(cell_key(version, values, model, seed, keyed), version,
                                      dict(values), model, seed, text, body, got.request,
                                      got.invalid, got.credits, got.address, keyed))
    return cells
