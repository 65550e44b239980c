"""The pieces every view is built of: escaped text, styled spans, badges, cards and tables.

Every helper that takes *text* escapes it, so a prompt, a model name, an error message or a
status that came from a person or a service shows as text, never as markup. Helpers that take
*markup* say so in their name (:func:`styled`) and expect the caller to have escaped each text
inside it with :func:`escape`.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Iterable, Mapping, Sequence

from genlab.display._theme import BORDER, MUTED, NEUTRAL, ON_BADGE, STATUS_COLOURS, TEXT

EMPTY = "–"
"""What a cell shows when it has no value."""


def escape(value: object) -> str:
    """``value`` as text that shows as itself in HTML (``<``, ``>``, ``&`` and both quotes
    escaped, so it is safe in an element and in a quoted attribute). None is empty.

    Example:
        >>> escape("<img src=x onerror=alert(1)>")
        '&lt;img src=x onerror=alert(1)&gt;'
        >>> escape("it's \\"quoted\\""), escape(None), escape(42)
        ('it&#x27;s &quot;quoted&quot;', '', '42')
    """
    return "" if value is None else html.escape(str(value), quote=True)


def styled(
    markup: str,
    colour: str | None = None,
    *,
    tag: str = "span",
    size: str | None = None,
    css: str = "",
    cls: str = "",
) -> str:
    """``markup`` (already escaped by the caller) in a ``tag`` with a theme colour.

    Example:
        >>> styled("<b>3</b> runs", MUTED, size="90%")
        "<span style='color:var(--jp-ui-font-color2, #616161);font-size:90%'><b>3</b> runs</span>"
    """
    rules = []
    if colour:
        rules.append(f"color:{colour}")
    if size:
        rules.append(f"font-size:{size}")
    if css:
        rules.append(css.strip(";"))
    style = f" style='{';'.join(rules)}'" if rules else ""
    klass = f" class='{escape(cls)}'" if cls else ""
    return f"<{tag}{klass}{style}>{markup}</{tag}>"


def text(
    value: object,
    colour: str | None = None,
    *,
    tag: str = "span",
    size: str | None = None,
    css: str = "",
    cls: str = "",
) -> str:
    """``value``, escaped, in a ``tag`` with a theme colour (see :func:`styled`).

    Example:
        >>> text("<script>", MUTED)
        "<span style='color:var(--jp-ui-font-color2, #616161)'>&lt;script&gt;</span>"
    """
    return styled(escape(value), colour, tag=tag, size=size, css=css, cls=cls)


def lines(values: Iterable[object], *, mark: str = "") -> str:
    """Each value escaped, one per line (``mark``, markup such as ``"&#9888; "``, before each).

    Example:
        >>> lines(["a < b", "c"], mark="&#8505; ")
        '&#8505; a &lt; b<br>&#8505; c'
    """
    return "<br>".join(f"{mark}{escape(v)}" for v in values)


def badge(label: object, colour: str = NEUTRAL) -> str:
    """``label`` as a small pill: white text on ``colour`` (one of :data:`BADGES`).

    Example:
        >>> "&lt;b&gt;" in badge("<b>")
        True
    """
    return (
        f"<span class='genlab-badge' style='background:{colour};color:{ON_BADGE};"
        f"border-radius:4px;padding:1px 8px;white-space:nowrap'>{escape(label)}</span>"
    )


def status_badge(status: str) -> str:
    """A task's status as a badge, coloured by what it means (unknown statuses are neutral).

    Example:
        >>> "background:#198754" in status_badge("succeeded")
        True
    """
    return badge(status, STATUS_COLOURS.get(status, NEUTRAL))


def card(
    title: object,
    status: str,
    facts: Iterable[object] = (),
    note: object = "",
    *,
    note_colour: str = MUTED,
    name: str = "task",
    body: str = "",
) -> str:
    """A small card for a notebook cell: a bold title, a status badge, a line of facts and
    an optional note, all escaped. ``name`` makes its class (``genlab-task``). ``body`` is
    markup the caller built and escaped (a prompt, media) shown inside the card's border.

    Example:
        >>> page = card("video-a", "succeeded", ["task t1", "4.0 s"], "saved")
        >>> "genlab-task" in page and "task t1 · 4.0 s" in page
        True
    """
    shown = " · ".join(escape(f) for f in facts)
    extra = text(note, note_colour, tag="div", size="85%") if note else ""
    return (
        f"<div class='genlab-{escape(name)}' style='border:1px solid {BORDER};"
        "padding:6px 8px;display:inline-block;max-width:100%'>"
        f"<b>{escape(title or '?')}</b> {status_badge(status)}"
        f"{styled(shown, MUTED, tag='div', css='overflow-wrap:anywhere')}{extra}{body}</div>"
    )


def grid(cells: Iterable[str]) -> str:
    """Cards (markup the caller built) side by side, wrapping to the output's width.

    Example:
        >>> grid(["<b>a</b>"]).count("flex:1 1 320px")
        1
    """
    shown = "".join(f"<div style='flex:1 1 320px;max-width:480px'>{c}</div>" for c in cells)
    return f"<div class='genlab-records' style='display:flex;flex-wrap:wrap;gap:8px'>{shown}</div>"


def table(
    columns: Mapping[str, str],
    rows: Sequence[Mapping[str, object]],
    *,
    wrapped: Collection[str] = (),
    empty: str = "No rows.",
) -> str:
    """Rows as an escaped table: ``columns`` maps each row key to its heading, left to right.

    Cells of the ``wrapped`` columns (prompts, messages) wrap; the others (names, times,
    numbers) never break. A missing or empty value shows as a dash; no rows show ``empty``.

    Example:
        >>> table({"model": "model"}, [])
        '<i>No rows.</i>'
        >>> page = table({"prompt": "prompt", "credits": "credits"},
        ...              [{"prompt": "<b>kite</b>", "credits": None}], wrapped={"prompt"})
        >>> "&lt;b&gt;kite&lt;/b&gt;" in page, ">–</td>" in page
        (True, True)
    """
    if not rows:
        return f"<i>{escape(empty)}</i>"
    head = "".join(
        f"<th style='text-align:left;padding:2px 6px;border-bottom:1px solid {BORDER}'>"
        f"{escape(heading)}</th>"
        for heading in columns.values()
    )
    cells = {
        key: "min-width:12em;overflow-wrap:anywhere" if key in wrapped else "white-space:nowrap"
        for key in columns
    }
    body = "".join(
        "<tr>" + "".join(
            f"<td style='padding:2px 6px;vertical-align:top;{cells[key]}'>"
            f"{escape(row.get(key)) or EMPTY}</td>"
            for key in columns
        ) + "</tr>"
        for row in rows
    )
    return (
        "<div style='max-width:100%;overflow-x:auto'>"
        f"<table style='border-collapse:collapse;font-size:90%;color:{TEXT}'>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


class HTML:
    """Markup that Jupyter displays (``_repr_html_``); ``str()`` and ``.data`` give it.

    The markup is shown as it is: build it from this module's helpers, which escape.

    Example:
        >>> HTML("<b>hi</b>")._repr_html_()
        '<b>hi</b>'
    """

    def __init__(self, data: str) -> None:
        self.data = data

    def _repr_html_(self) -> str:
        return self.data

    def __str__(self) -> str:
        return self.data

    def __repr__(self) -> str:
        return f"<genlab HTML, {len(self.data):,} characters; display it in a notebook>"
