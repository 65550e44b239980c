"""The journal interface: what the client tells a history about every submission, and what a
history (``genlab.history``) implements and imports. This module is the documented interface
for sibling packages (history, comparison, report, widgets, connect): the journal protocols,
what a journal keeps, the default in-memory journal, and the few helpers they share with the
client (safe file names, the budget's check of the day cap). Kept media and their file names
are :mod:`genlab.media`'s. People use ``genlab.client`` (the user's API) instead.

The client calls a :class:`TaskJournal` at each step of a task's life, so that a submission
whose answer was lost is never forgotten and its credits can be accounted for:

1. ``submit_started`` before the request leaves (returns a local entry id),
2. ``submit_accepted`` with the task id, or ``submit_uncertain`` when the request may have
   reached the service but no answer came back, or ``submit_failed`` when it was refused,
3. ``status_changed`` for every new status observed,
4. ``results_saved`` after files were downloaded, with the measured facts of each kept
   media file and how they differ from the request (:func:`record_results` calls a journal
   written before facts existed with the paths alone).

A :class:`SpendJournal` also keeps the money (earlier results by content address, reuses,
the day cap: :meth:`SubmitEntry.over_the_day` judges it) and the requests sent.
:class:`MemoryJournal` (the default) keeps all of it in memory for one session;
:class:`genlab.History` keeps it durably (SQLite or PostgreSQL). Durations to learn polling
from are not the journal's business: a client is given a durations source of its own
(``AsyncClient(durations=...)``; ``genlab.connect()`` passes the history's).

Where each part lives: the protocols and records in ``_protocols``, the writer thread in
``_writer``, the in-memory journal in ``_memory``, the budget's check in ``_budget``.

Example:
    journal = MemoryJournal()
    client = genlab.AsyncClient(history=journal)
"""

from __future__ import annotations

from genlab.client._budget import Refusal, cap_refusal
from genlab.client._config import API_KEY_ENV, BASE_URL_ENV, ConfigOptions, RequestLike
from genlab.client._durations import DurationSample
from genlab.client._memory import JournalEntry, MemoryJournal
from genlab.client._pacing import Work
from genlab.client._protocols import (
    DurationKey,
    Labels,
    PastResult,
    Reused,
    SpendJournal,
    SubmitEntry,
    TaskJournal,
    record_results,
)
from genlab.client._uploads import safe_filename
from genlab.client._writer import JournalWriter, recording

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "ConfigOptions",
    "DurationKey",
    "DurationSample",
    "JournalEntry",
    "JournalWriter",
    "Labels",
    "MemoryJournal",
    "PastResult",
    "Refusal",
    "RequestLike",
    "Reused",
    "SpendJournal",
    "SubmitEntry",
    "TaskJournal",
    "Work",
    "cap_refusal",
    "record_results",
    "recording",
    "safe_filename",
]
