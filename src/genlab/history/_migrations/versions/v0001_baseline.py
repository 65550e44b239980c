"""The history as genlab wrote it before migrations: create it, or complete an older file.

Files written by earlier versions have the tables but may lack columns added since (all
nullable) and the address index; this revision adds what is missing and never drops anything.
Its column list is frozen here: later changes belong to later revisions.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_TEXT, _INT, _REAL = sa.Text, sa.BigInteger, sa.Double

# name, type, NOT NULL
_TASKS: list[tuple[str, type[sa.types.TypeEngine[Any]], bool]] = [
    ("task_id", _TEXT, False), ("model", _TEXT, True), ("kind", _TEXT, True),
    ("mode", _TEXT, False), ("status", _TEXT, False), ("state", _TEXT, True),
    ("tag", _TEXT, False), ("prompt", _TEXT, False), ("resolution", _TEXT, False),
    ("duration", _REAL, False), ("credits", _INT, False), ("assumed_credits", _INT, False),
    ("submitted_at", _REAL, True), ("accepted_at", _REAL, False), ("created_at", _REAL, False),
    ("started_at", _REAL, False), ("completed_at", _REAL, False), ("error_code", _TEXT, False),
    ("error_message", _TEXT, False), ("error_json", _TEXT, False),
    ("result_count", _INT, False), ("result_url", _TEXT, False), ("width", _INT, False),
    ("height", _INT, False), ("media_seconds", _REAL, False), ("results", _TEXT, False),
    ("paths", _TEXT, False), ("request", _TEXT, True), ("entry_id", _TEXT, True),
    ("reason", _TEXT, False), ("address", _TEXT, False), ("updated_at", _REAL, True),
]

_INDEXES = {
    "tasks_model": ("tasks", ["model", "resolution", "duration", "status"]),
    "tasks_submitted": ("tasks", ["submitted_at"]),
    "tasks_address": ("tasks", ["address", "status", "completed_at"]),
    "events_task": ("events", ["task_id"]),
}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table("tasks"):
        op.create_table(
            "tasks",
            *(
                sa.Column(
                    name, kind(), nullable=not required, primary_key=name == "entry_id",
                    unique=name == "task_id" or None,
                )
                for name, kind, required in _TASKS
            ),
        )
    else:
        present = {c["name"] for c in inspector.get_columns("tasks")}
        for name, kind, _required in _TASKS:
            if name not in present:  # added by later versions, always nullable
                op.add_column("tasks", sa.Column(name, kind(), nullable=True))
    if not inspector.has_table("events"):
        op.create_table(
            "events",
            sa.Column("task_id", _TEXT(), nullable=False),
            sa.Column("status", _TEXT(), nullable=False),
            sa.Column("at", _REAL(), nullable=False),
        )
    if not inspector.has_table("reuses"):
        op.create_table(
            "reuses",
            sa.Column("at", _REAL(), nullable=False),
            sa.Column("address", _TEXT(), nullable=False),
            sa.Column("task_id", _TEXT(), nullable=False),
            sa.Column("model", _TEXT(), nullable=False),
            sa.Column("tag", _TEXT()),
            sa.Column("credits_saved", _INT()),
        )
    existing = {
        index["name"] for table in ("tasks", "events") for index in inspector.get_indexes(table)
    }
    for name, (table, columns) in _INDEXES.items():
        if name not in existing:
            op.create_index(name, table, columns)


def downgrade() -> None:
    # Refused on purpose: a downgrade would drop columns, and with them recorded runs.
    raise RuntimeError("genlab's history is never downgraded: its rows would be lost")
