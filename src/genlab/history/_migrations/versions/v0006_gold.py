"""Gold votes: a rating may be a gold pair's (a result against a copy of itself that genlab
degraded), whose better side is known; ``gold`` says which side that was, NULL for a real pair.

A column of ``ratings``, not a table of its own: a gold vote is a vote like any other (who,
when, where, undo), read apart (``History.ratings(gold=True)``) and never in a leaderboard.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("ratings")}
    if "gold" not in columns:
        op.add_column("ratings", sa.Column("gold", sa.Text()))


def downgrade() -> None:
    # Refused on purpose: a downgrade would mix gold votes with real ones.
    raise RuntimeError("genlab's history is never downgraded: its rows would be lost")
