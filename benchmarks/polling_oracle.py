"""The best any poller could do on the benchmark's tasks: a bound to read goals against.

The emulator draws each task's duration uniformly within +-25 % of its request's base time
(plus a fixed queue). An *oracle* poller knows each task's band exactly (not the draw). Below a
target lag ``L`` for 95 % of tasks, it sweeps the band every ``L`` from where it opens; a task
stops costing queries the moment it is seen done, so a sweep costs about ``width / (2 L)``
queries on average. It may also *give up* on 5 % of the tasks' finishes (p95 ignores them):
the cheapest to give up are the earliest finishes of the widest bands (skipping the start of a
band saves queries for every task that finishes after it). Both bounds are printed: a poller
that never gives up on a task cannot beat the first; no poller at all can beat the second.
HTTP round trips are ignored (they only add lag), and so is the query at submission that every
poller in the benchmark makes (add 1 to compare with their figures).

Example:
    >>> band = [(10.0, 20.0)]
    >>> round(oracle_requests(band, lag=1.0, give_up=0.0), 2)  # about width / (2 L)
    5.5
    >>> oracle_lag(band, requests=5.5, give_up=0.0) <= 1.0 + 1e-3
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genlab.catalog import plan_output, validate
from genlab.emulator._tasks import TaskBook, generation_seconds

Band = tuple[float, float]


def band_of(body: Mapping[str, Any], draws: int = 2000) -> Band:
    """The seconds (time scale 1, queue included) a task of ``body`` may take on the emulator:
    the extremes of its generation time over many task ids."""
    request = validate(dict(body))
    plan = plan_output(request)
    times = [generation_seconds(request, plan, f"task_{i:08x}") for i in range(draws)]
    return TaskBook.QUEUE_SECONDS + min(times), TaskBook.QUEUE_SECONDS + max(times)


def _sweep(band: Band, lag: float, skipped: float) -> float:
    """Expected queries sweeping ``band`` every ``lag``, its first ``skipped`` fraction given up."""
    low, high = band
    width = high - low
    t, queries = low + skipped * width + lag, 1.0  # the first query is always made
    while t < high:
        queries += (high - t) / width  # the next one only if the task is still running at t
        t += lag
    return queries


def oracle_requests(bands: Sequence[Band], lag: float, give_up: float = 0.05,
                    step: float = 0.01) -> float:
    """Fewest queries per task for which 95 % of finishes are seen within ``lag``."""
    skipped = [0.0] * len(bands)
    cost = [_sweep(b, lag, 0.0) for b in bands]
    budget = give_up * len(bands)
    while budget > 1e-9:  # give up where it saves the most queries, a step at a time
        gains = [
            (cost[i] - _sweep(b, lag, skipped[i] + step), i)
            for i, b in enumerate(bands) if skipped[i] + step <= 1.0 + 1e-9
        ]
        if not gains:
            break
        _, best = max(gains)
        skipped[best] += step
        cost[best] = _sweep(bands[best], lag, skipped[best])
        budget -= step
    return sum(cost) / len(bands)


def oracle_lag(bands: Sequence[Band], requests: float, give_up: float = 0.05) -> float:
    """The lowest p95 lag reachable with ``requests`` queries per task (bisection on lag)."""
    low, high = 1e-3, 60.0
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if oracle_requests(bands, middle, give_up) > requests else (
            low, middle)
    return high
