"""Prompts, their versions and aliases; experiments' cells; scores of kept results.

A prompt is a named template; each revision is a new version (numbered from 1, with its
parent), never changed afterwards. An alias (``best``) points at one version and may be moved.
An experiment's cells say which prompt version, variables, model and seed each task answered;
a score is one number a scorer gave one task's kept media.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    present = set(sa.inspect(op.get_bind()).get_table_names())
    if "prompts" not in present:
        op.create_table(
            "prompts",
            sa.Column("name", sa.Text(), primary_key=True),
            sa.Column("created_at", sa.Double(), nullable=False),
            sa.Column("user", sa.Text()),
        )
    if "prompt_versions" not in present:
        op.create_table(
            "prompt_versions",
            sa.Column("name", sa.Text(), primary_key=True),
            sa.Column("version", sa.BigInteger(), primary_key=True, autoincrement=False),
            sa.Column("template", sa.Text(), nullable=False),
            sa.Column("parent", sa.BigInteger()),
            sa.Column("created_at", sa.Double(), nullable=False),
            sa.Column("user", sa.Text()),
            sa.Column("host", sa.Text()),
        )
    if "prompt_aliases" not in present:
        op.create_table(
            "prompt_aliases",
            sa.Column("name", sa.Text(), primary_key=True),
            sa.Column("alias", sa.Text(), primary_key=True),
            sa.Column("version", sa.BigInteger(), nullable=False),
            sa.Column("set_at", sa.Double(), nullable=False),
            sa.Column("user", sa.Text()),
        )
    if "experiment_cells" not in present:
        op.create_table(
            "experiment_cells",
            sa.Column("experiment", sa.Text(), primary_key=True),
            sa.Column("cell", sa.Text(), primary_key=True),
            sa.Column("prompt_name", sa.Text(), nullable=False),
            sa.Column("prompt_version", sa.BigInteger(), nullable=False),
            sa.Column("variables", sa.Text(), nullable=False),  # JSON object
            sa.Column("model", sa.Text(), nullable=False),
            sa.Column("seed", sa.BigInteger()),
            sa.Column("address", sa.Text()),
            sa.Column("task_id", sa.Text()),
            sa.Column("created_at", sa.Double(), nullable=False),
        )
        op.create_index("experiment_cells_task", "experiment_cells", ["task_id"])
    if "scores" not in present:
        op.create_table(
            "scores",
            sa.Column("task_id", sa.Text(), primary_key=True),
            sa.Column("scorer", sa.Text(), primary_key=True),
            sa.Column("value", sa.Double()),
            sa.Column("scored_at", sa.Double(), nullable=False),
        )


def downgrade() -> None:
    # Refused on purpose: a downgrade would drop people's prompts and scores.
    raise RuntimeError("genlab's history is never downgraded: its rows would be lost")
