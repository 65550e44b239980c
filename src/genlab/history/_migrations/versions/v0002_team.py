"""A team's history: who ran each task and where, and leases on the tasks being waited for."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_NEW = [
    ("user", sa.Text), ("host", sa.Text), ("project", sa.Text), ("notebook", sa.Text),
    ("lease_owner", sa.Text), ("lease_until", sa.Double),
]


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    present = {c["name"] for c in inspector.get_columns("tasks")}
    for name, kind in _NEW:
        if name not in present:
            op.add_column("tasks", sa.Column(name, kind(), nullable=True))
    # Resume's question on a shared history: accepted tasks not seen to the end.
    op.create_index("tasks_unfinished", "tasks", ["state", "status"])


def downgrade() -> None:
    # Refused on purpose: a downgrade would drop columns, and with them recorded runs.
    raise RuntimeError("genlab's history is never downgraded: its rows would be lost")
