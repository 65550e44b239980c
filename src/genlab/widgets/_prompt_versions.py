"""Saved prompts under the Studio's prompt field: save the text as a version of a named prompt,
load a version back.

The versions are the ones :func:`genlab.prompt` keeps in the history (a team sharing a history
shares them): "Save as new version" makes version 1 of a new name, else the next version,
revised from the newest (the version that already has this exact text, if one does); "Load"
puts a version's text into the prompt field.

The Studio sends its text as written, so a text saved here has no ``{variable}`` slots (no
braces at all: ``genlab.prompt`` reads ``{name}`` as a slot), and a version with slots, made in
code for an experiment, is not loaded: the line under the control says how to fill it.

Example:
    studio = genlab.studio(client)                 # a client keeping a genlab History
    studio.set(prompt="a red kite over dunes")
    studio.prompt_versions.save("kite")            # as the button does: kite v1
    studio.prompt_versions.load("kite", 1)         # the text of kite v1 into the prompt field
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import ipywidgets as widgets

from genlab.client.journal import TaskJournal
from genlab.display import MUTED, styled
from genlab.experiments import fill, slots
from genlab.history import History, PromptVersion, check_name
from genlab.widgets._fields import error_lines_html, hint_html, side_label

NO_HISTORY = (
    "Saved prompts need a genlab History: <code>genlab.connect()</code> keeps one, or "
    "<code>genlab.Client(history=genlab.History())</code>."
)
SAVE_TIP = "Save the prompt's text as the next version of the named prompt"
LOAD_TIP = "Put the chosen version's text into the prompt field"


def version_label(version: PromptVersion, aliases: list[str]) -> str:
    """How a version is listed: ``kite v2 (best)``.

    Example:
        >>> v = PromptVersion("kite", 2, "a kite", 1, 0.0, None)
        >>> version_label(v, ["best", "final"])
        'kite v2 (best, final)'
    """
    named = f" ({', '.join(aliases)})" if aliases else ""
    return f"{version.name} v{version.version}{named}"


class PromptVersions(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """A prompt-name box, "Save as new version", a version list and "Load", over ``history``.

    Args:
        history: where prompts are kept (a client's journal: anything but a
            :class:`genlab.History` gets a line saying how to keep one).
        get_text: the prompt field's text now.
        put_text: puts a text into the prompt field.

    Attributes:
        name_box, save_button, version_picker, load_button, message: the parts.
    """

    def __init__(
        self,
        history: TaskJournal | History,
        get_text: Callable[[], str],
        put_text: Callable[[str], None],
    ) -> None:
        super().__init__()
        self.add_class("genlab-prompt-versions")
        self.history = history if isinstance(history, History) else None
        self._get_text = get_text
        self._put_text = put_text
        self._listed = ""
        self.message = widgets.HTML(layout=widgets.Layout(margin="0 0 0 10em"))
        self.name_box = widgets.Combobox(
            placeholder="prompt name, e.g. kite", ensure_option=False,
            continuous_update=False, tooltip="The saved prompt's name: new, or one listed",
            layout=widgets.Layout(width="13em", flex="0 1 auto"),
        )
        self.name_box.add_class("genlab-prompt-name")
        self.save_button = widgets.Button(
            description="Save as new version", icon="save", tooltip=SAVE_TIP,
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
        )
        self.version_picker = widgets.Dropdown(
            options=[], tooltip="The versions of the named prompt, newest first",
            layout=widgets.Layout(width="13em", flex="0 1 auto"),
        )
        self.version_picker.add_class("genlab-prompt-version")
        self.load_button = widgets.Button(
            description="Load", icon="arrow-up", tooltip=LOAD_TIP,
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
        )
        if self.history is None:
            self.message.value = styled(NO_HISTORY, MUTED, tag="div", size="90%",
                                        cls="genlab-hint")
            self.children = [widgets.HBox([side_label("saved prompts"), self.message])]
            self.message.layout.margin = "0"
            return
        self.save_button.on_click(lambda _b: self._clicked(self.save))
        self.load_button.on_click(lambda _b: self._clicked(self.load))
        self.name_box.observe(lambda _c: self._list_versions(), "value")
        # One line where there is room; else the version and Load wrap under the name box,
        # never under the label.
        controls = widgets.HBox(
            [self.name_box, self.save_button, self.version_picker, self.load_button],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center",
                                  flex="1 1 0%", min_width="0"),
        )
        self.children = [
            widgets.HBox([side_label("saved prompts", "Versions kept in the history, by name"),
                          controls], layout=widgets.Layout(align_items="flex-start")),
            self.message,
        ]
        self.refresh()

    # --- reading the history ---------------------------------------------------------------

    def names(self) -> list[str]:
        """The names of the prompts in the history, sorted."""
        if self.history is None:
            return []
        frame = self.history.prompts()
        return sorted({str(n) for n in frame["name"]})

    def refresh(self) -> None:
        """Read the names and the named prompt's versions again (errors shown, not raised)."""
        try:
            names = self.names()
        except Exception as exc:  # a widget callback: shown, never raised
            self._say(error_lines_html([f"The saved prompts could not be read: {exc}"]))
            return
        if list(self.name_box.options) != names:
            self.name_box.options = names
        self._list_versions()

    def _list_versions(self, select: int | None = None) -> None:
        name = self.name_box.value.strip()
        options: list[tuple[str, int]] = []
        if self.history is not None and name and "@" not in name:
            try:
                frame = self.history.prompts(name)
            except Exception as exc:
                self._say(error_lines_html([f"The saved prompts could not be read: {exc}"]))
                frame = None
            if frame is not None:
                for row in reversed(frame.to_dict("records")):
                    aliases = [a for a in str(row["aliases"]).split(", ") if a]
                    version = PromptVersion(name, int(row["version"]), "", None, 0.0, None)
                    options.append((version_label(version, aliases), version.version))
        # The version picked stays picked while its prompt is listed; else the newest.
        kept = self.version_picker.value if name == self._listed else None
        if list(self.version_picker.options) != options:
            self.version_picker.options = options
        if options:
            numbers = {v for _, v in options}
            wanted = next((v for v in (select, kept) if v in numbers), options[0][1])
            if self.version_picker.value != wanted:
                self.version_picker.value = wanted
        self._listed = name
        self.version_picker.disabled = self.load_button.disabled = not options

    # --- saving and loading ------------------------------------------------------------------

    def save(self, name: str | None = None) -> PromptVersion:
        """Save the prompt field's text as a version of ``name`` (default: the name box's);
        returns the version (the one that already had this text, if one did).

        Raises:
            ValueError: no name or a bad one, no text, or a text with braces (say which).
        """
        if self.history is None:
            raise ValueError("saved prompts need a genlab History: genlab.connect() keeps one")
        if name is not None:
            self.name_box.value = name
        given = self.name_box.value
        if not given.strip():
            raise ValueError("name the prompt first (e.g. kite): its versions are kept under "
                             "that name")
        name = check_name(given)
        text = self._get_text()
        if not text.strip():
            raise ValueError("write a prompt first: there is no text to save")
        if "{" in text or "}" in text:
            raise ValueError(
                "the Studio sends the prompt as written, so it saves no text with { or } "
                "(genlab.prompt reads {name} as a variable to fill); save a template with "
                f"variables in code: genlab.prompt(text, name={name!r})"
            )
        before = {int(v) for v in self.history.prompts(name)["version"]}
        saved = self.history.save_prompt(name, text)
        self.refresh()
        self._list_versions(select=saved.version)
        label = self._label(saved)
        if saved.version in before:
            self._say(hint_html(f"{label} already has this text: nothing new was saved."))
        elif saved.parent is None:
            self._say(hint_html(f"Saved {label}, the first version of a new prompt."))
        else:
            self._say(hint_html(f"Saved {label}, revised from v{saved.parent}."))
        return saved

    def load(self, name: str | None = None, version: int | str | None = None) -> PromptVersion:
        """Put the text of version ``version`` (a number or an alias; default: the one picked,
        else the newest) of ``name`` (default: the name box's) into the prompt field.

        Raises:
            ValueError: no name, or the version has variables the Studio cannot fill.
            LookupError: no such prompt or version.
        """
        if self.history is None:
            raise ValueError("saved prompts need a genlab History: genlab.connect() keeps one")
        if name is not None:
            self.name_box.value = name
        elif version is None:
            version = self.version_picker.value
        given = self.name_box.value
        if not given.strip():
            raise ValueError("choose a saved prompt's name first")
        chosen = self.history.prompt_version(check_name(given), version)
        label = self._label(chosen)
        variables = slots(chosen.template)
        if variables:
            wanted = ", ".join(f"{v}=..." for v in variables)
            raise ValueError(
                f"{label} has variables ({', '.join(variables)}) and the Studio sends the "
                f"prompt as written: fill them in code, "
                f"genlab.prompt({f'{chosen.name}@{chosen.version}'!r}).fill({wanted})"
            )
        self._put_text(fill(chosen.template, {}))
        self._list_versions(select=chosen.version)
        self._say(hint_html(f"Loaded {label} into the prompt."))
        return chosen

    def _label(self, version: PromptVersion) -> str:
        assert self.history is not None
        aliases = sorted(a for a, v in self.history.prompt_aliases(version.name).items()
                         if v == version.version)
        return version_label(version, aliases)

    def _clicked(self, action: Callable[[], object]) -> None:
        try:
            action()
        except (ValueError, LookupError) as exc:
            self._say(error_lines_html([str(exc)]))
        except Exception as exc:  # a widget callback: shown, never raised
            self._say(error_lines_html([f"{type(exc).__name__}: {exc}"]))

    def _say(self, markup: str) -> None:
        if self.message.value != markup:
            self.message.value = markup

    @property
    def said(self) -> str:
        """The message line's text without its markup (what the person reads)."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.message.value)).strip()

