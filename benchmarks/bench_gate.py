"""The gate's false-alarm rate: on 1,000 simulated A/A experiments (two prompt versions people
cannot tell apart), how often ``exp.verdict`` says anything but "undecided", and how often
``genlab gate`` would fail the build ("worse"). Goal: at most 5 % at ``alpha=0.05``.

Each simulated experiment has 24 paired cells (2 models x 3 sets of variables x 4 seeds) and
three raters voting on each pair, sides at random: "left" and "right" 40 % each, "tie" 15 %,
"both bad" 5 %, whichever version is shown where. The scorer rows give both versions' cells
the same noisy score (a normal with a per-cell offset, and ties: a score rounded to 0.1).
For reference, the last row is the power: the share called "better" when people prefer the
candidate 70 % of the decisive times.

The verdicts are computed by :func:`genlab.experiments.verdict_of`, the function
``exp.verdict`` and ``genlab gate`` call once they have read the cells and the votes.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from benchmarks._util import row
from genlab.experiments import verdict_of

EXPERIMENTS = 1000
GOAL = 0.05
ALPHA = 0.05
MODELS, VARIABLES, SEEDS, RATERS = 2, 3, 4, 3


def _cells() -> list[dict[str, Any]]:
    return [{"prompt_name": "kite", "prompt_version": v, "model": f"m{m}",
             "variables": {"subject": s}, "seed": seed, "task_id": f"t{v}-{m}-{s}-{seed}"}
            for v in (1, 2) for m in range(MODELS) for s in range(VARIABLES)
            for seed in range(SEEDS)]


def _places() -> list[tuple[str, str]]:
    return [(f"t1-{m}-{s}-{seed}", f"t2-{m}-{s}-{seed}") for m in range(MODELS)
            for s in range(VARIABLES) for seed in range(SEEDS)]


def _votes(rng: np.random.Generator, prefer: float) -> list[tuple[str, str, str]]:
    """Three raters on every pair: decisive 80 % of the time, for the candidate with
    probability ``prefer``; tie 15 %, both bad 5 %; sides at random."""
    votes = []
    for old, new in _places():
        for _ in range(RATERS):
            u = rng.random()
            flip = rng.random() < 0.5
            left, right = (new, old) if flip else (old, new)
            if u < 0.15:
                answer = "tie"
            elif u < 0.20:
                answer = "both bad"
            else:
                for_new = rng.random() < prefer
                answer = "left" if (left == new) == for_new else "right"
            votes.append((left, right, answer))
    return votes


def _scores(rng: np.random.Generator) -> dict[str, dict[str, float | None]]:
    scores: dict[str, dict[str, float | None]] = {}
    for old, new in _places():
        base = rng.normal(10, 3)
        for task in (old, new):
            scores[task] = {"sharpness": round(float(base + rng.normal(0, 1)), 1)}
    return scores


def _rates(outcomes: list[str]) -> tuple[float, float]:
    alarms = sum(1 for o in outcomes if o != "undecided") / len(outcomes)
    worse = sum(1 for o in outcomes if o == "worse") / len(outcomes)
    return alarms, worse


def run() -> list[dict[str, Any]]:
    cells = _cells()
    rng = np.random.default_rng(40)
    start = time.perf_counter()
    by_votes = [verdict_of(cells, ("kite", 1), ("kite", 2), alpha=ALPHA,
                           votes=_votes(rng, 0.5)).outcome for _ in range(EXPERIMENTS)]
    seconds = (time.perf_counter() - start) / EXPERIMENTS
    by_score = [verdict_of(cells, ("kite", 1), ("kite", 2), metric="sharpness", alpha=ALPHA,
                           scores=_scores(rng)).outcome for _ in range(EXPERIMENTS)]
    power = [verdict_of(cells, ("kite", 1), ("kite", 2), alpha=ALPHA,
                        votes=_votes(rng, 0.7)).outcome for _ in range(EXPERIMENTS)]
    alarms, worse = _rates(by_votes)
    score_alarms, score_worse = _rates(by_score)
    return [
        row("votes, A/A: not undecided (false alarm)", 100 * alarms, "%", 100 * GOAL),
        row("votes, A/A: 'worse' (the gate fails the build)", 100 * worse, "%", 100 * GOAL),
        row("scores, A/A: not undecided (false alarm)", 100 * score_alarms, "%", 100 * GOAL),
        row("scores, A/A: 'worse' (the gate fails the build)", 100 * score_worse, "%",
            100 * GOAL),
        row("one verdict of 72 votes on 24 paired cells", 1000 * seconds, "ms", None),
        row("power: 'better' when people prefer it 70 %", 100 * power.count("better")
            / len(power), "%", None, lower_is_better=False),
    ]


if __name__ == "__main__":
    from benchmarks._util import print_table

    print_table(f"The gate on {EXPERIMENTS:,} simulated experiments (alpha {ALPHA})", run())
