"""The rating page: blind pairs for people who do not code (``genlab app --rate NAME``).

The page asks the person's name, then shows the rater (:class:`~genlab.widgets.Rater`,
without its leaderboard: nobody is shown who is winning while they rate), says how many pairs
are left, and thanks them at the end. Every vote goes into the history under their name, as
``genlab.rate(..., rater=name)`` records it. ``NAME`` is an experiment of the history (its
prompt versions are rated) or a tag (the models of that tag's results are).

Example:
    page = rating_page("kite-study")      # the last expression of a cell: displayed
    page.start("ana")                     # as typing a name and pressing Start does
    page.rater.answer("left")
"""

from __future__ import annotations

import ipywidgets as widgets

from genlab.display import ERROR, MUTED, TEXT, escape, text
from genlab.experiments import Experiment
from genlab.history import History
from genlab.rating import RatingSession
from genlab.widgets._rater import Rater

_INTRO = (
    "You will see two results made for the same request, side by side; which is which is "
    "hidden. Choose the better one with the buttons, or click the keyboard bar once and use "
    "the keys: <kbd>1</kbd> left, <kbd>2</kbd> right, <kbd>=</kbd> tie, <kbd>0</kbd> both "
    "bad, <kbd>s</kbd> skip, <kbd>u</kbd> undo. There are no right answers: your own eye is "
    "what is asked."
)
_CSS = (
    ".genlab-rating-page{max-width:1400px}"
    ".genlab-rating-page kbd{border:1px solid var(--jp-border-color1,#bbb);border-radius:3px;"
    "padding:0 4px}"
    ".genlab-rating-page .genlab-page-intro{color:" + TEXT + ";max-width:60em;margin:0 0 8px}"
)


def rating_page(name: str, *, history: History | None = None, pairs: int | None = None,
                seed: int | None = None) -> RatingPage:
    """The rating page of experiment or tag ``name`` (see the module); the app's notebook
    (``genlab app --rate NAME``) shows it.

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> page = rating_page("kites", history=history)   # nothing of that name yet
        >>> "Nothing to rate under &#x27;kites&#x27;" in page.left.value, page.rater
        (True, None)
        >>> history.close()
    """
    return RatingPage(name, history=history, pairs=pairs, seed=seed)


class RatingPage(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Asks a name, then rates ``name``'s pairs under it; says how many are left; thanks.

    Args:
        name: an experiment of ``history`` (its versions are rated) or a tag of its tasks.
        history: where the results and the votes are (default: ``genlab.History()``).
        pairs: how many pairs to ask (default: every distinct pair, up to 50).
        seed: makes the sides and the order repeatable.

    Attributes:
        who, start_button, left, thanks: the parts; ``rater`` once started (None before).

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> page = RatingPage("kites", history=history)
        >>> page.start_button.disabled       # Start waits for a name
        True
        >>> page.who.value = "ana"
        >>> page.start_button.disabled
        False
        >>> history.close()
    """

    def __init__(self, name: str, *, history: History | None = None, pairs: int | None = None,
                 seed: int | None = None) -> None:
        super().__init__()
        self.add_class("genlab-rating-page")
        self.name = name.strip()
        self.history = history if history is not None else History()
        self.pairs, self.seed = pairs, seed
        self.rater: Rater | None = None
        self._title = f"<style>{_CSS}</style>" + text("Rate pairs of results", TEXT,
                                                       tag="h2", css="margin:0 0 4px")
        self.intro = widgets.HTML(f"{self._title}<p class='genlab-page-intro'>{_INTRO}</p>")
        self.who = widgets.Text(placeholder="your name", description="Your name",
                                style={"description_width": "initial"},
                                layout=widgets.Layout(width="20em"))
        self.who.add_class("genlab-page-name")
        self.start_button = widgets.Button(description="Start", button_style="primary",
                                           icon="play", disabled=True,
                                           layout=widgets.Layout(width="auto"))
        self.start_button.add_class("genlab-page-start")
        self.who.observe(lambda c: self._named(str(c["new"])), "value")
        self.start_button.on_click(lambda _b: self.start(self.who.value))
        self.asking = widgets.HBox([self.who, self.start_button],
                                   layout=widgets.Layout(align_items="center"))
        self.left = widgets.HTML()
        self.left.add_class("genlab-page-left")
        self.thanks = widgets.HTML()
        self.thanks.add_class("genlab-page-thanks")
        self.stage = widgets.VBox()
        problem = self._problem()
        if problem:
            self.asking.layout.display = "none"
            self.left.value = text(problem, ERROR, tag="div")
        self.children = [self.intro, self.asking, self.left, self.stage, self.thanks]

    def _problem(self) -> str | None:
        if not self.name:
            return ("Nothing to rate: start the page with the name of an experiment or a tag, "
                    "genlab app --rate NAME")
        if self.name in self.history.experiments():
            return None
        if len(self.history.df(tag=self.name, status="succeeded")):
            return None
        known = ", ".join(self.history.experiments()) or "none"
        return (f"Nothing to rate under {self.name!r}: no experiment or tag of that name in "
                f"this history (experiments: {known})")

    def _named(self, value: str) -> None:
        self.start_button.disabled = not value.strip()

    def _session(self, person: str) -> RatingSession:
        if self.name in self.history.experiments():
            # Rating reads an experiment's cells from the history by its name.
            source = Experiment(self.name, self.history, [])
            return RatingSession(source, rater=person, pairs=self.pairs, seed=self.seed)
        return RatingSession(self.history, rater=person, pairs=self.pairs, seed=self.seed,
                             tag=self.name)

    def start(self, person: str) -> Rater:
        """Rate as ``person`` (as typing the name and pressing Start does)."""
        person = person.strip()
        if not person:
            raise ValueError("a name is needed: it is recorded with each vote")
        self.rater = Rater(self._session(person), board=False)
        self.asking.layout.display = "none"
        self.rater.observe(lambda _c: self._progress(person), "done")
        self.stage.children = [self.rater]
        self._progress(person)
        return self.rater

    def _progress(self, person: str) -> None:
        rater = self.rater
        assert rater is not None
        session = rater.session
        remaining = max(session.goal - min(session.done, session.goal), 0)
        if session.current is None and session.done and remaining == 0:
            rater.layout.display = "none"
            self.intro.value = self._title  # nothing more to explain
            self.left.value = ""
            self.thanks.value = text(
                f"Thank you, {person}! Your {session.done} vote"
                f"{' is' if session.done == 1 else 's are'} saved. You can close this page.",
                TEXT, tag="h3", css="margin:1em 0")
            return
        if session.current is None:
            self.left.value = text(session.why_nothing(), MUTED, tag="div")
            return
        self.left.value = (f"<div style='color:{MUTED}'>Rating as <b>{escape(person)}</b>: "
                           f"{remaining} pair{'' if remaining == 1 else 's'} left</div>")
