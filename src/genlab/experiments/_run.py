"""Running an experiment: plan, find what the history already has, money first, then the
cells through the client's one lifecycle, each task recorded against its cell.

What makes a second run continue instead of paying again: every cell is recorded in the
history before anything is sent, and its task id as soon as the service accepts it. A later
call with the same arguments (in any process sharing the history) finds each cell's task:
a succeeded one is shown as it is, one still running is waited on, a failed or refused one is
sent again, and a submission that may have been billed without an answer (``uncertain``) is
never sent again. Tasks submitted by a process killed before it could record their cell are
found by the experiment's tag and their request's content address.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from genlab import grid
from genlab.catalog import CATALOG
from genlab.client import AsyncClient, Client, Labels, Task
from genlab.client.journal import cap_refusal
from genlab.experiments._experiment import Experiment
from genlab.experiments._plan import Cell, plan_cells
from genlab.experiments._prompt import Prompt, prompt, same_history
from genlab.history import History
from genlab.media.scores import Scorer, resolve, score


@dataclass(slots=True)
class _Found:
    """What the history says of one cell before this run."""

    done: list[Cell]
    waiting: list[tuple[Cell, str]]  # cells whose task is still running, and its id
    to_send: list[Cell]
    uncertain: list[Cell]


def _history_of(client: Client) -> History:
    if isinstance(client, AsyncClient):
        raise TypeError("experiment() runs blocking; pass a genlab.Client, not an AsyncClient")
    journal = client.history
    if not isinstance(journal, History):
        raise ValueError(
            "an experiment lives in a history (so it can be continued and no cell is paid "
            "twice): make the client with genlab.connect() or "
            "genlab.Client(history=genlab.History())"
        )
    return journal


def _version(given: Prompt | str, history: History) -> Prompt:
    if isinstance(given, str):
        return prompt(given, history=history)
    if not isinstance(given, Prompt):
        raise TypeError(f"prompts are genlab.prompt(...) objects or references like 'kite@2', "
                        f"got {given!r}")
    if not same_history(given.history, history):
        raise ValueError(
            f"{given.ref} is kept in {given.history.location}, but the client records into "
            f"{history.location}; make the prompt with genlab.prompt(..., history=...) of the "
            "client's history"
        )
    return given


_ROW = ["task_id", "status", "state", "address", "submitted_at"]


def _task_rows(history: History, name: str, ids: Sequence[str]) -> list[Mapping[str, Any]]:
    """This experiment's submissions (by its tag, oldest first), then the cells' recorded tasks
    the tag does not reach (run under another tag), each row with None where nothing is known."""
    tagged = history.tasks(tag=name, columns=_ROW)
    seen = set(tagged["task_id"].dropna())
    missing = [i for i in ids if i not in seen]
    frames = [tagged, history.tasks(missing, columns=_ROW)] if missing else [tagged]
    rows: list[Mapping[str, Any]] = []
    for frame in frames:
        known = frame.astype(object).where(frame.notna(), None)
        names = [str(c) for c in known.columns]  # column by column: 10,000 rows in ~20 ms
        rows += [dict(zip(names, values, strict=True))
                 for values in zip(*(known[c].tolist() for c in known.columns), strict=True)]
    return rows


def find_cells(history: History, name: str, cells: Sequence[Cell]) -> _Found:
    """Sort the valid ``cells`` by what the history already holds for them (see the module
    docstring), recording tasks found by tag and address against their cells.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> from genlab.experiments import plan_cells
        >>> kite = genlab.prompt("A {colour} kite", name="kite", history=history)
        >>> cells = plan_cells([kite], ["image-b"], {"colour": "red"})
        >>> found = find_cells(history, "kites", cells)  # nothing run yet: every cell is to send
        >>> money_line(cells, found)
        '1 cell: no published price, so no estimate'
        >>> history.close()
    """
    recorded = history.cell_tasks(name)
    rows = _task_rows(history, name, [t for t in recorded.values() if t])
    by_id = {r["task_id"]: r for r in rows if r["task_id"]}
    claimed = {t for t in recorded.values() if t}
    spare: dict[str, list[Mapping[str, Any]]] = {}
    for each in rows:  # this experiment's submissions no cell names yet, oldest first
        if each["task_id"] not in claimed and each["address"]:
            spare.setdefault(each["address"], []).append(each)
    found = _Found([], [], [], [])
    for cell in cells:
        task_id = recorded.get(cell.key)
        row: Mapping[str, Any] | None = by_id.get(task_id) if task_id else None
        if row is None and cell.address in spare and spare[cell.address]:
            row = spare[cell.address].pop(0)
            if row["task_id"]:
                history.cell_task(name, cell.key, row["task_id"])
        if row is None:
            found.to_send.append(cell)
        elif row["status"] == "succeeded":
            found.done.append(cell)
        elif row["state"] == "refused" or row["status"] == "failed":
            found.to_send.append(cell)
        elif row["state"] in ("uncertain", "sending") or not row["task_id"]:
            found.uncertain.append(cell)  # it may have been billed: never sent again
        else:
            found.waiting.append((cell, str(row["task_id"])))
    return found


def money_line(cells: Sequence[Cell], found: _Found) -> str:
    """E.g. ``24 cells (2 invalid): 6 done earlier, 16 to send: 6,400 credits estimated`` (the
    one money line, :func:`genlab.grid.money_line`).

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> from genlab.experiments import find_cells, plan_cells
        >>> kite = genlab.prompt("A {colour} kite", name="kite", history=history)
        >>> cells = plan_cells([kite], ["image-b"], {"colour": ["red", "blue"]})
        >>> money_line(cells, find_cells(history, "kites", cells))
        '2 cells: no published price, so no estimate'
        >>> history.close()
    """
    earlier = []
    if found.done:
        earlier.append(f"{len(found.done):,} done earlier")
    if found.waiting:
        earlier.append(f"{len(found.waiting):,} still running")
    if found.uncertain:
        earlier.append(f"{len(found.uncertain):,} uncertain (not sent again)")
    return grid.money_line(len(cells), unit="cell", invalid=sum(c.request is None for c in cells),
                           earlier=earlier, sending=[c.credits for c in found.to_send])


def _run(
    client: Client, history: History, name: str, found: _Found, concurrency: int,
    timeout: float | None, progress: bool,
) -> dict[str, str]:
    """Send the cells to send and wait for those still running, through the one grid runner:
    each submission carries its tag and cell, so the history records the cell's task id in the
    same step as the task's acceptance."""
    sending = [c for c in found.to_send if c.request is not None]
    ran = grid.run_cells(
        client, [c.request for c in sending if c.request is not None],
        labels=[Labels(tag=name, experiment=name, cell=c.key) for c in sending],
        waiting=[Task(task_id=t, model=c.model, kind=CATALOG[c.model].KIND)
                 for c, t in found.waiting],
        concurrency=concurrency, timeout=timeout, progress=progress, desc=name, unit="cell",
    )
    errors: dict[str, str] = {}
    for cell, outcome in zip(sending, ran.outcomes, strict=True):
        reused = getattr(outcome.task, "reused", None) is not None
        if outcome.task is not None and reused:  # an earlier or joined task: no submit step
            history.cell_task(name, cell.key, outcome.task.task_id)
        if outcome.error is not None and (outcome.record is None or not outcome.record.failed):
            errors[cell.key] = f"{type(outcome.error).__name__}: {outcome.error}"
    for (cell, _task_id), waited in zip(found.waiting, ran.waited, strict=True):
        if isinstance(waited, BaseException):
            errors[cell.key] = f"{type(waited).__name__}: {waited}"
    return errors


def score_missing(
    history: History, task_ids: Iterable[str], scorers: Mapping[str, Scorer], workers: int = 4
) -> bool:
    """Score the succeeded tasks not yet scored by every scorer (in worker threads, never on
    the caller's thread); whether any score was added."""
    ids = list(dict.fromkeys(task_ids))
    if not scorers or not ids:
        return False
    have = history.scores(ids)
    todo = [(t, {n: f for n, f in scorers.items() if n not in have.get(t, {})}) for t in ids]
    todo = [(t, s) for t, s in todo if s]
    if not todo:
        return False

    def one(task_id: str, missing: Mapping[str, Scorer]) -> None:
        result = history.record(task_id)
        if result is not None and result.succeeded:
            history.save_scores(task_id, score(result, missing))

    with ThreadPoolExecutor(max(1, min(workers, len(todo)))) as pool:
        for future in [pool.submit(one, t, s) for t, s in todo]:
            future.result()
    return True


def experiment(
    client: Client,
    name: str,
    prompts: Iterable[Prompt | str] = (),
    models: Iterable[str] | str = (),
    vars: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    seeds: Iterable[int | None] = (1,),
    *,
    max_credits: int | None = None,
    scorers: Iterable[str | Scorer] = (),
    concurrency: int = 4,
    timeout: float | None = None,
    progress: bool = True,
    quiet: bool = False,
) -> Experiment:
    """Run every prompt version on every model with every set of variables and every seed;
    or continue the experiment of this name where an earlier run stopped.

    Every cell is validated against its model first (invalid cells are listed in ``df`` with
    the catalog's message and cost nothing); what is left to send is priced as a whole and
    checked against ``max_credits`` and the client's budget before anything is sent. Cells run
    through the client (its reuse, budget and concurrency caps apply), each task tagged with the
    experiment's name and recorded against its cell in the history. Running the same call
    again (after a kernel restart, or in another process sharing the history) sends only what
    was never sent: no cell is paid twice. Scores are computed in worker threads once a
    result is kept, and kept in the history.

    Args:
        client: a :class:`genlab.Client` with a :class:`genlab.History`
            (``genlab.connect()`` gives one).
        name: the experiment's name (its tag in the history).
        prompts: prompt versions (``genlab.prompt(...)``, or references like ``"kite@2"``).
        models: model names from ``genlab.CATALOG``.
        vars: each variable's values: a list is swept, another value is the one value.
        params: request fields applied to every model that has them.
        seeds: a cell per seed; sent where a model takes a seed, else a fresh sample each.
        max_credits: refuse to start when what is left to send is estimated higher.
        scorers: built-in scorer names (``"sharpness"``...) or functions of a result.
        concurrency: cells in flight at once.
        timeout: seconds each cell may wait for its task.
        progress: show a progress bar.
        quiet: do not print the money line (it stays in ``exp.money_line``).

    Raises:
        CreditLimitError: over ``max_credits`` or the client's budget; nothing was sent.
        ValueError: the matrix itself is wrong (a missing or unused variable, an unknown
            model or parameter...); nothing was sent.

    Example:
        >>> import os, tempfile, genlab
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> kite = prompt("A {subject} at dusk", name="kite", history=history)
        >>> with genlab.Client("http://localhost:1", "key", history=history) as client:
        ...     try:   # over max_credits: refused before anything is sent
        ...         experiment(client, "kites", [kite], ["video-a"], progress=False,
        ...                    vars={"subject": ["kite", "owl"]}, max_credits=10)
        ...     except genlab.CreditLimitError as refused:
        ...         print("refused:", "nothing was sent" in str(refused))
        2 cells: 1,600 credits estimated
        refused: True
        >>> [cell["task_id"] for cell in history.experiment_cells("kites")]  # planned, unpaid
        [None, None]
        >>> history.close()

        With a connected client and a budget::

            exp = genlab.experiment(client, "kite-study", prompts=[kite, kite2],
                                    models=["image-b", "image-d"],
                                    vars={"subject": ["paper kite", "dragon kite"]},
                                    seeds=[1, 2], max_credits=20_000, scorers=["sharpness"])
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an experiment needs a name, like 'kite-study'; got {name!r}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    history = _history_of(client)
    given = [prompts] if isinstance(prompts, str | Prompt) else list(prompts)
    versions = list(dict.fromkeys(_version(p, history) for p in given))
    named = resolve(list(scorers))
    cells = plan_cells(versions, models, vars, params, seeds)
    valid = [c for c in cells if c.request is not None]
    history.plan_cells(name, [c.row() for c in valid])
    found = find_cells(history, name, valid)
    line = money_line(cells, found)
    if not quiet:
        print(line)  # money first: called from a cell, so stdout is the reader's
    refusal = cap_refusal([(c.model, c.credits) for c in found.to_send], max_credits=max_credits,
                    batch=True, named=line)
    if refusal is not None:
        raise refusal.error()
    client.check_budget([c.request for c in found.to_send if c.request is not None])
    errors = _run(client, history, name, found, concurrency, timeout, progress)
    exp = Experiment(name, history, cells, list(named), errors=errors, money_line=line,
                     uncertain=[c.key for c in found.uncertain])
    if score_missing(history, exp.task_ids(status="succeeded"), named, concurrency):
        exp.refresh()  # else the df just read is the history's as it stands: kept
    return exp
