"""What can be rated: the finished results of a source, and the pairs of them worth comparing.

Two results make a pair when they answered the same brief (the same prompt and reference media:
one :func:`genlab.catalog.prompt_address`) with the same settings wherever both requests set
one (a grid's swept duration: 4 s is compared with 4 s), and come from different competitors
(different models, or different values of the settings the leaderboard is ``by``). Two repeats
of one model are not a pair: a vote between them says nothing about which model is better.

The results of an experiment (:func:`genlab.experiment`) compete as prompt versions instead:
two results make a pair when they are two cells that differ only in prompt version (the same
model, variables and seed), see :func:`experiment_items`.

Example:
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"task_id": ["t1", "t2", "t3", "t4"],
    ...     "model": ["image-b", "image-d", "image-b", "image-d"],
    ...     "prompt": ["a kite", "a kite", "a kite", "a kite"],
    ...     "resolution": ["1K", "1K", "2K", "2K"]})
    >>> found = pairs_of(items_of(runs), by=("model",))
    >>> [(a.task_id, b.task_id) for a, b in found]
    [('t1', 't2'), ('t3', 't4')]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from genlab.catalog import CATALOG, prompt_address
from genlab.history import Answer, RatingEntry

_NOT_SETTINGS = frozenset({"model", "prompt", "extra_params"})
# Every field some model of the catalog has: a run table's columns that are request fields.
_FIELDS = frozenset(name for cls in CATALOG.values() for name in cls.model_fields)


@dataclass(frozen=True, slots=True)
class Item:
    """One finished result that may be rated.

    Attributes:
        task_id: its task.
        model: the model that made it.
        prompt: the prompt's text (for the rater's heading; "" for none). For an
            experiment's result, its variables instead (``subject: paper kite``): the two
            versions' texts differ, and either would say which version is which.
        address: its prompt address (what it was asked for, whatever the model); for an
            experiment's result, the address of its place in the matrix (experiment, model,
            variables and seed), which the versions' results share.
        settings: the request's settings as sent (no model, prompt or references).
        row: its run row (``paths``, ``result_url``, ...), for reading its media.
        version: for an experiment's result, its prompt version (``"kite@2"``).
        degraded: for a gold pair's worse side, how its copy of the result is degraded
            (``"blur"``, see :mod:`genlab.media.degrade`); None for a result as it is.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2"], "status": "succeeded",
        ...                      "model": ["image-b", "image-d"], "prompt": "a kite"})
        >>> item = items_of(runs)[0]
        >>> item.task_id, item.model, item.prompt
        ('t1', 'image-b', 'a kite')
    """

    task_id: str
    model: str
    prompt: str
    address: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    row: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    version: str | None = None
    degraded: str | None = None

    def competitor(self, by: Sequence[str]) -> tuple[Hashable, ...]:
        """What this result competes as: its model, its prompt version, and the settings
        named in ``by``."""
        return tuple(self.model if name == "model"
                     else self.version if name == "prompt_version"
                     else _hashable(self.settings.get(name)) for name in by)


def _hashable(value: Any) -> Hashable:
    if isinstance(value, Hashable):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list: a value
        return False


def _body(row: Mapping[str, Any], params: Sequence[str] | None) -> dict[str, Any]:
    request = row.get("request")
    if isinstance(request, str) and request:
        try:
            body = json.loads(request)
        except ValueError:
            body = None
        if isinstance(body, dict):
            return body
    names = params if params is not None else [c for c in row if c in _FIELDS]
    body = {name: row[name] for name in names if name in row and not _missing(row[name])}
    body.setdefault("model", row.get("model"))
    if not _missing(row.get("prompt")):
        body.setdefault("prompt", row.get("prompt"))
    return body


def items_of(runs: pd.DataFrame, params: Sequence[str] | None = None) -> list[Item]:
    """The rateable results of a run table: succeeded rows with a task id, oldest first.

    The request of each row is its ``request`` column (a history's, the body as sent), else
    its ``params`` columns (a comparison's parameters), else every column named like a request
    field.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2"], "status": "succeeded",
        ...                      "model": ["image-b", "image-d"], "prompt": "a kite"})
        >>> [item.model for item in items_of(runs)]
        ['image-b', 'image-d']
    """
    rows = runs
    if "status" in rows.columns:
        rows = rows[rows["status"] == "succeeded"]
    found: list[Item] = []
    seen: set[str] = set()
    for record in rows.to_dict(orient="records"):
        row = {str(k): v for k, v in record.items()}
        task = row.get("task_id")
        if _missing(task) or str(task) in seen or _missing(row.get("model")):
            continue
        seen.add(str(task))
        body = _body(row, params)
        settings = {k: v for k, v in body.items()
                    if k not in _NOT_SETTINGS and not k.startswith("reference_") and v is not None}
        prompt = body.get("prompt")
        found.append(Item(
            task_id=str(task), model=str(row["model"]),
            prompt=prompt if isinstance(prompt, str) else ("" if prompt is None else str(prompt)),
            address=prompt_address(body), settings=settings, row=row,
        ))
    return found


def comparable(a: Item, b: Item, by: Sequence[str]) -> bool:
    """Whether ``a`` and ``b`` make a pair: one brief, the same settings wherever both have
    one (except those in ``by``), different competitors.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2"], "status": "succeeded",
        ...                      "model": ["image-b", "image-d"], "prompt": "a kite"})
        >>> first, second = items_of(runs)
        >>> comparable(first, second, ("model",))  # same prompt and settings, two models
        True
    """
    if a.address != b.address or a.competitor(by) == b.competitor(by):
        return False
    shared = (set(a.settings) & set(b.settings)) - set(by)
    return all(_hashable(a.settings[k]) == _hashable(b.settings[k]) for k in shared)


def pairs_of(items: Sequence[Item], by: Sequence[str]) -> list[tuple[Item, Item]]:
    """Every pair of ``items`` worth a vote (see :func:`comparable`), in the items' order.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2"], "status": "succeeded",
        ...                      "model": ["image-b", "image-d"], "prompt": "a kite"})
        >>> [(a.model, b.model) for a, b in pairs_of(items_of(runs), ("model",))]
        [('image-b', 'image-d')]
    """
    briefs: dict[str, list[Item]] = {}
    for item in items:
        briefs.setdefault(item.address, []).append(item)
    found = []
    for group in briefs.values():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if comparable(a, b, by):
                    found.append((a, b))
    return found


def experiment_items(runs: pd.DataFrame, cells: Iterable[Mapping[str, Any]],
                     experiment: str) -> list[Item]:
    """The rateable results of an experiment: its cells (``History.experiment_cells``) whose
    task is among the succeeded rows of ``runs``, each competing as its prompt version.

    Cells that differ only in prompt version share an address, so they, and only they, make
    pairs (by ``("prompt_version",)``): never two models, two sets of variables or two seeds.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2", "t3"], "status": "succeeded",
        ...     "model": "image-b", "prompt": ["A kite", "A red kite", "A kite"]})
        >>> cells = [{"task_id": t, "prompt_name": "kite", "prompt_version": v,
        ...           "variables": {"colour": "red"}, "model": "image-b", "seed": s}
        ...          for t, v, s in (("t1", 1, 1), ("t2", 2, 1), ("t3", 1, 2))]
        >>> found = pairs_of(experiment_items(runs, cells, "kites"), ("prompt_version",))
        >>> [(a.version, b.version, a.prompt) for a, b in found]
        [('kite@1', 'kite@2', 'colour: red')]
    """
    by_task = {str(c["task_id"]): c for c in cells if c.get("task_id")}
    found = []
    for item in items_of(runs):
        cell = by_task.get(item.task_id)
        if cell is None:
            continue
        variables = dict(cell.get("variables") or {})
        place = json.dumps({"experiment": experiment, "model": cell["model"],
                            "variables": variables, "seed": cell.get("seed")},
                           sort_keys=True, default=str, separators=(",", ":"))
        found.append(Item(
            task_id=item.task_id, model=str(cell["model"]),
            prompt=", ".join(f"{k}: {v}" for k, v in variables.items()),
            address=hashlib.sha256(place.encode()).hexdigest(), settings=item.settings,
            row=item.row, version=f"{cell['prompt_name']}@{cell['prompt_version']}",
        ))
    return found


def rating_entry(left: Item, right: Item, answer: Answer, *, rater: str | None,
                 tag: str | None) -> RatingEntry:
    """The vote ``answer`` between ``left`` and ``right`` as shown, ready for
    ``History.add_rating``: both sides' models, settings and brief, and the tag the two
    results share (else ``tag``: the source's). A person's vote and a judge's are recorded
    alike.

    Example:
        >>> left = Item("t1", "video-a", "waves", "addr", row={"tag": "sea"})
        >>> right = Item("t2", "video-b", "waves", "addr", row={"tag": "sea"})
        >>> entry = rating_entry(left, right, "left", rater="ana", tag=None)
        >>> entry.left_model, entry.right_model, entry.tag, entry.rater
        ('video-a', 'video-b', 'sea', 'ana')
    """
    shared = left.row.get("tag") if left.row.get("tag") == right.row.get("tag") else None
    return RatingEntry(
        left.task_id, right.task_id, answer,
        left_model=left.model, right_model=right.model, prompt_address=left.address,
        prompt=left.prompt, left_settings=left.settings, right_settings=right.settings,
        tag=shared if isinstance(shared, str) else tag, rater=rater,
    )
