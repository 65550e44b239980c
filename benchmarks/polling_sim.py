"""The polling benchmark's scenarios on a simulated clock: to tune the poller, not to judge it.

``bench_polling.py`` measures genlab's poller against a real emulator process, so its lags
carry the machine's scheduling noise (at time scale 0.2 a 10 ms stall reads as 50 ms of lag)
and a run takes minutes. This replays the same scenarios with no network and no sleeping: the
same task bodies, the emulator's own duration rule (``generation_seconds``, its queue), the
client's own :class:`~genlab.client._durations.DurationModel` and
:class:`~genlab.client._pacing.ForecastPacing`, and the lifecycle's loop (one query at
submission, then the pacer's delay after each answer; a finished task teaches the model at
once, which the other tasks' next forecast sees). Each query costs ``--latency`` seconds (real
service seconds). Time is in real-service seconds, as the benchmark reports lags.

Its figures are close to the benchmark's on a quiet machine, deterministic for a seed, and take
a second to compute: change a schedule parameter, run this, then confirm with the benchmark.

Run it::

    .venv/bin/python benchmarks/polling_sim.py
    .venv/bin/python benchmarks/polling_sim.py --seeds 5   # median over seeds
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_polling import (  # noqa: E402
    GRID_GOAL,
    LEARNED_GOAL,
    TEMPLATES,
    grid_bodies,
    percentile,
)
from genlab.catalog import plan_output, validate  # noqa: E402
from genlab.client._durations import DurationModel, DurationSample  # noqa: E402
from genlab.client._pacing import ForecastPacing, Pacer, Work  # noqa: E402
from genlab.emulator._tasks import TaskBook, generation_seconds  # noqa: E402


@dataclass
class _Task:
    work: Work
    submitted: float
    start: float
    end: float
    pacer: Pacer
    model: DurationModel
    task_id: str = ""
    queries: int = 0
    lag: float | None = None
    done: Callable[[_Task, float], None] | None = field(default=None, repr=False)


class Clock:
    """Every task's next query, in time order: a finished task teaches its model at once."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self._events: list[tuple[float, int, _Task]] = []
        self._n = 0

    def submit(self, body: Mapping[str, Any], at: float, model: DurationModel, *, batch: bool,
               task_id: str, done: Callable[[_Task, float], None] | None = None) -> _Task:
        request = validate({"prompt": "a scene", **body})
        seconds = generation_seconds(request, plan_output(request), task_id)
        work = Work.of_request(request)
        start = at + TaskBook.QUEUE_SECONDS
        pacing = ForecastPacing(model.predict)
        pacer = pacing.pacer(work, batch=batch)
        schedule = getattr(pacer, "schedule", None)
        if schedule is not None:  # the jitter drawn from the task id: a seed replays exactly
            schedule.rng = random.Random(task_id)
        task = _Task(work, at, start, start + seconds, pacer, model, task_id, done=done)
        self._push(at + self.latency, task)  # the query at submission
        return task

    def _push(self, at: float, task: _Task) -> None:
        self._n += 1
        heapq.heappush(self._events, (at, self._n, task))

    def run(self) -> None:
        while self._events:
            now, _, task = heapq.heappop(self._events)
            task.queries += 1
            status = ("queued" if now < task.start else "processing" if now < task.end
                      else "succeeded")
            if status == "succeeded":
                task.lag = now - task.end
                task.model.observe(DurationSample(task.work, task.end - task.submitted,
                                                  task_id=task.task_id))
                if task.done is not None:
                    task.done(task, now)
                continue
            record = SimpleNamespace(status=status)
            delay = task.pacer.next_delay(record, now - task.submitted, None)  # type: ignore[arg-type]
            self._push(now + delay + self.latency, task)


def _task_id(rng: random.Random) -> str:
    return f"task_{rng.getrandbits(48):012x}"


def _model() -> DurationModel:
    model = DurationModel()
    model.declare(1.0)  # the emulator declares its pace; here time is in real seconds
    return model


def watching(n: int, rng: random.Random, latency: float, warmup_rounds: int = 5,
             concurrency: int = 8) -> tuple[list[_Task], list[_Task]]:
    """Eight people, one task at a time each: a fresh client per task (empty history), and a
    client whose history first saw a warm-up batch (learned)."""
    bodies = [TEMPLATES[i % len(TEMPLATES)] for i in range(n)]
    learner = _model()
    clock = Clock(latency)
    warm = [TEMPLATES[i % len(TEMPLATES)] for i in range(len(TEMPLATES) * warmup_rounds)]
    _batch(clock, warm, learner, rng, concurrency=8)
    clock.run()
    empty: list[_Task] = []
    learned: list[_Task] = []
    queue = list(bodies)

    def next_one(_: _Task | None, now: float) -> None:
        if not queue:
            return
        body, task_id = queue.pop(0), _task_id(rng)  # both clients watch the same task
        empty.append(clock.submit(body, now, _model(), batch=False, task_id=task_id))
        learned.append(clock.submit(body, now, learner, batch=False, task_id=task_id,
                                    done=next_one))

    for _ in range(concurrency):
        next_one(None, 0.0)
    clock.run()
    return empty, learned


def _batch(clock: Clock, bodies: list[Mapping[str, Any]], model: DurationModel,
           rng: random.Random, concurrency: int, at: float = 0.0) -> list[_Task]:
    queue = list(bodies)
    tasks: list[_Task] = []

    def next_one(_: _Task | None, now: float) -> None:
        if queue:
            tasks.append(clock.submit(queue.pop(0), now, model, batch=True,
                                      task_id=_task_id(rng), done=next_one))

    for _ in range(concurrency):
        next_one(None, at)
    return tasks


def grid(rng: random.Random, latency: float) -> list[_Task]:
    clock = Clock(latency)
    tasks = _batch(clock, grid_bodies(), _model(), rng, concurrency=4)
    clock.run()
    return tasks


def row(name: str, tasks: list[_Task]) -> dict[str, float | str]:
    lags = [t.lag for t in tasks if t.lag is not None]
    return {"poller": name, "tasks": len(tasks),
            "req/task": sum(t.queries for t in tasks) / len(tasks),
            "p50": statistics.median(lags), "p95": percentile(lags, 95)}


def simulate(seed: int, n: int, latency: float) -> list[dict[str, float | str]]:
    rng = random.Random(seed)
    empty, learned = watching(n, rng, latency)
    return [row("empty history", empty), row("learned", learned),
            row("compare grid", grid(rng, latency))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.01,
                        help="seconds one query takes, in real-service seconds")
    args = parser.parse_args()
    runs = [simulate(seed, args.tasks, args.latency) for seed in range(args.seeds)]
    print(f"  {'scenario':<16}{'req/task':>10}{'lag p50':>10}{'lag p95':>10}   "
          f"(median of {args.seeds} seeds)")
    for i, first in enumerate(runs[0]):
        values = {k: statistics.median(float(r[i][k]) for r in runs)
                  for k in ("req/task", "p50", "p95")}
        print(f"  {first['poller']:<16}{values['req/task']:>10.2f}{values['p50']:>9.2f}s"
              f"{values['p95']:>9.2f}s")
    grids = [r[2] for r in runs]
    req = [float(g["req/task"]) for g in grids]
    p95 = [float(g["p95"]) for g in grids]
    met = sum(a <= GRID_GOAL[0] and b <= GRID_GOAL[1] for a, b in zip(req, p95, strict=True))
    print(f"  compare grid, one seed at a time: req/task {min(req):.2f}..{max(req):.2f}, "
          f"p95 {min(p95):.2f}..{max(p95):.2f} s; both goals met by {met} of {len(grids)}")
    print(f"  goals: grid <= {GRID_GOAL[0]:g} req/task at p95 <= {GRID_GOAL[1]:g} s; "
          f"learned <= {LEARNED_GOAL[0]:g} at p95 <= {LEARNED_GOAL[1]:g} s; "
          "empty history p95 <= 1 s")


if __name__ == "__main__":
    main()
