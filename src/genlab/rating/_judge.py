"""Judges: code (or a vision model behind it) asked about the pairs a person would rate, its
answers recorded as votes of a rater named ``judge:NAME@VERSION``.

``judge(source, fn, name="sharper", version="1")`` finds the pairs of ``source`` exactly as
:class:`~genlab.rating.RatingSession` does (one brief, two competitors; for an experiment,
two prompt versions of one model, variables and seed), draws each pair's sides at random
(a judge may favour a side, as people do), and asks ``fn(left, right)`` with two
:class:`genlab.Result` s. ``fn`` answers ``"left"``, ``"right"``, ``"tie"`` or ``"both bad"``;
each answer goes into the history as a vote, like a person's, with the judge's name as its
rater. A pair this judge version has a vote on is never asked again: a second run makes no
calls, and a new ``version`` asks everything afresh.

Calls run at most ``concurrency`` at a time: a plain function on worker threads (a blocking
HTTP call is fine), an ``async def`` on an event loop of its own thread, so either works
from a notebook whose own loop is running. Votes are written by the calling thread as the
answers come. ``judge`` returns when every call has; to keep a kernel's widgets live
meanwhile, await it on a thread: ``await asyncio.to_thread(genlab.judge, exp, fn)``. A call
that raises, or answers something else, records nothing and is said in
:attr:`JudgeRun.failed`; it is asked again on the next run.

A judge's votes are kept apart from people's where it matters: a leaderboard counts them only
when asked to, and they can be checked against people's (``genlab.agreement``).

Example:
    def sharper(left, right):
        a, b = genlab.media.scores.sharpness(left), genlab.media.scores.sharpness(right)
        return "tie" if a == b else "left" if a > b else "right"

    run = genlab.judge(exp, sharper, name="sharper", version="1")
    run.asked            # 8 calls; run it again: 0
"""

from __future__ import annotations

import asyncio
import inspect
import json
import queue
import random
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Unpack

import pandas as pd

from genlab.comparison import Comparison
from genlab.experiments import Experiment
from genlab.history import ANSWERS, JUDGE_PREFIX, Answer, Filters, History
from genlab.media import Result
from genlab.rating._pairs import Item, experiment_items, items_of, pairs_of, rating_entry
from genlab.rating._source import source_of
from genlab.report import Fetch

JudgeFunction = Callable[[Result, Result], "str | Awaitable[str]"]
"""``fn(left, right)``: two results shown side by side; ``"left"``, ``"right"``, ``"tie"``
or ``"both bad"`` (an ``async def`` may return it too)."""


def judge_rater(name: str, version: str | int = "1") -> str:
    """The rater a judge's votes are recorded as.

    Example:
        >>> judge_rater("sharper", 2)
        'judge:sharper@2'
    """
    name, version = str(name).strip(), str(version).strip()
    if not name or "@" in name or not version:
        raise ValueError(f"a judge needs a name without '@' and a version, got {name!r}, "
                         f"{version!r}")
    return f"{JUDGE_PREFIX}{name}@{version}"


@dataclass(slots=True)
class JudgeRun:
    """What one :func:`judge` run did.

    Attributes:
        rater: the votes' rater, ``judge:NAME@VERSION``.
        pairs: the pairs of the source.
        judged_before: pairs this judge version had already voted on (not asked again).
        asked: calls made in this run.
        recorded: votes recorded in this run.
        left: pairs not asked because of ``max_calls`` (a next run asks them).
        failed: ``(left task, right task, why)`` of calls that raised or gave no answer.
        answers: how many of each answer this run recorded.

    Example:
        >>> run = JudgeRun(rater="judge:sharper@1", pairs=4, judged_before=4)
        >>> run.asked, run.left
        (0, 0)
    """

    rater: str
    pairs: int
    judged_before: int = 0
    asked: int = 0
    recorded: int = 0
    left: int = 0
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    answers: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        told = ", ".join(f"{n} {a}" for a, n in self.answers.items() if n) or "no answers"
        line = (f"{self.rater}: {self.asked} call(s) for {self.pairs} pair(s), "
                f"{self.recorded} vote(s) recorded ({told}); {self.judged_before} judged before")
        if self.left:
            line += f"; {self.left} left for a next run (max_calls)"
        if self.failed:
            line += f"; {len(self.failed)} failed, e.g. {self.failed[0][2]}"
        return line


def judge(
    source: Comparison | History | pd.DataFrame | Experiment,
    fn: JudgeFunction,
    *,
    name: str = "sharper",
    version: str | int = "1",
    max_calls: int | None = None,
    concurrency: int = 4,
    by: str | Sequence[str] | None = None,
    seed: int | None = None,
    history: History | None = None,
    fetch: Fetch | None = None,
    **filters: Unpack[Filters],
) -> JudgeRun:
    """Ask ``fn`` about every pair of ``source`` this judge version has not voted on, and
    record each answer as a vote by ``judge:NAME@VERSION``; also ``genlab.judge``.

    Args:
        source: what a rater would rate: a :class:`~genlab.Comparison`, a
            :class:`~genlab.History` (narrowed by ``filters``), a DataFrame of finished
            tasks, or an experiment (its prompt versions).
        fn: ``fn(left, right)`` -> ``"left"``, ``"right"``, ``"tie"`` or ``"both bad"``; a
            plain function runs on worker threads, an ``async def`` on a loop of its own.
        name, version: the judge; change ``version`` when ``fn`` changes (its earlier votes
            stay, recorded under the old version).
        max_calls: ask at most this many pairs in this run (None: all).
        concurrency: calls at once.
        by, seed, history, fetch: as for :class:`~genlab.rating.RatingSession` (``seed``
            draws the sides).

    Raises:
        ValueError: a bad name, version, ``max_calls`` or ``concurrency``.

    Example:
        >>> import os, tempfile
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> runs = pd.DataFrame({"task_id": ["t1", "t2", "t3"], "prompt": ["waves"] * 3,
        ...                      "model": ["video-a", "video-b", "video-c"]})
        >>> def first(left, right):   # a stand-in judge: it always prefers the left side
        ...     return "left"
        >>> print(judge(runs, first, history=history, seed=1))
        judge:sharper@1: 3 call(s) for 3 pair(s), 3 vote(s) recorded (3 left); 0 judged before
        >>> print(judge(runs, first, history=history, seed=1))   # nothing new to ask
        judge:sharper@1: 0 call(s) for 3 pair(s), 0 vote(s) recorded (no answers); 3 judged before
        >>> history.close()

        Against an experiment, with a real judge::

            run = genlab.judge(exp, sharper, name="sharper", version="1", concurrency=4)
    """  # noqa: E501
    rater = judge_rater(name, version)
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if max_calls is not None and max_calls < 0:
        raise ValueError(f"max_calls must be 0 or more, got {max_calls}")
    plain = source_of(source, history=history, fetch=fetch, filters=filters)
    store = plain.history
    if plain.cells is None:
        items = items_of(plain.runs, plain.params)
        names = ("model",) if by is None else (by,) if isinstance(by, str) else tuple(by)
    else:
        items = experiment_items(plain.runs, plain.cells, str(plain.experiment))
        names = ("prompt_version",)
    candidates = pairs_of(items, names)
    run = JudgeRun(rater=rater, pairs=len(candidates), answers=dict.fromkeys(ANSWERS, 0))
    before = _judged(store, rater, [i.task_id for i in items])
    todo = [(a, b) for a, b in candidates if frozenset((a.task_id, b.task_id)) not in before]
    run.judged_before = len(candidates) - len(todo)
    if max_calls is not None and len(todo) > max_calls:
        run.left = len(todo) - max_calls
        todo = todo[:max_calls]
    sides = random.Random(seed)
    shown = [(b, a) if sides.random() < 0.5 else (a, b) for a, b in todo]
    if not shown:
        return run
    results: dict[str, Result] = {}
    for item in {i.task_id: i for pair in shown for i in pair}.values():
        results[item.task_id] = _result(store, item)
    tag = store.tag or plain.tag
    for index, outcome in _ask(fn, [(results[a.task_id], results[b.task_id]) for a, b in shown],
                               concurrency):
        left, right = shown[index]
        run.asked += 1
        answer = _answer(outcome)
        if answer is None:
            why = (f"{type(outcome).__name__}: {outcome}" if isinstance(outcome, BaseException)
                   else f"answered {outcome!r}, not one of {list(ANSWERS)}")
            run.failed.append((left.task_id, right.task_id, why))
            continue
        entry = rating_entry(left, right, answer, rater=rater, tag=tag)
        store.add_rating(entry)
        run.recorded += 1
        run.answers[answer] += 1
    return run


def _judged(history: History, rater: str, tasks: Sequence[str]) -> set[frozenset[str]]:
    """The pairs (as sets of two task ids) ``rater`` has a vote on among ``tasks``."""
    votes = history.ratings(user=rater)
    if votes.empty:
        return set()
    inside = votes["left_task"].isin(tasks) & votes["right_task"].isin(tasks)
    votes = votes[inside]
    return {frozenset((str(a), str(b)))
            for a, b in zip(votes["left_task"], votes["right_task"], strict=True)}


def _result(history: History, item: Item) -> Result:
    """The result of ``item`` as the history knows it, else made from its row (a table of
    one's own): its request and kept files."""
    found = history.record(item.task_id)
    if found is not None and found.paths:
        return found
    paths = item.row.get("paths")
    if isinstance(paths, str):
        try:
            paths = json.loads(paths)
        except ValueError:
            paths = [paths]
    kept = tuple(str(p) for p in paths) if isinstance(paths, list | tuple) else ()
    request: Mapping[str, Any] = {"model": item.model, "prompt": item.prompt, **item.settings}
    if found is not None:
        return found.model_copy(update={"kept": kept})
    return Result(task_id=item.task_id, status="succeeded", model=item.model,
                  request=dict(request), kept=kept)


def _answer(outcome: object) -> Answer | None:
    if isinstance(outcome, str):
        text = outcome.strip().lower()
        for answer in ANSWERS:
            if text == answer:
                return answer
    return None


def _ask(fn: JudgeFunction, pairs: Sequence[tuple[Result, Result]], concurrency: int
         ) -> Any:
    """(index, answer or exception) of each pair as the calls finish, at most
    ``concurrency`` at once, on threads (never on the caller's event loop)."""
    done: queue.Queue[tuple[int, object]] = queue.Queue()
    if inspect.iscoroutinefunction(fn):
        async def all_of() -> None:
            room = asyncio.Semaphore(concurrency)

            async def one(index: int, left: Result, right: Result) -> None:
                async with room:
                    try:
                        outcome: object = await fn(left, right)
                    except Exception as exc:  # said in JudgeRun.failed, never raised
                        outcome = exc
                done.put((index, outcome))

            await asyncio.gather(*(one(i, a, b) for i, (a, b) in enumerate(pairs)))

        worker = threading.Thread(target=asyncio.run, args=(all_of(),), name="genlab-judge",
                                  daemon=True)
        worker.start()
        for _ in pairs:
            yield done.get()
        worker.join()
        return

    def call(index: int, left: Result, right: Result) -> None:
        try:
            outcome: object = fn(left, right)
            if inspect.isawaitable(outcome):  # an object whose __call__ is async
                outcome = asyncio.run(_awaited(outcome))
        except Exception as exc:  # said in JudgeRun.failed, never raised
            outcome = exc
        done.put((index, outcome))

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="genlab-judge") as pool:
        for i, (a, b) in enumerate(pairs):
            pool.submit(call, i, a, b)
        for _ in pairs:
            yield done.get()


async def _awaited(pending: Awaitable[object]) -> object:
    return await pending
