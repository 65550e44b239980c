"""The rating page: blind pairs for people who do not code (``genlab app --rate NAME``).

The page asks the person's name, then shows the rater (:class:`~genlab.widgets.Rater`,
without its leaderboard: nobody is shown who is winning while they rate), says how many pairs
are left, and thanks them at the end. Every vote goes into the history under their name, as
``genlab.rate(..., rater=name)`` records it. ``NAME`` is an experiment of the history (its
prompt versions are rated) or a tag (the models of that tag's results are).

"Download my votes" (at any time once started) writes the person's votes as a history file of
their own (:func:`genlab.rating.votes_file`) in ``votes_folder`` and links it: on Binder, where
the history goes with the session, that file is what reaches the team, who merge it with
``genlab history migrate FILE TEAM-HISTORY`` (twice adds nothing).

Example:
    page = rating_page("kite-study")      # the last expression of a cell: displayed
    page.start("ana")                     # as typing a name and pressing Start does
    page.rater.answer("left")
    page.download_votes()                 # as pressing "Download my votes" does
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import ipywidgets as widgets

from genlab.display import ERROR, MUTED, TEXT, escape, text
from genlab.experiments import Experiment
from genlab.history import History
from genlab.jupyter import served_url
from genlab.rating import RatingSession, votes_file
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


VOTES_FOLDER = "GENLAB_RATE_VOTES"
"""The variable ``genlab app --rate`` sets to the folder it serves votes files from."""


def rating_page(name: str, *, history: History | None = None, pairs: int | None = None,
                seed: int | None = None,
                votes_folder: str | os.PathLike[str] | None = None) -> RatingPage:
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
    if votes_folder is None and os.environ.get(VOTES_FOLDER):
        votes_folder = os.environ[VOTES_FOLDER]
    return RatingPage(name, history=history, pairs=pairs, seed=seed, votes_folder=votes_folder)


class RatingPage(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Asks a name, then rates ``name``'s pairs under it; says how many are left; thanks.

    Args:
        name: an experiment of ``history`` (its versions are rated) or a tag of its tasks.
        history: where the results and the votes are (default: ``genlab.History()``).
        pairs: how many pairs to ask (default: every distinct pair, up to 50).
        seed: makes the sides and the order repeatable.
        votes_folder: where "Download my votes" writes the votes file (default: a
            ``votes`` folder beside the history file).

    Attributes:
        who, start_button, left, thanks, download_button, download: the parts; ``rater``
            once started (None before).

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
                 seed: int | None = None,
                 votes_folder: str | os.PathLike[str] | None = None) -> None:
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
        self.votes_folder = Path(votes_folder) if votes_folder is not None else None
        self.person: str | None = None
        self.download_button = widgets.Button(description="Download my votes", icon="download",
                                              layout=widgets.Layout(width="auto"))
        self.download_button.add_class("genlab-page-download")
        self.download_button.on_click(lambda _b: self.download_votes())
        self.download = widgets.HTML()
        self.download.add_class("genlab-page-download-link")
        self.downloading = widgets.HBox([self.download_button, self.download],
                                        layout=widgets.Layout(align_items="center",
                                                              display="none"))
        problem = self._problem()
        if problem:
            self.asking.layout.display = "none"
            self.left.value = text(problem, ERROR, tag="div")
        self.children = [self.intro, self.asking, self.left, self.stage, self.thanks,
                         self.downloading]

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
        self.person = person
        self.asking.layout.display = "none"
        self.downloading.layout.display = "flex"
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

    def download_votes(self) -> Path:
        """Write this person's votes as a history file (:func:`genlab.rating.votes_file`)
        and link it under the button (the file's place, where no server serves it); its path.

        Raises:
            ValueError: nobody has started rating yet.
        """
        if self.person is None:
            raise ValueError("no votes yet: type a name and press Start first")
        folder = self.votes_folder or self.history.path.parent / "votes"
        name = "votes-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", self.person).strip("-.")
                           or "rater") + ".sqlite"
        path = votes_file(self.history, self.person, folder / name)
        url = served_url(path)
        merge = (f"<span style='color:{MUTED}'> — to merge: "
                 f"<code>genlab history migrate {escape(name)} TEAM-HISTORY</code></span>")
        if url is not None:
            self.download.value = (f"<a href='{escape(url)}' download='{escape(name)}' "
                                   f"target='_blank'>Save {escape(name)}</a>{merge}")
        else:
            self.download.value = (f"<span style='color:{TEXT}'>Your votes are in "
                                   f"<code>{escape(str(path))}</code></span>{merge}")
        return path
