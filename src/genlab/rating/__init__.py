"""Blind pairwise rating: which results to show side by side, in what order, and the votes.

A :class:`RatingSession` is the rater without its view: it finds the pairs of a source (a
:class:`~genlab.Comparison`, a :class:`~genlab.History`, a DataFrame of finished tasks, or an
experiment, whose prompt versions are compared blind), shows one at a time with the sides
drawn at random, records each answer in the history (never in the service: rating costs
nothing), and picks the next pair to teach the most. The widget (``genlab.rate``) shows it;
tests and scripts drive it directly.

Example:
    session = RatingSession(comparison)
    while session.current is not None:
        pair = session.current          # pair.left, pair.right: task ids; models hidden
        session.answer("left")          # or "right", "tie", "both bad"; skip(); undo()
    session.leaderboard()

A judge (:func:`judge`) is asked about the same pairs, by code: its answers are votes of the
rater ``judge:NAME@VERSION``, and no pair is asked twice of one judge version.
:func:`votes_file` writes one rater's votes as a history file that ``genlab history migrate``
merges elsewhere (the rating page's "Download my votes").
"""

from __future__ import annotations

from genlab.history import JUDGE_PREFIX, votes_file
from genlab.rating._chooser import Chooser
from genlab.rating._judge import JudgeFunction, JudgeRun, judge, judge_rater
from genlab.rating._pairs import (
    Item,
    comparable,
    experiment_items,
    items_of,
    pairs_of,
    rating_entry,
)
from genlab.rating._session import DEFAULT_PAIRS, Pair, RatingSession
from genlab.rating._source import Source, source_of

__all__ = [
    "DEFAULT_PAIRS",
    "JUDGE_PREFIX",
    "Chooser",
    "Item",
    "JudgeFunction",
    "JudgeRun",
    "Pair",
    "RatingSession",
    "Source",
    "comparable",
    "experiment_items",
    "items_of",
    "judge",
    "judge_rater",
    "pairs_of",
    "rating_entry",
    "source_of",
    "votes_file",
]
