"""The history's tables as SQLAlchemy Core objects, derived from the one column table.

The same :data:`TASKS`, :data:`EVENTS`, :data:`REUSES`, :data:`RATINGS` and the prompt,
experiment and score tables serve SQLite and
PostgreSQL; the schema in a database is created and upgraded by the migrations in
``_migrations/`` (Alembic), and :data:`HEAD` names the newest of them.

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

HEAD = "0006"
"""The newest migration; a database stamped with it needs no upgrade."""

_TYPES: dict[Type, type[sa.types.TypeEngine[Any]]] = {
    "text": sa.Text,
    "int": sa.BigInteger,
    "float": sa.Double,
    "bool": sa.SmallInteger,  # 0 or 1, NULL when unknown (the same on SQLite and PostgreSQL)
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

RATINGS = sa.Table(
    "ratings",
    METADATA,
    sa.Column("rating_id", sa.Text, primary_key=True),
    sa.Column("rated_at", sa.Double, nullable=False),
    sa.Column("answer", sa.Text, nullable=False),  # left, right, tie, both bad
    sa.Column("left_task", sa.Text, nullable=False),
    sa.Column("right_task", sa.Text, nullable=False),
    sa.Column("left_model", sa.Text, nullable=False),
    sa.Column("right_model", sa.Text, nullable=False),
    sa.Column("prompt", sa.Text),
    sa.Column("prompt_address", sa.Text, nullable=False),
    sa.Column("left_settings", sa.Text),  # each side's settings as sent, as JSON
    sa.Column("right_settings", sa.Text),
    sa.Column("tag", sa.Text),
    sa.Column("rater", sa.Text),
    sa.Column("host", sa.Text),
    sa.Column("project", sa.Text),
    sa.Column("notebook", sa.Text),
    sa.Column("undone_at", sa.Double),  # the rater took it back (undo); the row stays
    sa.Column("gold", sa.Text),  # a gold pair's better side (left, right); NULL: a real pair
)

PROMPTS = sa.Table(
    "prompts",
    METADATA,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("user", sa.Text),
)

PROMPT_VERSIONS = sa.Table(
    "prompt_versions",
    METADATA,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("version", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("template", sa.Text, nullable=False),
    sa.Column("parent", sa.BigInteger),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("user", sa.Text),
    sa.Column("host", sa.Text),
)

PROMPT_ALIASES = sa.Table(
    "prompt_aliases",
    METADATA,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("alias", sa.Text, primary_key=True),
    sa.Column("version", sa.BigInteger, nullable=False),
    sa.Column("set_at", sa.Double, nullable=False),
    sa.Column("user", sa.Text),
)

EXPERIMENT_CELLS = sa.Table(
    "experiment_cells",
    METADATA,
    sa.Column("experiment", sa.Text, primary_key=True),
    sa.Column("cell", sa.Text, primary_key=True),
    sa.Column("prompt_name", sa.Text, nullable=False),
    sa.Column("prompt_version", sa.BigInteger, nullable=False),
    sa.Column("variables", sa.Text, nullable=False),  # JSON object
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("seed", sa.BigInteger),
    sa.Column("address", sa.Text),
    sa.Column("task_id", sa.Text),
    sa.Column("created_at", sa.Double, nullable=False),
)

SCORES = sa.Table(
    "scores",
    METADATA,
    sa.Column("task_id", sa.Text, primary_key=True),
    sa.Column("scorer", sa.Text, primary_key=True),
    sa.Column("value", sa.Double),
    sa.Column("scored_at", sa.Double, nullable=False),
)
