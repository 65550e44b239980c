"""A rating session: one pair on screen at a time, sides drawn at random, every answer recorded
in the history, the next pair chosen to teach the most (see :mod:`genlab.rating._chooser`).

It is the rater's state and logic without the view; ``genlab.rate`` shows it, and code (tests,
scripts) drives it through the same four calls: :meth:`~RatingSession.answer`,
:meth:`~RatingSession.skip`, :meth:`~RatingSession.undo` and :attr:`~RatingSession.current`.

Votes are read back from the history (so a restarted kernel, or a colleague rating the same
results into a shared history, continues where things stand): a pair this rater already voted
on is not shown again, and everyone's votes feed the fit that picks the next pair.

An experiment's results are rated as prompt versions: each pair is two cells that differ only
in prompt version (the same model, variables and seed), and neither prompt's text is shown
(the two differ, so either would give the version away); the heading shows the variables.
``genlab.leaderboard(history, by="prompt_version", experiment=name)`` ranks the versions
from those votes.

Several raters on one source: ``overlap`` is the share of a rater's pairs taken from those
another rater has voted on (fewest raters first, so an overlapping pair reaches two raters before
three), the rest from pairs nobody else has; ``genlab.agreement`` measures agreement on them.
``gold`` is the share of pairs that are gold pairs: a result against a copy of itself degraded
on this machine (:mod:`genlab.media.degrade`), shown like any pair at a random moment, whose
better side is known (``pair.gold``); gold votes are kept apart in the history.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Unpack

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from genlab.comparison import Comparison
from genlab.experiments import Experiment
from genlab.history import (
    ANSWERS,
    RATING_COLUMNS,
    Answer,
    Filters,
    GoldSide,
    History,
)
from genlab.media.card import Shown
from genlab.media.degrade import DEGRADATIONS, degrade
from genlab.rating._chooser import Chooser
from genlab.rating._pairs import Item, experiment_items, items_of, pairs_of, rating_entry
from genlab.rating._source import source_of
from genlab.report import Fetch, Leaderboard, MediaReader, leaderboard, vote_counts

DEFAULT_PAIRS = 50
"""A session's goal when none is given: every distinct pair once, up to this many."""

_OUTCOME = {"left": 1, "right": -1, "tie": 0, "both bad": 0}
_MANY_TASKS = 2000  # more task ids than this: read the votes whole and keep the ones in scope
_EMBEDS = 64


@dataclass(frozen=True, slots=True)
class Pair:
    """The pair on screen: ``left`` and ``right`` are task ids (the models stay hidden from the
    view; ``left_item.model`` says, for code).

    Attributes:
        left, right: the task id shown on each side.
        prompt: the prompt both answered (for an experiment's versions: the variables both
            were filled with; the prompts themselves stay hidden).
        index: the pair's number among the session's candidates (-1 for a gold pair).
        gold: for a gold pair (a result against a degraded copy of itself), the side known
            to be better, ``"left"`` or ``"right"``; None for a real pair. The view never
            shows it.

    Example:
        >>> from genlab.rating._pairs import Item
        >>> pair = Pair("t1", "t2", "waves", 0, Item("t1", "video-a", "waves", "addr"),
        ...             Item("t2", "video-b", "waves", "addr"))
        >>> pair
        Pair(left='t1', right='t2', prompt='waves', index=0, gold=None)
        >>> pair.left_item.model
        'video-a'
    """

    left: str
    right: str
    prompt: str
    index: int
    left_item: Item = field(repr=False, compare=False)
    right_item: Item = field(repr=False, compare=False)
    gold: GoldSide | None = None


class RatingSession:
    """Blind pairwise rating of ``source``'s results; ``genlab.rate`` is its view.

    Args:
        source: a :class:`~genlab.Comparison`, a :class:`~genlab.History` (narrowed by
            ``filters``), a DataFrame of finished tasks (see :mod:`genlab.rating._source`), or
            an experiment (:func:`genlab.experiment`), whose prompt versions compete.
        by: what competes: ``"model"`` (the default), or a model and settings
            (``["model", "duration"]``); for an experiment, ``"prompt_version"`` (the default
            and the only choice).
        pairs: the session's goal (default: every distinct pair once, up to
            :data:`DEFAULT_PAIRS`).
        seed: makes the sides and the order repeatable.
        rater: recorded with each vote (default: the history's user).
        history: where votes go (default: the source's history, else ``genlab.History()``).
        fetch: reads media that was not saved (default: the comparison's; a History's rows
            are read from their saved files).
        overlap: the share of this rater's pairs drawn from pairs other raters voted on, so
            their agreement can be measured (None: no rule, the pair that teaches most).
        gold: the share of pairs shown that are gold pairs (0: none).

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2", "t3"], "prompt": ["waves"] * 3,
        ...                      "model": ["video-a", "video-b", "video-c"]})
        >>> session = RatingSession(runs, history=history, seed=1, rater="ana")
        >>> session.current
        Pair(left='t3', right='t2', prompt='waves', index=2, gold=None)
        >>> session.answer("left")   # recorded in the history; the next pair is on screen
        Pair(left='t1', right='t3', prompt='waves', index=1, gold=None)
        >>> session.progress_text, len(history.ratings())
        ('1 of 3 pairs', 1)
        >>> history.close()
    """

    def __init__(
        self,
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
    ) -> None:
        if overlap is not None and not 0 <= overlap <= 1:
            raise ValueError(f"overlap is a share of the pairs, from 0 to 1; got {overlap!r}")
        if not 0 <= gold < 1:
            raise ValueError(f"gold is a share of the pairs, from 0 to below 1; got {gold!r}")
        self.overlap, self.gold = overlap, float(gold)
        plain = source_of(source, history=history, fetch=fetch, filters=filters)
        self.history = plain.history
        self.experiment = plain.experiment
        self.by = _by(by, plain.experiment)
        self.rater = rater if rater is not None else self.history.who.user
        self.items = (items_of(plain.runs, plain.params) if plain.cells is None
                      else experiment_items(plain.runs, plain.cells, str(plain.experiment)))
        self.candidates = pairs_of(self.items, self.by)
        self.competitors: list[tuple[Hashable, ...]] = list(
            dict.fromkeys(item.competitor(self.by) for item in self.items))
        code = {c: i for i, c in enumerate(self.competitors)}
        self._code = {item.task_id: code[item.competitor(self.by)] for item in self.items}
        prompts = {a: i for i, a in enumerate(dict.fromkeys(i.address for i in self.items))}
        size = len(self.candidates)
        self._first = np.array([self._code[a.task_id] for a, _ in self.candidates], np.intp)
        self._second = np.array([self._code[b.task_id] for _, b in self.candidates], np.intp)
        self._prompt = np.array([prompts[a.address] for a, _ in self.candidates], np.intp)
        # Both task ids of each candidate, joined by a unit separator either way round -> its
        # index: votes are matched to candidates by it, all at once. (Not NUL: pandas' string
        # dtype drops it.)
        self._pair_keys: dict[str, int] = {}
        for i, (a, b) in enumerate(self.candidates):
            self._pair_keys[f"{a.task_id}\x1f{b.task_id}"] = i
            self._pair_keys[f"{b.task_id}\x1f{a.task_id}"] = i
        self._sides = random.Random(seed)
        self._chooser = Chooser(len(self.competitors), self._first, self._second, self._prompt,
                                np.random.default_rng(seed))
        self._done = np.zeros(size, dtype=bool)
        self._skipped = np.zeros(size, dtype=bool)
        self._prompt_votes = np.zeros(len(prompts))
        self._wins = np.zeros((len(self.competitors),) * 2)
        self._ties = np.zeros((len(self.competitors),) * 2)
        self._steps: list[tuple[str, Pair, str | None]] = []
        self._answers: dict[int, Answer] = {}  # this rater's answer to each pair voted on
        self._fetch = plain.fetch
        self._tag = plain.tag
        self._reader = MediaReader(plain.fetch)
        self._embeds: OrderedDict[str, Shown] = OrderedDict()
        self.goal = min(size, DEFAULT_PAIRS if pairs is None else max(0, pairs))
        # Gold pairs come on top of the goal, so that they are `gold` of every pair shown.
        self._gold_goal = round(self.goal * self.gold / (1 - self.gold))
        self._gold_done: list[str] = []  # the real task of each gold pair this rater voted on
        self._others = np.zeros(size)  # votes by other raters on each candidate
        self._overlapped = 0  # this rater's votes on pairs others had voted on
        self._gold_rng = random.Random(None if seed is None else seed + 1)
        self.current: Pair | None = None
        self.refresh()

    # --- what is on screen --------------------------------------------------------------

    @property
    def done(self) -> int:
        """Pairs this rater has voted on (in earlier sessions too), gold pairs included."""
        return int(self._done.sum()) + len(self._gold_done)

    @property
    def total(self) -> int:
        """The pairs this session shows in all: its goal and the gold pairs among them."""
        return self.goal + self._gold_goal

    @property
    def progress_text(self) -> str:
        """E.g. ``"12 of 40 pairs"`` (gold pairs counted like the others)."""
        return (f"{min(self.done, self.total)} of {self.total} "
                f"pair{'' if self.total == 1 else 's'}")

    @property
    def can_undo(self) -> bool:
        """Whether :meth:`undo` has a step of this session to take back."""
        return bool(self._steps)

    @property
    def finished(self) -> bool:
        """True once the goal is reached, or no pair is left to show."""
        return self.current is None

    def why_nothing(self) -> str:
        """Why there is no pair on screen, for people."""
        if not self.candidates and self.experiment is not None:
            versions = {i.version for i in self.items}
            return (f"nothing to compare: {len(self.items)} finished result(s) of "
                    f"{len(versions)} prompt version(s) in experiment {self.experiment!r}; a "
                    "pair needs results of two versions for the same model, variables and seed")
        if not self.candidates:
            models = {i.model for i in self.items}
            return (f"nothing to compare: {len(self.items)} finished result(s) of "
                    f"{len(models)} model(s); a pair needs results of two models (or settings) "
                    "for the same prompt")
        return f"done: {self.progress_text} rated"

    def media(self, pair: Pair) -> tuple[Shown, Shown]:
        """The two results' media, ready to embed (saved files first, else ``fetch``; a gold
        pair's worse side degraded here)."""
        return self._embed(pair.left_item), self._embed(pair.right_item)

    def _embed(self, item: Item) -> Shown:
        found = self._embeds.get(item.task_id)
        if found is None:
            how = next((d for d in DEGRADATIONS if d == item.degraded), None)
            found = self._reader.embed(item.row, transform=None if how is None else (
                lambda data: degrade(data, how)))
            self._embeds[item.task_id] = found
            while len(self._embeds) > _EMBEDS:
                self._embeds.popitem(last=False)
        else:
            self._embeds.move_to_end(item.task_id)
        return found

    # --- answering ----------------------------------------------------------------------

    def answer(self, answer: Answer) -> Pair | None:
        """Record ``answer`` (``"left"``, ``"right"``, ``"tie"`` or ``"both bad"``) for the
        pair on screen, in the history; the next pair (None when done).

        Raises:
            ValueError: an answer that is none of those.
            RuntimeError: no pair is on screen.
        """
        if answer not in ANSWERS:
            raise ValueError(f"answer must be one of {list(ANSWERS)}, got {answer!r}")
        pair = self._on_screen()
        entry = rating_entry(pair.left_item, pair.right_item, answer, rater=self.rater,
                             tag=self._tag)
        if self.history.tag:  # the history's own tag wins, as for every other vote
            entry = replace(entry, tag=self.history.tag)
        rating_id = self.history.add_rating(replace(entry, gold=pair.gold))
        if pair.gold is not None:  # kept apart: it teaches the chooser nothing
            self._gold_done.append(_real(pair).task_id)
            self._steps.append(("answer", pair, rating_id))
            return self._next()
        self._count(pair, answer, +1)
        self._steps.append(("answer", pair, rating_id))
        return self._next()

    def skip(self) -> Pair | None:
        """Leave the pair on screen for later (it comes back when nothing else is left; a
        skipped gold pair gives way to another gold pair later)."""
        pair = self._on_screen()
        if pair.gold is None:
            self._skipped[pair.index] = True
        self._steps.append(("skip", pair, None))
        return self._next()

    def undo(self) -> Pair | None:
        """Go back one step: an answer is taken back (its row in the history is marked, not
        deleted), a skip forgotten; that pair is on screen again, sides as they were."""
        if not self._steps:
            return self.current
        kind, pair, rating_id = self._steps.pop()
        if kind == "answer" and rating_id is not None:
            self.history.undo_rating(rating_id)
            if pair.gold is not None:
                self._gold_done.remove(_real(pair).task_id)
            else:
                self._count(pair, None, -1)
        elif pair.gold is None:
            self._skipped[pair.index] = False
        self.current = pair
        return pair

    def more(self, pairs: int = 10) -> Pair | None:
        """Raise the goal by ``pairs`` (as far as there are pairs) and carry on."""
        self.goal = min(len(self.candidates), self.goal + max(0, pairs))
        if self.current is None:
            self._next()
        return self.current

    def _on_screen(self) -> Pair:
        if self.current is None:
            raise RuntimeError(f"no pair is on screen ({self.why_nothing()})")
        return self.current

    def _count(self, pair: Pair, answer: Answer | None, step: int) -> None:
        a, b = self._code[pair.left], self._code[pair.right]
        if step < 0:  # taking back the last answer recorded for this pair
            answer = self._answers.pop(pair.index)
        else:
            assert answer is not None
            self._answers[pair.index] = answer
        outcome = _OUTCOME[answer]
        if outcome > 0:
            self._wins[a, b] += step
        elif outcome < 0:
            self._wins[b, a] += step
        else:
            self._ties[a, b] += step
            self._ties[b, a] += step
        self._done[pair.index] = step > 0
        self._prompt_votes[self._prompt[pair.index]] += step
        if self._others[pair.index] > 0:
            self._overlapped += step

    def _next(self) -> Pair | None:
        self.current = None
        real_left = self.goal - int(self._done.sum())
        gold_left = self._gold_goal - len(self._gold_done)
        if real_left <= 0 and gold_left <= 0:
            return None
        # Gold pairs at random moments: each pair shown is gold with the share still due.
        if gold_left > 0 and self._gold_rng.random() < gold_left / (gold_left + max(0, real_left)):
            self.current = self._gold_pair()
            if self.current is not None:
                return self.current
        if real_left <= 0:
            return None
        available = ~self._done & ~self._skipped
        if not available.any():  # only skipped ones left: they come back
            self._skipped[:] = False
            available = ~self._done
        available = self._overlap_rule(available)
        index = self._chooser.next(self._wins, self._ties, available, self._prompt_votes)
        if index is None:
            return None
        a, b = self.candidates[index]
        if self._sides.random() < 0.5:
            a, b = b, a
        self.current = Pair(a.task_id, b.task_id, a.prompt, index, a, b)
        return self.current

    def _overlap_rule(self, available: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """The candidates the overlap rule allows next (all of ``available`` without one)."""
        if self.overlap is None:
            return available
        shared = available & (self._others > 0)
        alone = available & (self._others == 0)
        if self._overlapped < self.overlap * (int(self._done.sum()) + 1) and shared.any():
            # Fewest raters first: an overlapping pair reaches two raters before three.
            fewest = self._others[shared].min()
            chosen: NDArray[np.bool_] = shared & (self._others == fewest)
            return chosen
        return alone if alone.any() else available

    def _gold_pair(self) -> Pair | None:
        """A gold pair: a result not yet used for gold by this rater (a random one), against
        a degraded copy of itself, on a random side."""
        every = list({i.task_id: i for pair in self.candidates for i in pair}.values())
        used = set(self._gold_done)
        pool = [i for i in every if i.task_id not in used] or every
        if not pool:
            return None
        real = self._gold_rng.choice(pool)
        how = self._gold_rng.choice(DEGRADATIONS)
        worse = replace(real, task_id=f"{real.task_id}~{how}", degraded=how)
        if self._gold_rng.random() < 0.5:
            return Pair(real.task_id, worse.task_id, real.prompt, -1, real, worse, gold="left")
        return Pair(worse.task_id, real.task_id, real.prompt, -1, worse, real, gold="right")

    # --- the votes ----------------------------------------------------------------------

    def votes(self) -> pd.DataFrame:
        """Everyone's votes between this session's results, from the history."""
        return self._read(None)

    def _read(self, columns: Sequence[str] | None) -> pd.DataFrame:
        tasks = list(self._code)
        wanted = list(RATING_COLUMNS if columns is None else columns)
        if len(tasks) <= _MANY_TASKS:
            return self.history.rating_frame(wanted, tasks=tasks)
        every = self.history.rating_frame(wanted)
        inside = every["left_task"].isin(tasks) & every["right_task"].isin(tasks)
        return every[inside].reset_index(drop=True)

    def refresh(self) -> pd.DataFrame:
        """Read the votes again (a colleague's too) and choose the next pair if none is on
        screen; the votes (the columns a leaderboard and the chooser need)."""
        needed = ["rater", "answer", "left_task", "right_task", "left_model", "right_model"]
        if self.by != ("model",):
            needed += ["left_settings", "right_settings"]
        votes = self._read(needed)
        left = votes["left_task"].map(self._code).to_numpy(dtype=np.intp)
        right = votes["right_task"].map(self._code).to_numpy(dtype=np.intp)
        outcome = votes["answer"].map(_OUTCOME).to_numpy(dtype=np.int8)
        differ = left != right
        self._wins, self._ties = vote_counts(left[differ], right[differ], outcome[differ],
                                             len(self.competitors))
        self._done[:] = False
        self._prompt_votes[:] = 0
        keys = votes["left_task"].astype(str) + "\x1f" + votes["right_task"].astype(str)
        index = keys.map(self._pair_keys).to_numpy(dtype=np.float64, na_value=np.nan)
        known = ~np.isnan(index)
        pairs = index[known].astype(np.intp)
        np.add.at(self._prompt_votes, self._prompt[pairs], 1)
        mine = (votes["rater"] == self.rater).fillna(False).to_numpy(dtype=bool)[known]
        answers = votes["answer"].to_numpy(dtype=object)[known]
        self._done[pairs[mine]] = True
        self._answers = dict(zip(pairs[mine].tolist(), answers[mine].tolist(), strict=True))
        self._others[:] = 0
        np.add.at(self._others, pairs[~mine], 1)
        self._overlapped = int((self._others[pairs[mine]] > 0).sum())
        if self._gold_goal:
            golden = self.history.rating_frame(["left_task", "right_task", "gold"],
                                               gold=True, user=self.rater)
            real = golden["left_task"].where(golden["gold"] == "left", golden["right_task"])
            self._gold_done = [str(t) for t in real if str(t) in self._code]
        if (self.current is None
                or (self.current.gold is None and self._done[self.current.index])):
            self._next()
        return votes

    def leaderboard(self, **options: Any) -> Leaderboard:
        """The leaderboard of everyone's votes between this session's results (see
        :func:`genlab.report.leaderboard`); a competitor nobody compared yet is unrated."""
        votes = self.refresh()
        if self.experiment is not None:
            return leaderboard(self.history, by="prompt_version", experiment=self.experiment,
                               **options)
        if self.by == ("model",):
            options.setdefault("models", sorted({str(c[0]) for c in self.competitors}))
        return leaderboard(votes, list(self.by), **options)


def _real(pair: Pair) -> Item:
    """A gold pair's result as it is (its better side)."""
    return pair.left_item if pair.gold == "left" else pair.right_item


def _by(by: str | Sequence[str] | None, experiment: str | None) -> tuple[str, ...]:
    names = ("model",) if by is None else (by,) if isinstance(by, str) else tuple(by)
    if experiment is not None:
        if by is not None and names != ("prompt_version",):
            raise ValueError(
                f"an experiment's results are rated as prompt versions (by='prompt_version'), "
                f"not by={by!r}: to rate models, rate its history, e.g. "
                f"genlab.rate(history, tag={experiment!r})")
        return ("prompt_version",)
    if "prompt_version" in names:
        raise ValueError("by='prompt_version' rates an experiment's prompt versions: give the "
                         "experiment, genlab.rate(exp)")
    return names
