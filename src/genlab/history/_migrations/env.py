"""Alembic's entry point: runs the migrations on the connection genlab hands it.

genlab upgrades a history when it opens it (``History(url)``), inside its own transaction; this
file is not meant to be run by the ``alembic`` command line.
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
