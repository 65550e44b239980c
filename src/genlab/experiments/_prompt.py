"""Prompts with ``{variable}`` slots, numbered versions, aliases and word diffs.

A :class:`Prompt` is one saved version of a named template, kept in a history (the default one
``genlab.connect()`` uses unless another is given), so a team sharing a history shares its
prompts. ``revise`` saves the next version; ``fill`` makes the text to send, refusing a missing
or unknown variable before anything is sent.

Example:
    >>> import os, tempfile
    >>> from genlab.history import History
    >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
    >>> kite = prompt("A {subject} over {place} at dusk", name="kite", history=history)
    >>> kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
    >>> kite2.ref, kite2.parent, kite2.variables
    ('kite@2', 1, ('subject', 'place'))
    >>> print(kite2.diff(kite))
    kite@1 -> kite@2: A {subject}{+ soaring+} over {place} at dusk{+, 35 mm+}
    >>> kite2.fill(subject="paper kite", place="dunes")
    'A paper kite soaring over dunes at dusk, 35 mm'
    >>> _ = kite2.alias("best")
    >>> prompt("kite@best", history=history).version
    2
    >>> history.close()
"""

from __future__ import annotations

import difflib
import os
import re
import string
from collections.abc import Mapping
from typing import Any

from genlab.display import MUTED, escape
from genlab.history import History, PromptVersion, check_name

_TOKENS = re.compile(r"\s+|\{\w+\}|\w+|[^\w\s]")
_DEFAULT: dict[str, History] = {}


def default_history() -> History:
    """The history ``genlab.connect()`` opens by default (``$GENLAB_HISTORY``, else
    ``.genlab/history.sqlite`` in the working directory), opened once per location.

    Example:
        >>> import os, tempfile
        >>> from unittest import mock
        >>> where = os.path.join(tempfile.mkdtemp(), "h.sqlite")
        >>> with mock.patch.dict(os.environ, {"GENLAB_HISTORY": where}):
        ...     history = default_history()
        ...     print(history is default_history(), history.path.name)
        True h.sqlite
    """
    key = os.environ.get("GENLAB_HISTORY") or os.path.abspath(os.path.join(".genlab", "x"))
    if key not in _DEFAULT:
        _DEFAULT[key] = History()
    return _DEFAULT[key]


def same_history(a: History, b: History) -> bool:
    """Whether two History objects open the same place (a file by its resolved path)."""
    if a is b:
        return True
    if a.backend == "sqlite" and b.backend == "sqlite":
        return a.path.resolve() == b.path.resolve()
    return a.location == b.location


def slots(template: str) -> tuple[str, ...]:
    """The ``{variable}`` names of ``template``, in order of first use.

    Raises:
        ValueError: an unnamed (``{}``), numbered (``{0}``) or dotted/indexed slot, or
            unbalanced braces (write ``{{`` and ``}}`` for literal braces).

    Example:
        >>> slots("A {subject} over {place}, a {subject}")
        ('subject', 'place')
        >>> slots("{}")
        Traceback (most recent call last):
        ...
        ValueError: a prompt's slots must be named, like {subject}; got {} in '{}'
    """
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(
            f"{exc} in {template!r}: slots are {{name}}; write {{{{ and }}}} for literal braces"
        ) from exc
    for _, field, _, _ in parsed:
        if field is None:
            continue
        if not field.isidentifier():
            raise ValueError(
                f"a prompt's slots must be named, like {{subject}}; got {{{field}}} in "
                f"{template!r}"
            )
        if field not in names:
            names.append(field)
    return tuple(names)


class Prompt:
    """One saved version of a named prompt (see the module docstring). Made by
    :func:`prompt`, :meth:`revise` or :meth:`History.prompt_version`; never changed.

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> kite = genlab.prompt("A {subject} over {place}", name="kite", history=history)
        >>> kite, kite.variables
        (Prompt('kite@1': 'A {subject} over {place}'), ('subject', 'place'))
        >>> kite.fill(subject="paper kite", place="dunes")
        'A paper kite over dunes'
        >>> kite.revise("A {subject} soaring over {place}").version
        2
        >>> history.close()
    """

    def __init__(self, saved: PromptVersion, history: History) -> None:
        self._saved = saved
        self.history = history
        self.variables: tuple[str, ...] = slots(saved.template)

    @property
    def name(self) -> str:
        return self._saved.name

    @property
    def version(self) -> int:
        return self._saved.version

    @property
    def template(self) -> str:
        return self._saved.template

    @property
    def parent(self) -> int | None:
        """The version this one was revised from (None for a first version)."""
        return self._saved.parent

    @property
    def ref(self) -> str:
        """``name@version``, what :func:`prompt` takes back."""
        return f"{self.name}@{self.version}"

    @property
    def aliases(self) -> list[str]:
        """The aliases pointing at this version now."""
        return sorted(a for a, v in self.history.prompt_aliases(self.name).items()
                      if v == self.version)

    def revise(self, template: str) -> Prompt:
        """The next version of this prompt, with this version as its parent (the version
        that already has this exact text, if one does)."""
        slots(template)
        return Prompt(self.history.save_prompt(self.name, template, parent=self.version),
                      self.history)

    def alias(self, alias: str) -> Prompt:
        """Point ``alias`` (e.g. ``"best"``) at this version, moving it if it pointed at
        another; ``genlab.prompt("kite@best")`` then finds it. Returns this prompt."""
        self.history.set_prompt_alias(self.name, alias, self.version)
        return self

    def fill(self, **variables: Any) -> str:
        """The text to send, every slot filled.

        Raises:
            ValueError: a slot was not given a value, or a value has no slot (nothing sent).
        """
        return fill(self, variables)

    def diff(self, other: Prompt | str) -> PromptDiff:
        """What changed, word by word, from ``other`` (the baseline) to this version: text
        in a terminal, highlighted in a notebook."""
        if isinstance(other, str):
            other = prompt(other, history=self.history)
        return PromptDiff(other.template, self.template, before_label=other.ref,
                          after_label=self.ref)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Prompt) and (self.name, self.version) ==
                (other.name, other.version) and same_history(self.history, other.history))

    def __hash__(self) -> int:
        return hash((self.name, self.version))

    def __repr__(self) -> str:
        parent = f", parent={self.parent}" if self.parent is not None else ""
        return f"Prompt({self.ref!r}{parent}: {self.template!r})"

    def _repr_html_(self) -> str:
        aliases = self.aliases
        named = f" ({', '.join(escape(a) for a in aliases)})" if aliases else ""
        parent = (f" <span style='color:{MUTED}'>revised from {self.parent}</span>"
                  if self.parent is not None else "")
        return (f"<div class='genlab-prompt'><b>{escape(self.ref)}</b>{named}{parent}"
                f"<div style='white-space:pre-wrap'>{_slots_html(self.template)}</div></div>")


def _slots_html(template: str) -> str:
    parts = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        parts.append(escape(literal))
        if field is not None:
            shown = "{" + field + (f"!{conversion}" if conversion else "") + \
                (f":{spec}" if spec else "") + "}"
            parts.append(f"<code>{escape(shown)}</code>")
    return "".join(parts)


def fill(template: Prompt | str, variables: Mapping[str, Any]) -> str:
    """``template`` with its slots filled from ``variables``; every slot needs a value and
    every value a slot.

    Example:
        >>> fill("A {subject}", {"subject": "kite", "place": "dunes"})
        Traceback (most recent call last):
        ...
        ValueError: 'A {subject}' has no slot for place; its variables are subject
    """
    text = template.template if isinstance(template, Prompt) else template
    shown = template.ref if isinstance(template, Prompt) else repr(text)
    names = slots(text)
    missing = [n for n in names if n not in variables]
    extra = [n for n in variables if n not in names]
    if missing:
        given = ", ".join(f"{n}=..." for n in names)
        raise ValueError(
            f"{shown} needs a value for {', '.join(missing)} (nothing was sent); "
            f"give every variable: fill({given})"
        )
    if extra:
        raise ValueError(
            f"{shown} has no slot for {', '.join(extra)}; its variables are "
            f"{', '.join(names) or 'none'}"
        )
    return text.format_map(dict(variables))


class PromptDiff:
    """A word diff between two prompt texts: ``str()`` marks removals ``[-like this-]`` and
    additions ``{+like this+}``; in a notebook they are struck through and highlighted.

    Example:
        >>> print(PromptDiff("a red kite", "a blue kite"))
        a [-red-]{+blue+} kite
    """

    def __init__(self, before: str, after: str, *, before_label: str = "",
                 after_label: str = "") -> None:
        self.before = before
        self.after = after
        self.before_label = before_label
        self.after_label = after_label

    def ops(self) -> list[tuple[str, str, str]]:
        """(``equal``/``replace``/``delete``/``insert``, old text, new text), in order."""
        old, new = _TOKENS.findall(self.before), _TOKENS.findall(self.after)
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        ops: list[tuple[str, str, str]] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((tag, "".join(old[i1:i2]), "".join(new[j1:j2])))
            # Only a space kept between two changes: one change ("at dusk" -> "in fading
            # light"), not two interleaved word by word.
            if (len(ops) >= 3 and ops[-1][0] != "equal" and ops[-3][0] != "equal"
                    and ops[-2][0] == "equal" and not ops[-2][1].strip()):
                (_, o1, n1), (_, space, _), (_, o2, n2) = ops[-3:]
                ops[-3:] = [("replace", o1 + space + o2, n1 + space + n2)]
        return ops

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def _label(self) -> str:
        if self.before_label or self.after_label:
            return f"{self.before_label} -> {self.after_label}: "
        return ""

    def __str__(self) -> str:
        parts = []
        for tag, old, new in self.ops():
            if tag == "equal":
                parts.append(old)
                continue
            if old:
                parts.append(f"[-{old}-]")
            if new:
                parts.append(f"{{+{new}+}}")
        return self._label() + "".join(parts)

    def __repr__(self) -> str:
        return str(self)

    def html(self) -> str:
        """The diff as an HTML fragment (every text escaped)."""
        parts = []
        for tag, old, new in self.ops():
            if tag == "equal":
                parts.append(escape(old))
                continue
            if old.strip():
                parts.append(_marked(old, "del"))
            if new.strip():
                if old.strip():  # a removal and what replaced it read as two words
                    parts.append(" ")
                parts.append(_marked(new, "ins"))
            elif new:
                parts.append(escape(new))
        label = ""
        if self.before_label or self.after_label:
            label = (f"<span class='genlab-diff-label'>{escape(self.before_label)} &rarr; "
                     f"{escape(self.after_label)}</span> ")
        return f"<div class='genlab-diff'>{label}{''.join(parts)}</div>"

    def _repr_html_(self) -> str:
        return f"<style>{DIFF_CSS}</style>{self.html()}"


def _marked(text: str, tag: str) -> str:
    # Spaces around a change stay outside its highlight: the words are what changed.
    core = text.strip()
    start = text.index(core)
    return (f"{escape(text[:start])}<{tag} class='genlab-{tag}'>{escape(core)}</{tag}>"
            f"{escape(text[start + len(core):])}")


# Removals and additions read in light and dark themes: JupyterLab's own error and success
# colours, faded behind the text, with a fallback outside JupyterLab.
DIFF_CSS = (
    ".genlab-diff{white-space:pre-wrap;overflow-wrap:anywhere;line-height:1.6}"
    ".genlab-diff del.genlab-del{background:color-mix(in srgb,"
    "var(--jp-error-color1,#d32f2f) 22%,transparent);text-decoration:line-through}"
    ".genlab-diff ins.genlab-ins{background:color-mix(in srgb,"
    "var(--jp-success-color1,#388e3c) 25%,transparent);text-decoration:none;font-weight:600}"
    f".genlab-diff-label{{color:{MUTED};font-size:85%}}"
)


def prompt(template: str, name: str | None = None, *, history: History | None = None) -> Prompt:
    """A prompt kept in the history: ``prompt(text, name="kite")`` saves ``text`` as a
    version of ``kite`` (version 1 for a new name; the version with this exact text if there
    is one, so running a cell again saves nothing new; else the next version, revised from
    the newest); ``prompt("kite")``, ``prompt("kite@2")`` and ``prompt("kite@best")`` load
    the newest version, version 2 and the version aliased ``best``.

    Args:
        template: the text, with ``{variable}`` slots; or, without ``name``, a reference.
        name: the prompt's name (no ``@``).
        history: where prompts are kept; default the history ``genlab.connect()`` uses.

    Raises:
        ValueError: a bad name or slot.
        LookupError: a reference to a prompt, version or alias the history does not have.

    Example:
        kite = genlab.prompt("A {subject} over {place} at dusk", name="kite")
        best = genlab.prompt("kite@best")

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> kite = genlab.prompt("A {subject} at dusk", name="kite", history=history)
        >>> kite.version, genlab.prompt("kite@1", history=history).template
        (1, 'A {subject} at dusk')
        >>> history.close()
    """
    where = history if history is not None else default_history()
    if name is None:
        reference, _, ref = template.partition("@")
        if "{" in reference or not reference.strip():
            raise ValueError(
                f"give a new prompt a name: genlab.prompt({template!r}, name='kite'); "
                "without a name the text is read as a saved prompt's reference ('kite@2')"
            )
        check_name(reference)
        return Prompt(where.prompt_version(reference.strip(), ref.strip() or None), where)
    slots(template)
    return Prompt(where.save_prompt(check_name(name), template), where)
