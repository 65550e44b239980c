"""Prompts kept in the history: named templates, their numbered versions and aliases.

A version is never changed once saved: a revision is a new version whose ``parent`` is the one
it was revised from. Saving a text a prompt already has returns that version, so running a
notebook's cells again makes no new versions. An alias (``best``) names one version of a
prompt and may be moved to another.

Example:
    >>> import os, tempfile
    >>> from genlab.history import History
    >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> history.save_prompt("kite", "A {subject} at dusk").version
    1
    >>> history.save_prompt("kite", "A {subject} at dawn", parent=1).version
    2
    >>> history.save_prompt("kite", "A {subject} at dusk").version   # the same text again
    1
    >>> history.set_prompt_alias("kite", "best", 2)
    >>> history.prompt_version("kite", "best").template
    'A {subject} at dawn'
    >>> history.prompts()[["name", "version", "parent", "aliases"]].values.tolist()
    [['kite', 1, <NA>, ''], ['kite', 2, 1, 'best']]
    >>> history.close()
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from genlab.history._schema import PROMPT_ALIASES, PROMPT_VERSIONS, PROMPTS
from genlab.history._store import Store
from genlab.history._who import Who

if TYPE_CHECKING:
    import pandas as pd

PROMPT_COLUMNS: tuple[str, ...] = (
    "name", "version", "parent", "aliases", "template", "created_at", "user",
)
"""The columns of ``History.prompts()``, in order."""

_NAME = re.compile(r"^[^@\s][^@]*$")


@dataclass(frozen=True, slots=True)
class PromptVersion:
    """One saved version of a prompt.

    Attributes:
        name: the prompt's name.
        version: its number, from 1.
        template: the text, with ``{variable}`` slots.
        parent: the version it was revised from (None for a first version).
        created_at: epoch seconds.
        user: who saved it.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> saved = history.save_prompt("kite", "A kite at dusk")
        >>> saved.name, saved.version, saved.parent
        ('kite', 1, None)
        >>> history.close()
    """

    name: str
    version: int
    template: str
    parent: int | None
    created_at: float
    user: str | None


def check_name(name: object, what: str = "a prompt's name") -> str:
    """``name`` if it may name a prompt or an alias (text, no ``@``, not blank).

    Example:
        >>> check_name("kite")
        'kite'
        >>> check_name("kite@2")
        Traceback (most recent call last):
            ...
        ValueError: a prompt's name must be text without '@' ...
    """
    if not isinstance(name, str) or not _NAME.match(name.strip() or "@"):
        raise ValueError(
            f"{what} must be text without '@' (it separates a name from a version: "
            f"'kite@2', 'kite@best'), got {name!r}"
        )
    return name.strip()


def _version(row: Any) -> PromptVersion:
    name, version, template, parent, created_at, user = tuple(row)
    return PromptVersion(name, int(version), template,
                         None if parent is None else int(parent), float(created_at), user)


_COLUMNS = (
    PROMPT_VERSIONS.c.name, PROMPT_VERSIONS.c.version, PROMPT_VERSIONS.c.template,
    PROMPT_VERSIONS.c.parent, PROMPT_VERSIONS.c.created_at, PROMPT_VERSIONS.c.user,
)


def saved_or_next(
    db: sa.Connection, name: str, template: str
) -> tuple[PromptVersion | None, int]:
    """The version of prompt ``name`` saved with exactly ``template`` (None when there is
    none), and the number a new version of ``name`` takes: one after the newest, 1 for a new
    prompt. How a text gets its number, in one place: saving, and copying a history."""
    same = db.execute(
        sa.select(*_COLUMNS)
        .where(PROMPT_VERSIONS.c.name == name, PROMPT_VERSIONS.c.template == template)
        .order_by(PROMPT_VERSIONS.c.version).limit(1)
    ).first()
    newest = db.execute(
        sa.select(sa.func.max(PROMPT_VERSIONS.c.version)).where(PROMPT_VERSIONS.c.name == name)
    ).scalar()
    return (None if same is None else _version(same)), 1 if newest is None else int(newest) + 1


class Prompts:
    """The prompt tables of ``store``; ``who`` is recorded with what is saved."""

    def __init__(self, store: Store, who: Who) -> None:
        self._store = store
        self._who = who

    def save(self, name: str, template: str, parent: int | None = None) -> PromptVersion:
        """The version of ``name`` with this exact text, else a new one (numbered after the
        newest, its parent ``parent`` or else the newest)."""
        name = check_name(name)
        if not isinstance(template, str) or not template.strip():
            raise ValueError(f"a prompt's text must be non-empty text, got {template!r}")
        for attempt in range(5):  # two writers may number the same version: the loser retries
            try:
                return self._save(name, template, parent)
            except sa.exc.IntegrityError:
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")

    def _save(self, name: str, template: str, parent: int | None) -> PromptVersion:
        now = time.time()
        with self._store.write() as db:
            same, version = saved_or_next(db, name, template)
            if same is not None:
                return same
            if version == 1:
                db.execute(sa.insert(PROMPTS).values(name=name, created_at=now,
                                                     user=self._who.user))
            elif parent is not None and not 1 <= parent < version:
                raise ValueError(
                    f"prompt {name!r} has no version {parent}; it has 1 to {version - 1}")
            parent = parent if parent is not None else (None if version == 1 else version - 1)
            db.execute(sa.insert(PROMPT_VERSIONS).values(
                name=name, version=version, template=template, parent=parent, created_at=now,
                user=self._who.user, host=self._who.host,
            ))
        return PromptVersion(name, version, template, parent, now, self._who.user)

    def get(self, name: str, ref: int | str | None = None) -> PromptVersion:
        """Version ``ref`` of ``name``: a number, an alias, or None for the newest.

        Raises:
            LookupError: no such prompt, version or alias (the message lists what there is).
        """
        name = check_name(name)
        with self._store.read() as db:
            query = sa.select(*_COLUMNS).where(PROMPT_VERSIONS.c.name == name)
            numbers = [int(v) for v in db.execute(
                sa.select(PROMPT_VERSIONS.c.version).where(PROMPT_VERSIONS.c.name == name)
            ).scalars()]
            if not numbers:
                known = sorted(db.execute(sa.select(PROMPTS.c.name)).scalars())
                shown = ", ".join(repr(k) for k in known[:20]) or "none yet"
                raise LookupError(
                    f"there is no prompt named {name!r} in this history (prompts: {shown}); "
                    f"make one with genlab.prompt('A {{subject}} at dusk', name={name!r})"
                )
            number: int | None
            if ref is None:
                number = max(numbers)
            elif isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()):
                number = int(ref)
            else:
                number = db.execute(
                    sa.select(PROMPT_ALIASES.c.version).where(
                        PROMPT_ALIASES.c.name == name, PROMPT_ALIASES.c.alias == ref.strip())
                ).scalar()
                if number is None:
                    aliases = sorted(db.execute(
                        sa.select(PROMPT_ALIASES.c.alias).where(PROMPT_ALIASES.c.name == name)
                    ).scalars())
                    raise LookupError(
                        f"prompt {name!r} has no alias {ref!r} (aliases: "
                        f"{', '.join(aliases) or 'none'}; versions 1 to {max(numbers)})"
                    )
            row = db.execute(query.where(PROMPT_VERSIONS.c.version == number)).first()
            if row is None:
                raise LookupError(
                    f"prompt {name!r} has no version {ref}; it has versions 1 to {max(numbers)}"
                )
            return _version(row)

    def alias(self, name: str, alias: str, version: int) -> None:
        """Point ``alias`` of ``name`` at ``version`` (moving it if it pointed elsewhere)."""
        alias = check_name(alias, "an alias")
        if alias.isdigit():
            raise ValueError(f"an alias cannot be a number ({alias!r} reads as a version)")
        self.get(name, version)  # it exists
        with self._store.write() as db:
            db.execute(sa.delete(PROMPT_ALIASES).where(
                PROMPT_ALIASES.c.name == name, PROMPT_ALIASES.c.alias == alias))
            db.execute(sa.insert(PROMPT_ALIASES).values(
                name=name, alias=alias, version=version, set_at=time.time(),
                user=self._who.user))

    def aliases(self, name: str) -> dict[str, int]:
        """Alias -> version, for ``name``."""
        rows = self._store.tuples(
            sa.select(PROMPT_ALIASES.c.alias, PROMPT_ALIASES.c.version)
            .where(PROMPT_ALIASES.c.name == name)
        )
        return {str(a): int(v) for a, v in rows}

    def frame(self, name: str | None = None) -> pd.DataFrame:
        """One row per version (the columns of :data:`PROMPT_COLUMNS`), by name and number."""
        import pandas as pd

        query = sa.select(*_COLUMNS).order_by(PROMPT_VERSIONS.c.name, PROMPT_VERSIONS.c.version)
        aliases = sa.select(PROMPT_ALIASES.c.name, PROMPT_ALIASES.c.alias,
                            PROMPT_ALIASES.c.version).order_by(PROMPT_ALIASES.c.alias)
        if name is not None:
            query = query.where(PROMPT_VERSIONS.c.name == name)
            aliases = aliases.where(PROMPT_ALIASES.c.name == name)
        named: dict[tuple[str, int], list[str]] = {}
        for prompt, alias, version in self._store.tuples(aliases):
            named.setdefault((prompt, int(version)), []).append(alias)
        rows = [
            {"name": v.name, "version": v.version, "parent": v.parent,
             "aliases": ", ".join(named.get((v.name, v.version), [])), "template": v.template,
             "created_at": v.created_at, "user": v.user}
            for v in map(_version, self._store.rows(query))
        ]
        frame = pd.DataFrame(rows, columns=list(PROMPT_COLUMNS))
        frame["version"] = frame["version"].astype("Int64")
        frame["parent"] = frame["parent"].astype("Int64")
        for column in ("name", "aliases", "template", "user"):
            frame[column] = frame[column].astype("string")
        frame["created_at"] = pd.to_datetime(frame["created_at"].astype("float64"), unit="s",
                                             utc=True)
        return frame
