"""Where a history lives: a SQLite file (the embedded default) or a PostgreSQL database.

``History(location)`` takes a path, ``sqlite:///path`` or ``postgresql://user@host/db``
(also from ``$GENLAB_HISTORY``). Anything else is refused with an error that says what works,
so a team never writes, each unknowingly, to a local copy of what they meant to share.

Example:
    >>> where = locate("postgresql://ana:s3cret@db.example/genlab")
    >>> where.backend, where.shown, where.path is None
    ('postgresql', 'postgresql://ana:***@db.example/genlab', True)
    >>> locate("runs/history.sqlite").path
    PosixPath('runs/history.sqlite')
    >>> locate("mysql://db/genlab")
    Traceback (most recent call last):
    ...
    genlab._errors.ConfigurationError: unsupported history location 'mysql://db/genlab': ...
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy import event

from genlab._errors import ConfigurationError

DEFAULT_PATH = Path(".genlab") / "history.sqlite"

# A URL scheme: two characters at least, so a Windows drive ("C:\...") stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")
_POSTGRES = {"postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2"}
_WORKS = (
    "a file path or sqlite:///path/to/history.sqlite (one machine), or "
    "postgresql://user@host:5432/database (a team's shared history; "
    'pip install "genlab[team]")'
)


@dataclass(frozen=True, slots=True)
class Location:
    """A parsed history location.

    Attributes:
        url: the SQLAlchemy URL (with its password, never shown).
        backend: ``sqlite`` or ``postgresql``.
        path: the SQLite file; None for a database server.
    """

    url: sa.URL
    backend: Literal["sqlite", "postgresql"]
    path: Path | None

    @property
    def shown(self) -> str:
        """The location as it may be shown: a path, or the URL with its password hidden."""
        if self.path is not None:
            return str(self.path)
        return self.url.set(drivername="postgresql").render_as_string(hide_password=True)


def locate(location: str | os.PathLike[str] | None = None) -> Location:
    """Parse a history location; None means ``$GENLAB_HISTORY``, else ``.genlab/history.sqlite``.

    Raises:
        ConfigurationError: neither a path nor a supported URL.
    """
    if location is None:
        location = os.environ.get("GENLAB_HISTORY") or DEFAULT_PATH
    if not isinstance(location, str):
        return _sqlite(Path(location))
    text = location.strip()
    if not text:
        raise ConfigurationError(f"the history location is empty: give {_WORKS}")
    scheme = _SCHEME.match(text)
    if scheme is None:
        return _sqlite(Path(text))
    name = scheme.group(1).lower()
    if name == "sqlite" and text.startswith("sqlite:///") and len(text) > len("sqlite:///"):
        return _sqlite(Path(text[len("sqlite:///"):]))
    if name in _POSTGRES and text[len(name):].startswith("://"):
        try:
            url = sa.make_url(text)
        except sa.exc.ArgumentError as exc:
            raise ConfigurationError(f"cannot read the history URL {_hidden(text)}: {exc}") from exc
        driver = "postgresql+psycopg2" if name == "postgresql+psycopg2" else "postgresql+psycopg"
        return Location(url.set(drivername=driver), "postgresql", None)
    raise ConfigurationError(
        f"unsupported history location {_hidden(text)!r}: give {_WORKS}"
    )


def default_path() -> Path:
    """``$GENLAB_HISTORY`` when it is a path, else ``.genlab/history.sqlite``.

    Example:
        >>> import os
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"GENLAB_HISTORY": "runs/h.sqlite"}):
        ...     default_path().as_posix()
        'runs/h.sqlite'
        >>> with mock.patch.dict(os.environ, {"GENLAB_HISTORY": ""}):
        ...     default_path().as_posix()
        '.genlab/history.sqlite'
    """
    where = locate(None)
    return where.path if where.path is not None else DEFAULT_PATH


def _sqlite(path: Path) -> Location:
    return Location(sa.URL.create("sqlite+pysqlite", database=str(path)), "sqlite", path)


def _hidden(text: str) -> str:
    # user:password@host -> user:***@host, without parsing what may not parse
    return re.sub(r"(://[^/:@]*:)[^/@]*@", r"\1***@", text)


def connect(where: Location) -> sa.Engine:
    """An engine for ``where``: SQLite in WAL mode with a 30 s busy timeout and write
    transactions that take the lock at once; PostgreSQL through psycopg with a small pool.

    Raises:
        ConfigurationError: the PostgreSQL driver is not installed.
    """
    if where.path is not None:
        where.path.parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(
            where.url, connect_args={"timeout": 30, "check_same_thread": False}
        )
        event.listen(engine, "connect", _sqlite_connected)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    try:
        return sa.create_engine(where.url, pool_pre_ping=True, pool_size=4, max_overflow=4)
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"a PostgreSQL history needs its driver ({exc.name} is not installed): "
            'pip install "genlab[team]"'
        ) from exc


def _sqlite_connected(dbapi: Any, _record: Any) -> None:
    dbapi.isolation_level = None  # genlab sends BEGIN itself (see _sqlite_begin)
    dbapi.execute("PRAGMA journal_mode=WAL")
    dbapi.execute("PRAGMA synchronous=NORMAL")
    dbapi.execute("PRAGMA busy_timeout=30000")


def _sqlite_begin(connection: sa.Connection) -> None:
    # A write takes the file's write lock when it begins, so a check-then-insert (the day's
    # budget) cannot interleave with another process; reads begin deferred and never block.
    writing = connection.get_execution_options().get("genlab_write", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")
