"""genlab's colours, each written once: a JupyterLab theme variable with a fallback.

Inside JupyterLab (and Notebook 7, which shares its themes) the variable follows the light or
the dark theme; elsewhere (VS Code, an exported page, a saved report) the fallback, picked for a
light page, is used. Text colours are JupyterLab's text levels, not fixed greys, so they read
on both themes' backgrounds. Badges are the one exception: they carry their own background
(a fixed saturated colour under white text), which reads the same on any page.
"""

from __future__ import annotations

from types import MappingProxyType


def theme_colour(variable: str, fallback: str) -> str:
    """A CSS colour that follows JupyterLab's theme: ``var(--jp-<variable>, <fallback>)``.

    Example:
        >>> theme_colour("ui-font-color2", "#616161")
        'var(--jp-ui-font-color2, #616161)'
    """
    return f"var(--jp-{variable}, {fallback})"


TEXT = theme_colour("ui-font-color1", "#212121")
"""Text of the interface: headings, table cells."""
CONTENT = theme_colour("content-font-color1", "#212121")
"""Text of content a person made or asked for (a gallery's prompts)."""
MUTED = theme_colour("ui-font-color2", "#616161")
"""Secondary text: facts, hints, notes, counts."""
FAINT = theme_colour("ui-font-color3", "#9e9e9e")
"""Placeholders: an empty cell's dash."""
LINK = theme_colour("content-link-color", "#1976d2")
"""Links and link-like switches ("enlarge")."""
ERROR = theme_colour("error-color1", "#d32f2f")
"""Error text: refusals, failures, a field's messages."""
BORDER = theme_colour("border-color2", "#e0e0e0")
"""Borders of cards, tables and panels."""
BACKGROUND = theme_colour("layout-color1", "#ffffff")
"""The page's own background (behind a sticky column)."""
SHADE = theme_colour("layout-color2", "#f4f4f4")
"""A slightly shaded background: table headings."""

# Badges carry their own background, so they need no theme: white on these saturated colours
# reads at 4.5:1 or better on any page. (JupyterLab's state colours would not: its dark
# theme's warn-color0 gives white text 2.6:1.)
ON_BADGE = "white"
"""Text on a badge."""
SUCCESS = "#198754"
FAILURE = "#dc3545"
ACTIVE = "#0d6efd"
WARNING = "#b35900"
NEUTRAL = "#6c757d"

STATUS_COLOURS = MappingProxyType({
    "succeeded": SUCCESS,
    "failed": FAILURE,
    "error": FAILURE,
    "processing": ACTIVE,
    "stopped": WARNING,
})
"""A status's badge colour; other statuses (queued, submitted, unknown ones) are NEUTRAL."""

THEME = MappingProxyType({
    "TEXT": TEXT, "CONTENT": CONTENT, "MUTED": MUTED, "FAINT": FAINT, "LINK": LINK,
    "ERROR": ERROR, "BORDER": BORDER, "BACKGROUND": BACKGROUND, "SHADE": SHADE,
})
"""Every colour that follows the theme, by name."""
BADGES = MappingProxyType({
    "SUCCESS": SUCCESS, "FAILURE": FAILURE, "ACTIVE": ACTIVE, "WARNING": WARNING,
    "NEUTRAL": NEUTRAL,
})
"""Every badge background, by name (white text on each)."""
