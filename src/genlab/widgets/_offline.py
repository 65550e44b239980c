"""How a Studio looks when its kernel is gone: reopened from a saved notebook (the widget state
``make lab`` and Binder save), or after the kernel stopped.

JupyterLab and Notebook 7 mark every widget whose kernel is gone with a broken-link icon: dozens
of them on a Studio. Inside a Studio those icons are hidden and one line above the form says
what happened and what to do; the cards, their videos and images stay as they were.

Example:
    >>> "genlab-offline" in OFFLINE_HTML and "Run the cell" in OFFLINE_HTML
    True
"""

from __future__ import annotations

from genlab.display import TEXT, WARNING, text

_CSS = """
.genlab-studio .jupyter-widgets-disconnected::before { content: none !important;
  display: none !important; }
.genlab-studio .genlab-offline { display: none; }
.genlab-studio.jupyter-widgets-disconnected .genlab-offline { display: block; }
"""

OFFLINE_HTML = f"<style>{_CSS}</style>" + text(
    "⚠ Saved view: the kernel that ran this Studio has stopped, so its controls do nothing. "
    "Run the cell to use the Studio again; every task is in the history.",
    TEXT, tag="div", cls="genlab-offline",
    css=f"border-left:3px solid {WARNING};padding:2px 8px;margin:4px 0",
)
"""Markup for a Studio's header: the style and the line shown only while disconnected."""
