"""The rater: two results of the same prompt side by side, models hidden, and a vote.

Given an experiment (``genlab.rate(exp)``), two results of one model, variables and seed side
by side, their prompt versions hidden (the prompts' texts too: the heading shows the
variables), and a vote; the leaderboard under the pair ranks the versions.

``genlab.rate(source)`` shows a :class:`Rater`, the view of a
:class:`genlab.rating.RatingSession` (which chooses the pairs, draws the sides and records the
votes in the history; the view computes nothing). Answers come from the buttons or the keys
1 (left), 2 (right), = (tie), 0 (both bad), s (skip) and u (undo); under the pair, the
leaderboard updates after each vote. Videos play muted, looping and in step (play, pause and
seek one and the other follows).

The pair sits side by side, each side at most half the width and its media scaled to fit, so
both and the answers are in view at once on a 1024 px screen with a side panel open. When its
kernel is gone (restarted, or a saved notebook reopened) a line at the top says so and the
keyboard bar is hidden, as in the Studio.

Keys: a click on the keyboard bar gives it the focus (it says so); a key pressed there
clicks the matching button. The handler is an inline attribute, not a script, so it works in
a widget's HTML; it stops the key from reaching JupyterLab, whose command mode would
otherwise turn the cell into a heading on "1".

Example:
    rater = genlab.rate(cmp)          # the last expression of a cell: displayed
    rater.current.left                # the task id on the left (models stay hidden)
    rater.answer("left")              # as the button or the key 1 does
    rater.leaderboard                 # the latest Leaderboard (its table: .df)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Unpack

import ipywidgets as widgets
import pandas as pd
import traitlets

from genlab.comparison import Comparison
from genlab.display import ACTIVE, BORDER, ERROR, MUTED, SHADE, TEXT, escape, text
from genlab.experiments import Experiment
from genlab.history import Answer, Filters, History
from genlab.media.card import Shown
from genlab.rating import Pair, RatingSession
from genlab.report import Fetch, Leaderboard, leaderboard_html
from genlab.widgets._offline import offline_html

# The two sides always sit side by side, each at most half the width, their media scaled to fit
# (never taller than 45% of the window), so both and the answers below are in view together
# at 1024 px with JupyterLab's side panel open.
_CSS = f"""
.genlab-rater .genlab-pair {{ display: flex; flex-flow: row nowrap; gap: 12px;
  align-items: flex-start; }}
.genlab-rater .genlab-side {{ flex: 1 1 0; min-width: 0; max-width: 50%; margin: 0; }}
.genlab-rater .genlab-side video, .genlab-rater .genlab-side img {{ display: block;
  box-sizing: border-box; width: 100%; height: auto; max-height: 45vh; object-fit: contain;
  background: #000; border: 1px solid {BORDER}; }}
.genlab-rater .genlab-side img {{ background: none; }}
.genlab-rater .genlab-side figcaption {{ color: {TEXT}; font-weight: 600;
  margin-bottom: 4px; }}
.genlab-rater .genlab-side figcaption kbd, .genlab-rater .genlab-keys kbd {{
  border: 1px solid {BORDER}; border-radius: 3px; padding: 0 4px; background: {SHADE}; }}
.genlab-rater .genlab-prompt {{ color: {TEXT}; white-space: pre-wrap;
  overflow-wrap: anywhere; margin: 2px 0 6px; }}
.genlab-rater .genlab-note {{ color: {MUTED}; }}
.genlab-rater .genlab-missing {{ color: {ERROR}; padding: 2em 0; }}
"""

_HANDLER = (
    "var k={'1':'left','2':'right','=':'tie','0':'bad','s':'skip','u':'undo'}[event.key];"
    "if(!k||event.ctrlKey||event.metaKey||event.altKey)return;"
    "event.preventDefault();event.stopPropagation();"
    "var b=this.closest('.genlab-rater').querySelector('.genlab-rate-'+k);"
    "if(b&&!b.disabled)b.click();"
)
_KEYBAR = (
    f"<div class='genlab-keys genlab-live-only' tabindex='0' role='button' "
    f"data-lm-suppress-shortcuts='true' "
    f"aria-label='keyboard: 1 left, 2 right, = tie, 0 both bad, s skip, u undo' "
    f"onkeydown=\"{_HANDLER}\" "
    f"style='border:1px dashed {BORDER};border-radius:4px;padding:6px 10px;cursor:pointer;"
    f"color:{MUTED};outline-color:{ACTIVE}' "
    "onfocus=\"this.firstChild.textContent='Keys on: '\" "
    "onblur=\"this.firstChild.textContent='Click here to answer with keys: '\">"
    "<span>Click here to answer with keys: </span><kbd>1</kbd> left · <kbd>2</kbd> right · "
    "<kbd>=</kbd> tie · <kbd>0</kbd> both bad · <kbd>s</kbd> skip · <kbd>u</kbd> undo</div>"
)
# After a kernel restart, or reopened from a saved notebook: said, as the Studio says it.
_OFFLINE = offline_html(
    "genlab-rater", "rater",
    "Run the cell to rate again; every vote so far is in the history.",
)
# The videos of one pair play, pause and seek together (as the gallery's rows do).
_PAIR = "this.closest('.genlab-pair').querySelectorAll('video')"
_SYNC = (
    f' onplay="for(const v of {_PAIR})if(v!==this&amp;&amp;v.paused)v.play()"'
    f' onpause="for(const v of {_PAIR})if(v!==this&amp;&amp;!v.paused)v.pause()"'
    f' onseeked="for(const v of {_PAIR})if(v!==this&amp;&amp;'
    'Math.abs(v.currentTime-this.currentTime)&gt;0.3)v.currentTime=this.currentTime"'
)


def rate(
    source: Comparison | History | pd.DataFrame | Experiment,
    *,
    by: str | Sequence[str] | None = None,
    pairs: int | None = None,
    seed: int | None = None,
    rater: str | None = None,
    history: History | None = None,
    fetch: Fetch | None = None,
    overlap: float | None = None,
    gold: float = 0.0,
    **filters: Unpack[Filters],
) -> Rater:
    """Rate results blind, two at a time; also ``genlab.rate(source)``.

    Args:
        source: a :class:`~genlab.Comparison`, a :class:`~genlab.History` (narrowed by
            ``filters``, those of ``df()``), a DataFrame of finished tasks, or an experiment
            (``genlab.experiment``): its prompt versions are rated, each pair two cells that
            differ only in prompt version, versions and prompts hidden.
        by, pairs, seed, rater, history, fetch: as for :class:`genlab.rating.RatingSession`.
        overlap: several raters on one source: the share of this rater's pairs also given
            to other raters, so ``genlab.agreement`` can measure how they agree.
        gold: the share of pairs that are gold pairs (a result against a copy of itself
            degraded here, on this machine); they look like any pair, and
            ``rater.current.gold`` says which side is known to be better (None for a real
            pair). Gold votes are kept apart and never count in a leaderboard.

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2", "t3"], "prompt": ["waves"] * 3,
        ...                      "model": ["video-a", "video-b", "video-c"]})
        >>> rater = rate(runs, history=history, seed=1, rater="ana")
        >>> rater.done, rater.goal, rater.session.current.prompt
        (0, 3, 'waves')
        >>> history.close()

        In a notebook::

            cmp = genlab.compare(client, ["a kite", "a fox"], ["image-b", "image-d"],
                                 download_dir="genlab-output/kites")
            genlab.rate(cmp)
        genlab.rate(exp)      # then exp.leaderboard() ranks its prompt versions
        genlab.rate(history, tag="kites", rater="ana", overlap=0.2, gold=0.1)
    """
    session = RatingSession(source, by=by, pairs=pairs, seed=seed, rater=rater,
                            history=history, fetch=fetch, overlap=overlap, gold=gold,
                            **filters)
    return Rater(session)


class Rater(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """The view of a :class:`~genlab.rating.RatingSession`: a pair, the answers, progress and
    the leaderboard (``board=False``: none, as on the rating page). ``genlab.rate(source)``
    makes one.

    Attributes:
        session: the session shown (its state and its votes).
        done, goal: pairs voted on, and the session's goal (traits, for observers).
        buttons: answer name (``left``, ``right``, ``tie``, ``bad``, ``skip``, ``undo``) ->
            its button.
        header, stage, keyboard, status, board: the parts, for tests and layouts.

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2", "t3"], "prompt": ["waves"] * 3,
        ...                      "model": ["video-a", "video-b", "video-c"]})
        >>> rater = Rater(RatingSession(runs, history=history, seed=1), board=False)
        >>> sorted(rater.buttons), "0 of 3 pairs" in rater.header.value
        (['bad', 'left', 'right', 'skip', 'tie', 'undo'], True)
        >>> history.close()
    """

    done = traitlets.Int(0)
    goal = traitlets.Int(0)

    def __init__(self, session: RatingSession, *, board: bool = True) -> None:
        super().__init__()
        self.add_class("genlab-rater")
        self.session = session
        self._with_board = board
        self.leaderboard: Leaderboard | None = None
        self.header = widgets.HTML()
        self.stage = widgets.HTML(layout=widgets.Layout(max_width="100%"))
        self.keyboard = widgets.HTML(_KEYBAR)
        self.status = widgets.HTML()
        self.board = widgets.HTML(layout=widgets.Layout(
            max_width="100%", display=None if board else "none"))
        specs: list[tuple[str, str, str, Callable[[], object]]] = [
            ("left", "Left is better (1)", "arrow-left", lambda: self.answer("left")),
            ("tie", "Tie (=)", "", lambda: self.answer("tie")),
            ("bad", "Both bad (0)", "", lambda: self.answer("both bad")),
            ("right", "Right is better (2)", "arrow-right", lambda: self.answer("right")),
            ("skip", "Skip (s)", "forward", self.skip),
            ("undo", "Undo (u)", "undo", self.undo),
        ]
        self.buttons: dict[str, widgets.Button] = {}
        for name, label, icon, action in specs:
            button = widgets.Button(
                description=label, icon=icon, layout=widgets.Layout(width="auto"),
                button_style="primary" if name in ("left", "right") else "",
            )
            button.add_class(f"genlab-rate-{name}")
            button.on_click(lambda _b, act=action: self._clicked(act))
            self.buttons[name] = button
        answers = widgets.HBox([self.buttons[n] for n in ("left", "tie", "bad", "right")],
                               layout=widgets.Layout(flex_flow="row wrap"))
        moves = widgets.HBox([self.buttons["skip"], self.buttons["undo"]],
                             layout=widgets.Layout(flex_flow="row wrap", margin="0 0 0 1em"))
        self.children = [
            widgets.HTML(f"<style>{_CSS}</style>{_OFFLINE}"), self.header, self.stage,
            widgets.HBox([answers, moves], layout=widgets.Layout(flex_flow="row wrap")),
            self.keyboard, self.status, self.board,
        ]
        self._show_pair()
        self._show_board()

    # --- driven from code (the buttons and keys call the same) --------------------------

    @property
    def current(self) -> Pair | None:
        """The pair on screen: ``.left`` and ``.right`` are task ids; None when done."""
        return self.session.current

    def answer(self, answer: Answer) -> Pair | None:
        """Vote for the pair on screen (``"left"``, ``"right"``, ``"tie"``, ``"both bad"``);
        the next pair is shown and returned, and the leaderboard updated."""
        self.session.answer(answer)
        return self._after()

    def skip(self) -> Pair | None:
        """Leave the pair on screen for later; the next one is shown."""
        self.session.skip()
        return self._after()

    def undo(self) -> Pair | None:
        """Take the last answer (or skip) back; that pair is shown again."""
        self.session.undo()
        return self._after()

    def more(self, pairs: int = 10) -> Pair | None:
        """Carry on past the goal by ``pairs``."""
        self.session.more(pairs)
        return self._after()

    # --- the view -----------------------------------------------------------------------

    def _after(self) -> Pair | None:
        self._show_board()  # reads the votes again (a colleague's too), then the pair
        self._show_pair()
        return self.session.current

    def _clicked(self, action: Callable[[], object]) -> None:
        try:
            action()
            self.status.value = ""
        except Exception as exc:  # a widget callback: shown, never raised
            self.status.value = text(f"{type(exc).__name__}: {exc}", ERROR, tag="div")

    def _show_pair(self) -> None:
        session = self.session
        self.done, self.goal = min(session.done, session.total), session.total
        pair = session.current
        progress = text(session.progress_text, MUTED)
        if pair is None:
            self.header.value = f"<b>Which is better?</b> {progress}"
            self.stage.value = text(session.why_nothing(), MUTED, tag="div",
                                    css="padding:1em 0")
        else:
            if session.experiment is not None:  # versions compete: their prompts stay hidden
                asked = (f"<div class='genlab-prompt'>{escape(pair.prompt) or '(no variables)'}"
                         "</div><div class='genlab-note'>Two versions of the prompt, for the same "
                         "model, variables and seed; which is which is hidden.</div>")
            else:
                asked = f"<div class='genlab-prompt'>{escape(pair.prompt) or '(no prompt)'}</div>"
            self.header.value = f"<b>Which is better?</b> {progress}{asked}"
            left, right = session.media(pair)
            self.stage.value = (
                f"<div class='genlab-pair'>{_side('Left', '1', left)}"
                f"{_side('Right', '2', right)}</div>"
            )
        for name in ("left", "right", "tie", "bad", "skip"):
            self.buttons[name].disabled = pair is None
        self.buttons["undo"].disabled = not session.can_undo

    def _show_board(self) -> None:
        if not self._with_board:  # a rating page: the person rates, nobody ranks yet
            self.session.refresh()  # a colleague's votes still count for the next pair
            return
        try:
            self.leaderboard = self.session.leaderboard()
            self.board.value = leaderboard_html(self.leaderboard)
        except Exception as exc:  # shown, never raised: this runs in widget callbacks
            self.board.value = text(f"The leaderboard could not be made: {exc}", ERROR,
                                    tag="div")


def _side(label: str, key: str, embed: Shown) -> str:
    caption = f"<figcaption>{label} <kbd>{key}</kbd></figcaption>"
    if embed.tag == "video":
        shown = (f'<video src="{embed.uri}" autoplay muted loop playsinline controls '
                 f'preload="auto"{_SYNC}></video>')
    elif embed.tag == "img":
        shown = f'<img src="{embed.uri}" alt="{label.lower()} result">'
    else:
        shown = text(f"no media: {embed.note}", ERROR, tag="div", cls="genlab-missing")
    side = label.lower()
    return f"<figure class='genlab-side genlab-side-{side}'>{caption}{shown}</figure>"
