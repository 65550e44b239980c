"""Bringing a database's schema up to :data:`HEAD` when a history opens it (Alembic).

Every process opening a history upgrades it if needed, inside one transaction that holds the
database's write lock (SQLite) or an advisory lock (PostgreSQL): several notebooks opening an
old history at once upgrade it once, and an upgrade never drops a row.
"""

from __future__ import annotations

import logging
from pathlib import Path

import sqlalchemy as sa

from genlab.history._schema import HEAD

logger = logging.getLogger("genlab")

SCRIPTS = Path(__file__).with_name("_migrations")
"""Alembic's script folder: ``env.py`` and ``versions/``."""

_LOCK = 0x67656E6C6162  # "genlab" as a number: the advisory lock migrations take on PostgreSQL


def revision(connection: sa.Connection) -> str | None:
    """The database's schema revision; None for an empty database or a pre-migration file."""
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def upgrade(engine: sa.Engine) -> None:
    """Create or upgrade the history's tables to :data:`HEAD`; a no-op when already there."""
    with engine.connect().execution_options(genlab_write=True) as connection, connection.begin():
        if engine.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK})
        current = revision(connection)
        if current == HEAD:
            return
        if current is not None and current > HEAD:
            logger.warning(
                "genlab: this history was upgraded by a newer genlab (schema %s, this one "
                "knows %s); reading and writing the columns it knows", current, HEAD,
            )
            return
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(SCRIPTS))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        logger.info("genlab: history schema upgraded from %s to %s", current or "none", HEAD)
