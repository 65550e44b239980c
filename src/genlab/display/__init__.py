"""What genlab shows, written once: theme colours, escaping, and the small pieces (styled text,
badges, cards, tables) that every ``_repr_html_``, widget and report is built of.

Colours are JupyterLab's theme variables with fallbacks (:func:`theme_colour`), so light and
dark themes both read and pages outside JupyterLab still look right; badges carry their own
background. Every text that came from
a person or a service goes through :func:`escape` (the helpers that take text do it for you).

It is also the one owner of live output in a cell (:class:`LiveLine`, :class:`ProgressBar`):
the client and the grids report progress to these and never import IPython themselves.

This package imports nothing of genlab's, so every layer, the wire format included, may use it.

Example:
    >>> from genlab import display
    >>> display.card("video-a", "failed", ["task t1"], "<b>out of memory</b>")[:24]
    "<div class='genlab-task'"
    >>> "&lt;b&gt;out of memory&lt;/b&gt;" in display.card("video-a", "failed", [], "<b>out of memory</b>")
    True
"""  # noqa: E501

from __future__ import annotations

from genlab.display._markup import (
    EMPTY,
    HTML,
    badge,
    card,
    escape,
    grid,
    lines,
    status_badge,
    styled,
    table,
    text,
)
from genlab.display._progress import LiveLine, ProgressBar, in_notebook
from genlab.display._theme import (
    ACTIVE,
    BACKGROUND,
    BADGES,
    BORDER,
    CONTENT,
    ERROR,
    FAILURE,
    FAINT,
    LINK,
    MUTED,
    NEUTRAL,
    ON_BADGE,
    SHADE,
    STATUS_COLOURS,
    SUCCESS,
    TEXT,
    THEME,
    WARNING,
    theme_colour,
)

__all__ = [
    "ACTIVE",
    "BACKGROUND",
    "BADGES",
    "BORDER",
    "CONTENT",
    "EMPTY",
    "ERROR",
    "FAILURE",
    "FAINT",
    "HTML",
    "LINK",
    "LiveLine",
    "MUTED",
    "NEUTRAL",
    "ON_BADGE",
    "ProgressBar",
    "SHADE",
    "STATUS_COLOURS",
    "SUCCESS",
    "TEXT",
    "THEME",
    "WARNING",
    "badge",
    "card",
    "escape",
    "grid",
    "in_notebook",
    "lines",
    "status_badge",
    "styled",
    "table",
    "text",
    "theme_colour",
]
