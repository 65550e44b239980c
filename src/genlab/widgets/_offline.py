"""How a view looks when its kernel is gone: reopened from a saved notebook (the widget state
``make lab`` and Binder save), or after the kernel stopped or restarted.

JupyterLab and Notebook 7 mark every widget whose kernel is gone with a broken-link icon: dozens
of them on a Studio, one over each button of a rater. Inside a genlab view those icons are
hidden and one line at its top says what happened and what to do; the cards, their videos and
images stay as they were. Controls that could look alive (a rater's keyboard bar) are hidden
and its buttons dimmed. The Studio and the rater use the one markup, :func:`offline_html`.

Example:
    >>> "genlab-offline" in OFFLINE_HTML and "Run the cell" in OFFLINE_HTML
    True
    >>> ".genlab-rater.jupyter-widgets-disconnected" in offline_html(
    ...     "genlab-rater", "rater", "Run the cell to rate again.")
    True
"""

from __future__ import annotations

from genlab.display import TEXT, WARNING, text

_CSS = """
.{root}.jupyter-widgets-disconnected::before,
.{root} .jupyter-widgets-disconnected::before {{ content: none !important;
  display: none !important; }}
.{root} .genlab-offline {{ display: none; }}
.{root}.jupyter-widgets-disconnected .genlab-offline {{ display: block; }}
.{root}.jupyter-widgets-disconnected .genlab-live-only {{ display: none !important; }}
.{root}.jupyter-widgets-disconnected .jupyter-button {{ opacity: 0.45;
  pointer-events: none; }}
"""


def offline_html(root: str, name: str, again: str) -> str:
    """Markup for the top of a view whose root widget has the CSS class ``root``: its style
    and a line (escaped) shown only while the kernel is gone ("Saved view: the kernel that ran
    this ``name`` has stopped, ..." then ``again``, what to do). Inside the view, elements with
    the class ``genlab-live-only`` are hidden then, and buttons dimmed."""
    if not root.replace("-", "").isalnum():
        raise ValueError(f"a CSS class name, not {root!r}")
    return f"<style>{_CSS.format(root=root)}</style>" + text(
        f"⚠ Saved view: the kernel that ran this {name} has stopped, so its controls do "
        f"nothing. {again}",
        TEXT, tag="div", cls="genlab-offline",
        css=f"border-left:3px solid {WARNING};padding:2px 8px;margin:4px 0",
    )


OFFLINE_HTML = offline_html(
    "genlab-studio", "Studio",
    "Run the cell to use the Studio again; every task is in the history.",
)
"""Markup for a Studio's header: the style and the line shown only while disconnected."""
