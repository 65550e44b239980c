"""The history's column table, written once: the tables, inserts, ``df()`` and the panel.

Each :class:`Column` says how a value is stored (its type and constraint), what dtype
``History.df()`` gives it, and whether the history panel shows it. Columns with a ``span`` are
derived when the frame is read (seconds between two stored timestamps) and are not stored.

Example:
    >>> COLUMN["credits"].type, COLUMN["credits"].dtype
    ('int', 'Int64')
    >>> DISPLAY_COLUMNS["total_seconds"]
    'seconds'
    >>> "results" in STORED and "results" not in FRAME_COLUMNS
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Type = Literal["text", "int", "float", "bool", "time", "span"]

_DTYPE: dict[Type, str] = {
    "text": "string",
    "int": "Int64",
    "float": "Float64",
    "bool": "boolean",  # stored as 0 or 1; NULL (<NA>) when unknown
    "time": "datetime64[ns, UTC]",  # stored as seconds since the epoch
    "span": "Float64",
}


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the history.

    Attributes:
        name: the SQL and DataFrame column name.
        type: ``text``, ``int``, ``float``, ``bool`` (stored as 0 or 1), ``time`` (stored
            as epoch seconds) or ``span``
            (derived: seconds from ``span[0]`` to ``span[1]``, never stored).
        constraint: the SQL constraint, e.g. ``NOT NULL``.
        in_frame: False for bookkeeping columns that ``df()`` leaves out.
        heading: the history panel's heading, None when the panel does not show it.
        panel_order: where the panel shows it (left to right).
        span: for derived columns, the two time columns it measures between.

    Example:
        >>> from genlab.history import COLUMNS
        >>> first = COLUMNS[0]
        >>> first.name, first.type, first.heading
        ('task_id', 'text', 'task')
    """

    name: str
    type: Type
    constraint: str = ""
    in_frame: bool = True
    heading: str | None = None
    panel_order: int = 0
    span: tuple[str, str] | None = None

    @property
    def stored(self) -> bool:
        return self.span is None

    @property
    def dtype(self) -> str:
        """The pandas dtype of the column in ``History.df()``."""
        return _DTYPE[self.type]


# In the order of History.df(). Derived values that cost JSON parsing to read (prompt, first
# result's size and URL) are stored as columns, so reading 100,000 rows needs no parsing.
COLUMNS: tuple[Column, ...] = (
    Column("task_id", "text", "UNIQUE", heading="task", panel_order=7),
    Column("model", "text", "NOT NULL", heading="model", panel_order=1),
    Column("kind", "text", "NOT NULL"),
    Column("mode", "text", heading="mode", panel_order=2),
    Column("status", "text", heading="status", panel_order=3),
    Column("state", "text", "NOT NULL"),
    Column("tag", "text"),
    # Who and where: a shared history holds the runs of a whole team.
    Column("user", "text"),
    Column("host", "text"),
    Column("project", "text"),
    Column("notebook", "text"),  # the notebook's (or script's) file name
    Column("prompt", "text", heading="prompt", panel_order=4),
    Column("resolution", "text"),
    Column("duration", "float"),
    Column("credits", "int", heading="credits", panel_order=5),
    Column("assumed_credits", "int"),  # the budget's assumed price, for an unpriced model
    Column("submitted_at", "time", "NOT NULL", heading="submitted", panel_order=0),
    Column("accepted_at", "time", in_frame=False),
    Column("created_at", "time"),
    Column("started_at", "time"),
    Column("completed_at", "time"),
    Column("queue_seconds", "span", span=("created_at", "started_at")),
    Column("processing_seconds", "span", span=("started_at", "completed_at")),
    Column("total_seconds", "span", span=("created_at", "completed_at"), heading="seconds",
           panel_order=6),
    Column("error_code", "text"),
    Column("error_message", "text", heading="error", panel_order=8),
    Column("error_json", "text"),  # the failed task's error exactly as the service sent it
    Column("result_count", "int"),
    Column("result_url", "text"),
    Column("width", "int"),
    Column("height", "int"),
    Column("media_seconds", "float"),
    # Measured from the first kept media file (width, height and media_seconds above are what
    # the service said), and whether the kept media are what was asked.
    Column("as_asked", "bool"),
    Column("mismatches", "text"),  # how they differ from the request, "; "-joined
    Column("media_width", "int"),
    Column("media_height", "int"),
    Column("media_duration", "float"),
    Column("media_fps", "float"),
    Column("media_frames", "int"),
    Column("video_codec", "text"),
    Column("audio_codec", "text"),
    Column("has_audio", "bool"),
    Column("media_bytes", "int"),
    Column("media_facts", "text", in_frame=False),  # every kept file's facts, as JSON
    Column("results", "text", in_frame=False),  # every result, as JSON
    Column("paths", "text"),  # saved files, as a JSON list
    Column("request", "text", "NOT NULL"),  # the body as sent, as JSON
    Column("entry_id", "text", "PRIMARY KEY"),
    Column("reason", "text"),  # why a submission was refused or is uncertain
    Column("address", "text"),  # the request's content address (reuse finds results by it)
    Column("updated_at", "time", "NOT NULL", in_frame=False),
    # Which process waits on the task, and until when, unless it renews the lease.
    Column("lease_owner", "text", in_frame=False),
    Column("lease_until", "time", in_frame=False),
)

COLUMN: Mapping[str, Column] = {c.name: c for c in COLUMNS}
STORED: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.stored)
"""The columns of the ``tasks`` table."""
FRAME_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.in_frame)
"""The columns of ``History.df()``, in order."""
DISPLAY_COLUMNS: Mapping[str, str] = {
    c.name: c.heading
    for c in sorted(COLUMNS, key=lambda c: c.panel_order)
    if c.heading is not None
}
"""The history panel's columns: ``History.df()`` column -> heading, left to right."""
