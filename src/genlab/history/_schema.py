"""The history's tables as SQLAlchemy Core objects, derived from the one column table.

The same :data:`TASKS`, :data:`EVENTS` and :data:`REUSES` serve SQLite and PostgreSQL; the
schema in a database is created and upgraded by the migrations in ``_migrations/`` (Alembic),
and :data:`HEAD` names the newest of them.

Example:
    >>> TASKS.c.entry_id.primary_key, TASKS.c["user"].nullable
    (True, True)
    >>> str(TASKS.c.credits.type), str(TASKS.c.submitted_at.type)
    ('BIGINT', 'DOUBLE')
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from genlab.history._columns import COLUMNS, Type

HEAD = "0002"
"""The newest migration; a database stamped with it needs no upgrade."""

_TYPES: dict[Type, type[sa.types.TypeEngine[Any]]] = {
    "text": sa.Text,
    "int": sa.BigInteger,
    "float": sa.Double,
    "time": sa.Double,  # seconds since the epoch, as the SQLite files have always stored them
}

METADATA = sa.MetaData()

TASKS = sa.Table(
    "tasks",
    METADATA,
    *(
        sa.Column(
            c.name,
            _TYPES[c.type](),
            primary_key="PRIMARY KEY" in c.constraint,
            unique="UNIQUE" in c.constraint or None,
            nullable="NOT NULL" not in c.constraint and "PRIMARY KEY" not in c.constraint,
        )
        for c in COLUMNS
        if c.stored
    ),
)

EVENTS = sa.Table(
    "events",
    METADATA,
    sa.Column("task_id", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("at", sa.Double, nullable=False),
)

REUSES = sa.Table(
    "reuses",
    METADATA,
    sa.Column("at", sa.Double, nullable=False),
    sa.Column("address", sa.Text, nullable=False),
    sa.Column("task_id", sa.Text, nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("tag", sa.Text),
    sa.Column("credits_saved", sa.BigInteger),
)
