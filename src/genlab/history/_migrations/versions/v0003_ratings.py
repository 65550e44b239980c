"""Ratings: people's blind pairwise votes between two results of the same prompt.

A table of their own (not columns of ``tasks``): a task is rated many times, by many people,
against many others. Rows are only ever added; an undo marks its row (``undone_at``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if inspector.has_table("ratings"):
        return
    op.create_table(
        "ratings",
        sa.Column("rating_id", sa.Text(), primary_key=True),
        sa.Column("rated_at", sa.Double(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("left_task", sa.Text(), nullable=False),
        sa.Column("right_task", sa.Text(), nullable=False),
        sa.Column("left_model", sa.Text(), nullable=False),
        sa.Column("right_model", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text()),
        sa.Column("prompt_address", sa.Text(), nullable=False),
        sa.Column("left_settings", sa.Text()),
        sa.Column("right_settings", sa.Text()),
        sa.Column("tag", sa.Text()),
        sa.Column("rater", sa.Text()),
        sa.Column("host", sa.Text()),
        sa.Column("project", sa.Text()),
        sa.Column("notebook", sa.Text()),
        sa.Column("undone_at", sa.Double()),
    )
    # A leaderboard reads a period's ratings; a rater resuming reads a comparison's tasks.
    op.create_index("ratings_rated", "ratings", ["rated_at"])
    op.create_index("ratings_tasks", "ratings", ["left_task", "right_task"])


def downgrade() -> None:
    # Refused on purpose: a downgrade would drop the ratings people made.
    raise RuntimeError("genlab's history is never downgraded: its rows would be lost")
