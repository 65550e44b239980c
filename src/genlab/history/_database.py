"""The history's database: one SQLAlchemy engine over SQLite or PostgreSQL, its transactions and
raw queries. :class:`~genlab.history._store.Journal` builds the journal protocol on it.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import sqlalchemy as sa

from genlab.history._location import connect, locate
from genlab.history._migrate import upgrade
from genlab.history._pending import open_error


class Database:
    """An opened history location, its schema brought up to date.

    One lock serialises this object's own transactions (the client writes from its journal
    thread while a notebook reads); other processes and machines go through their own.
    """

    def __init__(self, location: str | os.PathLike[str] | None = None) -> None:
        self.where = locate(location)
        self._lock = threading.RLock()
        try:
            self._engine = connect(self.where)
            # A history dropped without close() still closes its database connections.
            weakref.finalize(self, self._engine.dispose)
            upgrade(self._engine)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            raise open_error(self.where.shown, exc, sqlite=self.where.path is not None) from exc

    @property
    def location(self) -> str:
        """Where the history lives, as it may be shown (a database's password hidden)."""
        return self.where.shown

    @property
    def backend(self) -> Literal["sqlite", "postgresql"]:
        return self.where.backend

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        """One write transaction (on SQLite it holds the file's write lock from the start)."""
        with self._lock, self._engine.connect().execution_options(genlab_write=True) as db:
            with db.begin():
                yield db

    @contextmanager
    def _read(self) -> Iterator[sa.Connection]:
        with self._lock, self._engine.connect() as db, db.begin():
            yield db

    def rows(self, statement: sa.Executable) -> list[sa.Row[Any]]:
        """Run a SELECT built with SQLAlchemy Core; its rows."""
        with self._read() as db:
            return list(db.execute(statement))

    def tuples(self, statement: sa.Executable) -> list[tuple[Any, ...]]:
        """Run a SELECT; its rows as the driver's plain tuples (for bulk reads: ``df()``)."""
        with self._read() as db:
            result = db.execute(statement)
            try:  # the driver's own rows: numpy reads tuples ~15x faster than Row objects
                return list(result.cursor.fetchall()) if result.cursor else []
            finally:
                result.close()

    def query(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[Mapping[str, Any]]:
        """Run one SQL statement (``?`` or ``:name`` placeholders); its rows as mappings."""
        if not isinstance(params, Mapping):
            parts = sql.split("?")
            sql = "".join(f"{p}:p{i}" for i, p in enumerate(parts[:-1])) + parts[-1]
            params = {f"p{i}": v for i, v in enumerate(params)}
        reading = sql.lstrip()[:6].upper() in ("SELECT", "PRAGMA")
        with self._read() if reading else self._write() as db:
            result = db.execute(sa.text(sql), dict(params))
            return [dict(r) for r in result.mappings()] if result.returns_rows else []

    @property
    def engine(self) -> sa.Engine:
        return self._engine

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def close(self) -> None:
        """Close the database connections."""
        with self._lock:
            self._engine.dispose()
