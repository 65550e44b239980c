"""An experiment's matrix: prompt versions x variable sets x models x seeds, validated and
priced before anything is sent.

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
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel

from genlab.catalog import CATALOG, RequestBase, checked, content_address
from genlab.experiments._prompt import Prompt, fill


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

    def row(self) -> dict[str, Any]:
        """The cell as the history records it."""
        return {"cell": self.key, "prompt_name": self.prompt.name,
                "prompt_version": self.prompt.version, "variables": self.variables,
                "model": self.model, "seed": self.seed, "address": self.address}


def variable_sets(variables: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every combination of the variables' values (a list or tuple is swept; any other
    value is the one value).

    Example:
        >>> variable_sets({"subject": ["kite", "owl"], "place": "dunes"})
        [{'subject': 'kite', 'place': 'dunes'}, {'subject': 'owl', 'place': 'dunes'}]
    """
    given = dict(variables or {})
    for name, values in given.items():
        if isinstance(values, list | tuple) and not values:
            raise ValueError(f"vars[{name!r}] is an empty list: give it at least one value")
    swept = [list(v) if isinstance(v, list | tuple) else [v] for v in given.values()]
    return [dict(zip(given, combo, strict=True)) for combo in itertools.product(*swept)]


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


def cell_key(prompt: Prompt, variables: Mapping[str, Any], model: str, seed: int | None) -> str:
    """A cell's stable identity: the same call in another process plans the same keys."""
    text = json.dumps([prompt.name, prompt.version, dict(variables), model, seed],
                      sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _body(model: str, text: str, params: Mapping[str, Any], seed: int | None) -> dict[str, Any]:
    cls = CATALOG[model]
    body: dict[str, Any] = {"model": model, "prompt": text}
    body.update({k: v for k, v in params.items() if k in cls.model_fields})
    where = seed_field(cls)
    if seed is not None and where == ("seed",):
        body["seed"] = seed
    elif seed is not None and where is not None:
        extra = dict(body.get("extra_params") or {})
        extra["seed"] = seed
        body["extra_params"] = extra
    return body


def check_matrix(
    prompts: Sequence[Prompt], models: Sequence[str], sets: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
) -> None:
    """Refuse, before anything is planned, what makes no matrix: no prompt, model or seed, an
    unknown model, a parameter no model has, a variable no version uses or a slot without
    values."""
    if not prompts:
        raise ValueError("an experiment needs at least one prompt: prompts=[kite, kite2]")
    if not models:
        raise ValueError("an experiment needs at least one model: models=['image-b']")
    unknown = [m for m in models if m not in CATALOG]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}; the catalog has {', '.join(CATALOG)}")
    for name in params:
        if name in ("model", "prompt"):
            raise ValueError(f"give {name}s with {name}s=[...], not in params")
        if not any(name in CATALOG[m].model_fields for m in models):
            raise ValueError(f"{name!r} is not a field of {', '.join(models)}; "
                             "see genlab.CATALOG[model].model_fields")
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
    model_list = list(dict.fromkeys([models] if isinstance(models, str) else models))
    seed_list = list(dict.fromkeys(seeds))
    if not seed_list:
        raise ValueError("an experiment needs at least one seed: seeds=[1, 2]")
    for seed in seed_list:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seeds are whole numbers, got {seed!r}")
    sets = variable_sets(variables)
    given = dict(params or {})
    check_matrix(prompts, model_list, sets, given)
    seen: dict[str, tuple[RequestBase | None, str | None, int | None, str | None]] = {}
    cells = []
    for version, values in itertools.product(prompts, sets):
        own = {k: v for k, v in values.items() if k in version.variables}
        text = fill(version, own)
        for model, seed in itertools.product(model_list, seed_list):
            body = _body(model, text, given, seed)
            memo = json.dumps(body, sort_keys=True, default=str)
            if memo not in seen:  # a model without seeds: the same body for every seed
                request, invalid, credits = checked(body)
                address = content_address(request) if request is not None else None
                seen[memo] = (request, invalid, credits, address)
            request, invalid, credits, address = seen[memo]
            cells.append(Cell(cell_key(version, values, model, seed), version, dict(values),
                              model, seed, text, body, request, invalid, credits, address))
    return cells
