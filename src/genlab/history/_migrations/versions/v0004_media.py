"""Media facts: what the kept media measured (the first file's size, length, frame rate,
codecs, audio and bytes; every file's facts as JSON), and whether that is what was asked.

Every column is nullable: older rows read as "not measured", and nothing is re-probed.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# Frozen here: later changes belong to later revisions.
_NEW: list[tuple[str, type[sa.types.TypeEngine[Any]]]] = [
    ("as_asked", sa.SmallInteger), ("mismatches", sa.Text),
    ("media_width", sa.BigInteger), ("media_height", sa.BigInteger),
    ("media_duration", sa.Double), ("media_fps", sa.Double), ("media_frames", sa.BigInteger),
    ("video_codec", sa.Text), ("audio_codec", sa.Text), ("has_audio", sa.SmallInteger),
    ("media_bytes", sa.BigInteger), ("media_facts", sa.Text),
]


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    present = {c["name"] for c in inspector.get_columns("tasks")}
    for name, kind in _NEW:
        if name not in present:
            op.add_column("tasks", sa.Column(name, kind(), nullable=True))


def downgrade() -> None:
    # Refused on purpose: a downgrade would drop columns, and with them measured facts.
    raise RuntimeError("genlab's history is never downgraded: its rows would be lost")
