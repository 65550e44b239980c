"""Rating: the leaderboard of 100,000 votes over 20 models (goal < 2 s, from a DataFrame and
from a SQLite history, bootstrap intervals included), and choosing the next pair to show when
a session has 20 models, 50 prompts and those 100,000 votes behind it (goal < 50 ms).

Votes are simulated from known strengths, with ties, as in tests/test_leaderboard.py.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

from benchmarks._util import median_seconds, print_table, row
from genlab.history import History
from genlab.rating import Chooser, RatingSession
from genlab.report import leaderboard, vote_counts

MODELS = 20
PROMPTS = 50
VOTES = 100_000


def votes(count: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.5, 1.5, MODELS)
    left = rng.integers(0, MODELS, count)
    right = (left + rng.integers(1, MODELS, count)) % MODELS
    p = 1 / (1 + np.exp(theta[right] - theta[left]))
    tie = 0.3 * (1 - np.abs(2 * p - 1))
    u = rng.random(count)
    answer = np.where(u < p - tie / 2, "left", np.where(u < p + tie / 2, "tie", "right"))
    prompt = rng.integers(0, PROMPTS, count)
    return pd.DataFrame({
        "rating_id": [uuid.uuid4().hex for _ in range(count)],
        "rated_at": time.time() - count + np.arange(count, dtype=float),
        "answer": answer,
        "left_task": [f"t{q}-{m}" for q, m in zip(prompt, left, strict=True)],
        "right_task": [f"t{q}-{m}" for q, m in zip(prompt, right, strict=True)],
        "left_model": [f"model-{m:02d}" for m in left],
        "right_model": [f"model-{m:02d}" for m in right],
        "prompt_address": [f"p{q}" for q in prompt],
        "rater": "bench",
    })


def _store(history: History, frame: pd.DataFrame) -> None:
    columns = list(frame.columns)
    insert = sa.text(f"INSERT INTO ratings ({', '.join(columns)}) "
                     f"VALUES ({', '.join(':' + c for c in columns)})")
    with history.engine.begin() as db:
        db.execute(insert, frame.to_dict(orient="records"))


def run() -> list[dict[str, Any]]:
    frame = votes(VOTES)
    from_frame = median_seconds(lambda: leaderboard(frame), repeat=5)
    with tempfile.TemporaryDirectory() as folder:
        history = History(Path(folder) / "bench.sqlite")
        _store(history, frame)
        from_history = median_seconds(lambda: leaderboard(history, models=None), repeat=5)
        runs = pd.DataFrame({
            "task_id": [f"t{q}-{m}" for q in range(PROMPTS) for m in range(MODELS)],
            "model": [f"model-{m:02d}" for q in range(PROMPTS) for m in range(MODELS)],
            "prompt": [f"prompt {q}" for q in range(PROMPTS) for m in range(MODELS)],
            "status": "succeeded",
        })
        began = time.perf_counter()
        session = RatingSession(runs, history=history, rater="someone-else", seed=3,
                                pairs=10_000)
        opened = time.perf_counter() - began
        skip = median_seconds(session.skip, repeat=21)
        history.close()
    # The chooser alone, as the session calls it: the votes counted, every candidate open.
    codes = {f"model-{m:02d}": m for m in range(MODELS)}
    wins, ties = vote_counts(
        frame["left_model"].map(codes).to_numpy(np.intp),
        frame["right_model"].map(codes).to_numpy(np.intp),
        frame["answer"].map({"left": 1, "right": -1, "tie": 0}).to_numpy(np.int8), MODELS)
    first, second = np.triu_indices(MODELS, 1)
    first, second = np.tile(first, PROMPTS), np.tile(second, PROMPTS)
    prompts = np.repeat(np.arange(PROMPTS), MODELS * (MODELS - 1) // 2)
    chooser = Chooser(MODELS, first, second, prompts, np.random.default_rng(0))
    available = np.ones(len(first), dtype=bool)
    choose = median_seconds(lambda: chooser.next(wins, ties, available), repeat=21)
    return [
        row("leaderboard: 100,000 votes, 20 models, DataFrame", from_frame, "s", 2.0),
        row("leaderboard: 100,000 votes, 20 models, SQLite", from_history, "s", 2.0),
        row(f"next pair: the chooser, {len(first):,} candidates", choose * 1000, "ms", 50.0),
        row("next pair: session.skip(), 100,000 votes in it", skip * 1000, "ms", 50.0),
        row("opening that session (reads its votes)", opened, "s", None),
    ]


def main() -> None:
    print_table("Rating", run())


if __name__ == "__main__":
    main()
