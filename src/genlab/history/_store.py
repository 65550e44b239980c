"""The history's store: one SQLAlchemy engine over SQLite or PostgreSQL, its schema brought up
to date, its transactions, raw queries and bulk appends. It knows tables, not tasks: the
journal, the views and resume are built on it (see :class:`genlab.History`).

Example:
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> store.query("SELECT COUNT(*) AS n FROM tasks"), store.backend
    ([{'n': 0}], 'sqlite')
    >>> store.close()
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import sqlalchemy as sa

from genlab.history._location import connect, locate
from genlab.history._migrate import upgrade
from genlab.history._pending import open_error
from genlab.history._schema import TASKS

CHUNK = 500
"""Values per ``IN (...)`` list of :meth:`Store.tuples_in`: well inside SQLite's (999 on old
builds) and PostgreSQL's (65,535) limits on a statement's parameters."""


class Store:
    """An opened history location, its schema brought up to date.

    One lock serialises this object's own writes (the client's journal thread, a notebook
    recording a vote); other processes and machines go through their own. Reads take no lock:
    each runs on a pooled connection of its own, and on SQLite (WAL) beside a write that waits
    for the file, so a history another process holds never stalls a read.

    Raises:
        GenlabError: the location cannot be opened (what is wrong and what to do).
    """

    def __init__(self, location: str | os.PathLike[str] | None = None) -> None:
        self.where = locate(location)
        self._lock = threading.RLock()
        try:
            self._engine = connect(self.where)
            # A store dropped without close() still closes its database connections.
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

    @property
    def engine(self) -> sa.Engine:
        return self._engine

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    @contextmanager
    def write(self) -> Iterator[sa.Connection]:
        """One write transaction (on SQLite it holds the file's write lock from the start)."""
        with self._lock, self._engine.connect().execution_options(genlab_write=True) as db:
            with db.begin():
                yield db

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """One read transaction, never queued behind this object's writes: on SQLite in WAL
        mode it reads the last committed state while a write waits for (or holds) the file."""
        with self._engine.connect() as db, db.begin():
            yield db

    def rows(self, statement: sa.Executable) -> list[sa.Row[Any]]:
        """Run a SELECT built with SQLAlchemy Core; its rows."""
        with self.read() as db:
            return list(db.execute(statement))

    def tuples(self, statement: sa.Executable) -> list[tuple[Any, ...]]:
        """Run a SELECT; its rows as the driver's plain tuples (for bulk reads: ``df()``)."""
        with self.read() as db:
            result = db.execute(statement)
            try:  # the driver's own rows: numpy reads tuples ~15x faster than Row objects
                return list(result.cursor.fetchall()) if result.cursor else []
            finally:
                result.close()

    def tuples_in(
        self, statement: sa.Select[Any], column: sa.ColumnElement[Any], values: Iterable[Any]
    ) -> list[tuple[Any, ...]]:
        """Run a SELECT narrowed to rows whose ``column`` is one of ``values`` (any number of
        them, each asked once: :data:`CHUNK` per statement); the rows of every statement, in
        turn (each statement's in its own order).

        Example:
            >>> import os, tempfile
            >>> store = Store(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
            >>> store.tuples_in(sa.select(TASKS.c.model), TASKS.c.task_id,
            ...                 (f"t{i}" for i in range(1200)))
            []
            >>> store.close()
        """
        wanted = list(dict.fromkeys(values))
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(wanted), CHUNK):
            rows += self.tuples(statement.where(column.in_(wanted[start:start + CHUNK])))
        return rows

    def query(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[Mapping[str, Any]]:
        """Run one SQL statement (``?`` or ``:name`` placeholders); its rows as mappings."""
        if not isinstance(params, Mapping):
            parts = sql.split("?")
            sql = "".join(f"{p}:p{i}" for i, p in enumerate(parts[:-1])) + parts[-1]
            params = {f"p{i}": v for i, v in enumerate(params)}
        reading = sql.lstrip()[:6].upper() in ("SELECT", "PRAGMA")
        with self.read() if reading else self.write() as db:
            result = db.execute(sa.text(sql), dict(params))
            return [dict(r) for r in result.mappings()] if result.returns_rows else []

    def append_many(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert finished rows of the ``tasks`` table in one transaction (imports, tests,
        benchmarks); how many."""
        now = time.time()
        names = [c.name for c in TASKS.columns]
        values = [tuple(row.get(c, now if c == "updated_at" else None) for c in names)
                  for row in rows]
        if values:
            with self.write() as db:
                quote = db.dialect.identifier_preparer.quote
                columns = ", ".join(quote(c) for c in names)
                driver = db.connection.driver_connection
                if self.backend == "sqlite":  # the driver's executemany on plain tuples: ~2x
                    # the rows per second of SQLAlchemy's per-row parameter processing
                    cursor = driver.cursor()  # type: ignore[union-attr]
                    cursor.executemany(
                        f"INSERT INTO tasks ({columns}) VALUES ({', '.join('?' * len(names))})",
                        values,
                    )
                elif db.dialect.driver == "psycopg":
                    # COPY streams the rows as one statement. An INSERT per row (psycopg's
                    # executemany, which SQLAlchemy uses when nothing is returned) sends them
                    # pipelined and stalls ~200 ms whenever the socket's buffers fill; multi-row
                    # INSERTs of ~860 rows x 38 parameters are slower still to parse and plan.
                    with driver.cursor().copy(  # type: ignore[union-attr]
                        f"COPY tasks ({columns}) FROM STDIN"
                    ) as copy:
                        for value in values:
                            copy.write_row(value)
                else:  # psycopg2: SQLAlchemy's batched INSERTs
                    db.execute(sa.insert(TASKS), [dict(zip(names, v, strict=True))
                                                  for v in values])
        return len(values)

    def close(self) -> None:
        """Close the database connections."""
        with self._lock:
            self._engine.dispose()
