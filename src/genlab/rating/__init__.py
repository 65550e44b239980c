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
"""

from __future__ import annotations

from genlab.rating._chooser import Chooser
from genlab.rating._pairs import Item, comparable, experiment_items, items_of, pairs_of
from genlab.rating._session import DEFAULT_PAIRS, Pair, RatingSession
from genlab.rating._source import Source, source_of

__all__ = [
    "DEFAULT_PAIRS",
    "Chooser",
    "Item",
    "Pair",
    "RatingSession",
    "Source",
    "comparable",
    "experiment_items",
    "items_of",
    "pairs_of",
    "source_of",
]
