"""One rater's votes as a history file of its own, to carry from one machine to another.

The rating page on Binder (``genlab app --rate NAME``) keeps votes in a history that vanishes
with the session; "Download my votes" gives the person this file, and whoever keeps the team's
history merges it with ``genlab history migrate FILE DEST``. The file is a copy of the history
(``genlab.history.copy_history``: the results and experiments the votes refer to, every
vote's ``rating_id``) from which every other rater's votes are removed; ``migrate`` copies
rows by id, so merging the same file twice adds nothing the second time. It lives in
genlab.history, beside ``copy_history``: it edits the copy's ``ratings`` table, and only
genlab.history writes SQL on its tables.

Example:
    path = votes_file(history, "ana", "genlab-media/votes/votes-ana.sqlite")
    # then, where the team's history is:  genlab history migrate votes-ana.sqlite team.sqlite
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from genlab.history._copy import copy_history

if TYPE_CHECKING:
    from genlab.history import History


def votes_file(history: History, rater: str, path: str | os.PathLike[str]) -> Path:
    """Write ``rater``'s votes (real and gold, undone ones included, as recorded) and what
    they refer to into a new SQLite history at ``path`` (replaced if there); return it.

    Raises:
        ValueError: ``rater`` is empty, or ``history`` is not a SQLite file (a PostgreSQL
            history is shared already: merge nothing, the votes are there).

    Example:
        >>> import os, tempfile
        >>> from genlab.history import History, RatingEntry
        >>> folder = tempfile.mkdtemp()
        >>> history = History(os.path.join(folder, "h.sqlite"))
        >>> for who in ("ana", "ben"):
        ...     _ = history.add_rating(RatingEntry("t1", "t2", "left", left_model="a",
        ...                                        right_model="b", prompt_address="p",
        ...                                        rater=who))
        >>> mine = History(votes_file(history, "ana", os.path.join(folder, "ana.sqlite")))
        >>> mine.ratings()["rater"].tolist()
        ['ana']
        >>> mine.close(); history.close()
    """
    rater = rater.strip()
    if not rater:
        raise ValueError("whose votes? give the rater's name, as recorded with each vote")
    if history.backend != "sqlite":
        raise ValueError(
            f"{history.location} is a PostgreSQL history, shared already: the votes are in "
            "it, there is no file to carry")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target, then moved in place: a download never gets half a file.
    handle, partial = tempfile.mkstemp(prefix=f".{target.stem}-", suffix=".sqlite",
                                       dir=target.parent)
    os.close(handle)
    os.unlink(partial)  # copy_history creates the history itself
    try:
        copy_history(history.path, partial)
        engine = sa.create_engine(f"sqlite:///{partial}")
        try:
            with engine.begin() as db:
                db.execute(sa.text("DELETE FROM ratings WHERE rater IS NULL OR rater != :r"),
                           {"r": rater})
            with engine.connect() as db:  # the space the removed votes took
                db.execution_options(isolation_level="AUTOCOMMIT").execute(sa.text("VACUUM"))
        finally:
            engine.dispose()
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target
