"""Copying one history into another: a laptop's SQLite file into the team's database.

``genlab history migrate SRC DST`` runs :func:`copy_history`. It carries every table of the
schema, each by its rule in :data:`RULES`: submissions with their status events and reuse notes,
votes, prompts with their versions and aliases, experiments' cells, and scores.

It is idempotent. A row is named by its natural key (the columns that name it in any database:
a submission's ``entry_id``, a prompt's name, a version's text, an experiment's cell), never by
a number one database gave it, and a row whose key the destination has is left as it is: running
it twice, or after a colleague ran it, adds nothing twice. The numbers that differ between
databases are remapped: a prompt version takes the number the destination gives its text (the
version saved with that text, else one after the newest), and the parents, aliases and cells
naming it follow. Rows that belong to another row come with it, in its transaction, so a copy
stopped half way never leaves a submission without its events or a prompt without its versions.

A table added to the schema needs a rule here (a test fails until it has one). The database's
``alembic_version`` is no table of the schema: it is the destination's own, written by its
migrations.

Example:
    >>> import os, tempfile
    >>> from genlab.history import History
    >>> folder = tempfile.mkdtemp()
    >>> laptop, team = os.path.join(folder, "a.sqlite"), os.path.join(folder, "b.sqlite")
    >>> history = History(laptop)
    >>> history.save_prompt("kite", "A {subject} at dusk").version
    1
    >>> history.close()
    >>> copied = copy_history(laptop, team)
    >>> copied.prompts, copied.prompt_versions, copied.tasks
    (1, 1, 0)
    >>> copy_history(laptop, team).prompt_versions   # again: nothing twice
    0
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from genlab._errors import ConfigurationError
from genlab.history._location import locate
from genlab.history._pending import Pending
from genlab.history._prompts import saved_or_next
from genlab.history._schema import (
    EVENTS,
    EXPERIMENT_CELLS,
    PROMPT_ALIASES,
    PROMPT_VERSIONS,
    PROMPTS,
    RATINGS,
    REUSES,
    SCORES,
    TASKS,
)
from genlab.history._store import Store

_BATCH = 1000  # rows per transaction (and ids per IN list: well inside both databases' limits)

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Copied:
    """What :func:`copy_history` copied: for each table, the rows the destination lacked.

    Attributes:
        tasks: submissions copied.
        skipped: submissions left out: already there, or their task id there under another
            entry (journaled on two machines). Rows of other kinds already there are left out
            too, and not counted.
        events: the status events of the submissions copied.
        reuses: the reuse notes of the submissions copied.
        ratings: votes (one taken back comes taken back).
        prompts: prompts new to the destination.
        prompt_versions: prompt versions whose text the destination lacked.
        prompt_aliases: aliases the destination lacked.
        experiment_cells: experiments' cells.
        scores: scorers' values of kept results.

    Example:
        >>> Copied(tasks=3, prompts=1).tasks
        3
    """

    tasks: int = 0
    skipped: int = 0
    events: int = 0
    reuses: int = 0
    ratings: int = 0
    prompts: int = 0
    prompt_versions: int = 0
    prompt_aliases: int = 0
    experiment_cells: int = 0
    scores: int = 0


def copy_history(
    source: str | os.PathLike[str], destination: str | os.PathLike[str]
) -> Copied:
    """Copy every row of ``source`` that ``destination`` lacks (see the module docstring).

    Both are history locations (a path, ``sqlite:///...`` or ``postgresql://...``). The
    destination is created or upgraded as needed; the source must exist.

    Raises:
        ConfigurationError: the source does not exist, or both are the same history.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> laptop = genlab.History(folder / "laptop.sqlite")
        >>> _ = laptop.save_prompt("kite", "A kite at dusk"); laptop.close()
        >>> copied = copy_history(folder / "laptop.sqlite", folder / "team.sqlite")
        >>> copied.prompts, copied.prompt_versions, copied.tasks
        (1, 1, 0)
    """
    where = locate(source)
    if where.path is not None and not where.path.is_file():
        raise ConfigurationError(
            f"no history at {where.shown}: give the SQLite file to copy (by default "
            ".genlab/history.sqlite in the folder the notebooks ran in)"
        )
    if locate(destination).shown == where.shown:
        raise ConfigurationError(f"{where.shown} is both the source and the destination")
    src = _opened(source)
    try:
        dst = _opened(destination)
        try:
            copying = _Copy(src, dst)
            for rule in RULES:
                if rule.copy is not None:
                    rule.copy(copying, rule)
            return Copied(**copying.counts)
        finally:
            dst.close()
    finally:
        src.close()


def _opened(location: str | os.PathLike[str]) -> Store:
    # As a History opens it: task ids kept in its side file are merged first, so they come along.
    store = Store(location)
    Pending(store.where, store.write).merge()
    return store


@dataclass(slots=True)
class _Copy:
    """One copy under way: both stores, the rows copied so far (by table name, and
    ``skipped``), and each source prompt version's number in the destination."""

    src: Store
    dst: Store
    counts: Counter[str] = field(default_factory=Counter)
    versions: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Rule:
    """How one table of the schema is copied.

    Attributes:
        table: the table.
        key: the columns that name a row in any database; a row whose key the destination
            has is left as it is. Empty for rows with no name of their own.
        how: what else there is to know, for people: what is remapped, what stays behind and
            why; or why the table is not copied at all.
        copy: copies the rows the destination lacks, counting them. None when they come with
            the rows of ``part_of``, or when the table is not copied (``how`` says why).
        part_of: the table whose rows these come with, in the same transaction.
    """

    table: sa.Table
    key: tuple[str, ...]
    how: str
    copy: Callable[[_Copy, Rule], None] | None = None
    part_of: sa.Table | None = None


# --- each table's rule, in the order they run ----------------------------------------------


def _tasks(c: _Copy, rule: Rule) -> None:
    for batch in _batches(c.src, rule):
        with c.dst.write() as db:  # a batch of submissions with their events and reuse notes
            there = _present(db, rule, batch)
            new = [{**r, "lease_owner": None, "lease_until": None} for r in batch
                   if _key(rule, r) not in there]
            if new:
                db.execute(_insert_ignoring(c.dst, TASKS), new)
            landed = list(db.execute(sa.select(TASKS.c.task_id).where(
                TASKS.c.entry_id.in_([r["entry_id"] for r in new])
            )).scalars()) if new else []
            # One refused before the service named it has no task id, and no events to bring.
            ids = sorted(t for t in landed if t is not None)
            for part in (EVENTS, REUSES):
                rows = _rows(c.src, sa.select(part).where(part.c.task_id.in_(ids))) if ids else []
                if rows:
                    db.execute(sa.insert(part), rows)
                c.counts[part.name] += len(rows)
        c.counts["tasks"] += len(landed)
        c.counts["skipped"] += len(batch) - len(landed)


def _prompts(c: _Copy, rule: Rule) -> None:
    for batch in _batches(c.src, rule):
        for prompt in batch:
            name = prompt["name"]
            versions = _rows(c.src, sa.select(PROMPT_VERSIONS)
                             .where(PROMPT_VERSIONS.c.name == name)
                             .order_by(PROMPT_VERSIONS.c.version))  # a parent before its child
            aliases = _rows(c.src, sa.select(PROMPT_ALIASES).where(PROMPT_ALIASES.c.name == name))
            for attempt in range(5):  # someone saving a version meanwhile takes its number first
                try:
                    counts = _prompt(c, rule, prompt, versions, aliases)
                    break
                except sa.exc.IntegrityError:
                    if attempt == 4:
                        raise
            c.counts.update(counts)


def _prompt(
    c: _Copy, rule: Rule, prompt: Row, versions: Sequence[Row], aliases: Sequence[Row]
) -> Counter[str]:
    """Copy one prompt with its versions and aliases, in one transaction; what it copied."""
    name = prompt["name"]
    counts: Counter[str] = Counter()
    numbers: dict[int, int] = {}  # the source's version number -> the destination's
    with c.dst.write() as db:
        if not _present(db, rule, [prompt]):
            db.execute(sa.insert(PROMPTS), prompt)
            counts["prompts"] += 1
        for version in versions:
            same, number = saved_or_next(db, name, version["template"])
            if same is None:
                parent = version["parent"]
                db.execute(sa.insert(PROMPT_VERSIONS), {
                    **version, "version": number,
                    "parent": None if parent is None else numbers.get(int(parent)),
                })
                counts["prompt_versions"] += 1
            numbers[int(version["version"])] = number if same is None else same.version
        there = _present(db, _RULE[PROMPT_ALIASES], aliases)
        missing = [{**a, "version": numbers.get(int(a["version"]), a["version"])}
                   for a in aliases if _key(_RULE[PROMPT_ALIASES], a) not in there]
        if missing:
            db.execute(sa.insert(PROMPT_ALIASES), missing)
        counts["prompt_aliases"] += len(missing)
    c.versions.update({(name, theirs): ours for theirs, ours in numbers.items()})
    return counts


def _cells(c: _Copy, rule: Rule) -> None:
    def renumbered(cell: Row) -> Row:
        number = c.versions.get((cell["prompt_name"], int(cell["prompt_version"])))
        return cell if number is None else {**cell, "prompt_version": number}

    _by_key(c, rule, renumbered)


def _by_key(c: _Copy, rule: Rule, rewrite: Callable[[Row], Row] | None = None) -> None:
    """Copy the rows whose key the destination lacks, a batch per transaction."""
    for batch in _batches(c.src, rule):
        with c.dst.write() as db:
            there = _present(db, rule, batch)
            new = [rewrite(r) if rewrite else r for r in batch if _key(rule, r) not in there]
            if new:  # a colleague's copy may have added one meanwhile: it is left as it is
                db.execute(_insert_ignoring(c.dst, rule.table), new)
        c.counts[rule.table.name] += len(new)


RULES: tuple[Rule, ...] = (
    Rule(TASKS, ("entry_id",), copy=_tasks, how=(
        "a submission, with its status events and reuse notes; its lease stays behind (it "
        "names a process of the source's machine), and a task id the destination has under "
        "another entry (journaled on two machines) is skipped")),
    Rule(EVENTS, (), part_of=TASKS, how="with a submission the copy adds (no key of its own)"),
    Rule(REUSES, (), part_of=TASKS, how="with a submission the copy adds (no key of its own)"),
    Rule(PROMPTS, ("name",), copy=_prompts, how="a prompt, with its versions and aliases"),
    Rule(PROMPT_VERSIONS, ("name", "template"), part_of=PROMPTS, how=(
        "with its prompt; numbered as the destination numbers a saved text (the version with "
        "that text, else one after the newest), its parent renumbered alike")),
    Rule(PROMPT_ALIASES, ("name", "alias"), part_of=PROMPTS, how=(
        "with its prompt, pointing at its version's number in the destination; an alias the "
        "destination has keeps pointing where it does")),
    Rule(EXPERIMENT_CELLS, ("experiment", "cell"), copy=_cells, how=(
        "its prompt version renumbered as the versions were; its task id is the service's, "
        "the same in every history")),
    Rule(SCORES, ("task_id", "scorer"), copy=_by_key, how="a scorer's value of a kept result"),
    Rule(RATINGS, ("rating_id",), copy=_by_key, how=(
        "a vote (a gold vote stays gold), taken back if it was when copied")),
)
"""Each table's copy rule, in the order they run (prompts before the cells naming them)."""

_RULE: Mapping[sa.Table, Rule] = {rule.table: rule for rule in RULES}


# --- helpers --------------------------------------------------------------------------------


def _key(rule: Rule, row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(row[k] for k in rule.key)


def _rows(store: Store, statement: sa.Select[Any]) -> list[Row]:
    return [dict(r._mapping) for r in store.rows(statement)]


def _batches(src: Store, rule: Rule) -> Iterator[list[Row]]:
    """The source's rows of ``rule.table`` in batches, in the order of their key (each batch
    starts after the last one's key, so reading the 100th batch costs what the first did)."""
    columns = [rule.table.c[k] for k in rule.key]
    after: tuple[Any, ...] | None = None
    while True:
        query = sa.select(rule.table).order_by(*columns).limit(_BATCH)
        if after is not None:
            query = query.where(sa.tuple_(*columns) > sa.tuple_(*map(sa.literal, after))
                                if len(columns) > 1 else columns[0] > after[0])
        batch = _rows(src, query)
        if not batch:
            return
        yield batch
        after = _key(rule, batch[-1])


def _present(db: sa.Connection, rule: Rule, rows: Sequence[Row]) -> set[tuple[Any, ...]]:
    """The keys of ``rows`` the destination already has."""
    if not rows:
        return set()
    columns = [rule.table.c[k] for k in rule.key]
    keys = [_key(rule, r) for r in rows]
    where = (sa.tuple_(*columns).in_(keys) if len(columns) > 1
             else columns[0].in_([k[0] for k in keys]))
    return {tuple(r) for r in db.execute(sa.select(*columns).where(where))}


def _insert_ignoring(store: Store, table: sa.Table) -> sa.Insert:
    """An INSERT that skips a row conflicting with one already there instead of failing."""
    if store.backend == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing()
