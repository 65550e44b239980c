"""Ratings are data: votes kept in the history's own table, on SQLite and on PostgreSQL, read
back with df()'s filters, taken back without losing a row, copied by `history migrate`, and
never lost when several processes rate into one database at once."""

from __future__ import annotations

import json
import select
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from genlab.history import ANSWERS, RATING_COLUMNS, History, RatingEntry, copy_history


def _vote(left: str, right: str, answer: str = "left", **extra: object) -> RatingEntry:
    return RatingEntry(
        left, right, answer,  # type: ignore[arg-type]
        left_model=str(extra.pop("left_model", "image-b")),
        right_model=str(extra.pop("right_model", "image-d")),
        prompt_address=str(extra.pop("prompt_address", "addr-kite")),
        prompt="a kite", **extra,  # type: ignore[arg-type]
    )


def test_a_vote_is_kept_with_both_sides_and_who_rated(history_location: str) -> None:
    history = History(history_location, project="sweeps")
    history.add_rating(_vote("t1", "t2", "right", left_settings={"duration": 4},
                             right_settings={"duration": 4}, rater="ana"))
    history.close()
    again = History(history_location)  # another process, later
    votes = again.ratings()
    assert list(votes.columns) == list(RATING_COLUMNS)
    row = votes.iloc[0]
    assert (row["left_task"], row["right_task"], row["answer"]) == ("t1", "t2", "right")
    assert (row["left_model"], row["right_model"], row["winner"]) == ("image-b", "image-d",
                                                                      "image-d")
    assert row["rater"] == "ana" and row["project"] == "sweeps"
    assert row["prompt_address"] == "addr-kite"
    assert json.loads(row["left_settings"]) == {"duration": 4}
    assert str(votes["rated_at"].dtype) == "datetime64[ns, UTC]"
    assert abs(row["rated_at"].timestamp() - time.time()) < 60
    again.close()


def test_ratings_take_the_filters_of_df(history_location: str) -> None:
    history = History(history_location)
    history.append_many([
        {"entry_id": f"e{i}", "task_id": f"t{i}", "model": m, "kind": "image",
         "state": "accepted", "status": s, "request": "{}", "submitted_at": 1.0}
        for i, (m, s) in enumerate([("image-b", "succeeded"), ("image-d", "succeeded"),
                                    ("image-c", "succeeded"), ("image-a", "failed")])
    ])
    history.add_rating(_vote("t0", "t1", rater="ana", rated_at=1_700_000_000, tag="kites"))
    history.add_rating(_vote("t1", "t2", "tie", left_model="image-d",
                             right_model="image-c", rater="ben", rated_at=1_800_000_000))
    history.add_rating(_vote("t2", "t3", "both bad", left_model="image-c",
                             right_model="image-a", rater="ben", rated_at=1_800_000_100))
    assert len(history.ratings(model="image-d")) == 2  # either side
    assert history.ratings(model="image-a")["answer"].tolist() == ["both bad"]
    assert history.ratings(user="ana")["rater"].tolist() == ["ana"]
    assert history.ratings(tag="kites")["left_task"].tolist() == ["t0"]
    assert len(history.ratings(since=datetime(2025, 1, 1, tzinfo=UTC))) == 2
    assert len(history.ratings(until="2025-01-01T00:00:00+00:00")) == 1
    assert len(history.ratings(status="succeeded")) == 2  # t3 failed
    assert len(history.ratings(tasks=["t0", "t1", "t2"])) == 2
    with pytest.raises(TypeError, match="unknown filter"):
        history.ratings(answer="tie")  # type: ignore[call-arg]
    assert history.ratings()["winner"].isna().tolist() == [False, True, True]
    history.close()


def test_an_undo_hides_the_vote_and_keeps_its_row(history_location: str) -> None:
    history = History(history_location)
    kept = history.add_rating(_vote("t1", "t2"))
    taken = history.add_rating(_vote("t3", "t4", "right"))
    assert history.undo_rating(taken) is True
    assert history.undo_rating(taken) is False  # already taken back
    assert history.undo_rating("no-such-vote") is False
    assert history.ratings()["rating_id"].tolist() == [kept]
    rows = history.query("SELECT rating_id, undone_at FROM ratings ORDER BY rated_at")
    assert [r["rating_id"] for r in rows] == [kept, taken] and rows[1]["undone_at"] is not None
    history.close()


def test_a_vote_must_be_one_of_the_answers_between_two_tasks() -> None:
    assert ANSWERS == ("left", "right", "tie", "both bad")
    with pytest.raises(ValueError, match="answer must be one of"):
        _vote("t1", "t2", "better")
    with pytest.raises(ValueError, match="against itself"):
        _vote("t1", "t1")


def test_an_older_history_gains_the_ratings_table_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    History(path).close()
    with sqlite3.connect(path) as db:  # as genlab left it at schema 0002
        db.execute("DROP TABLE ratings")
        db.execute("UPDATE alembic_version SET version_num = '0002'")
        db.execute("INSERT INTO tasks (task_id, model, kind, state, request, entry_id, "
                   "submitted_at, updated_at) VALUES ('t-old', 'video-a', 'video', "
                   "'accepted', '{}', 'e-old', 1, 1)")
    history = History(path)
    assert history.df()["task_id"].tolist() == ["t-old"]
    history.add_rating(_vote("t-old", "t-new"))
    assert len(history.ratings()) == 1
    history.close()


def test_history_migrate_copies_the_votes_once(tmp_path: Path, postgres_url: str) -> None:
    local = History(tmp_path / "laptop.sqlite")
    for i in range(3):
        local.add_rating(_vote(f"t{i}", f"u{i}"))
    local.close()
    first = copy_history(tmp_path / "laptop.sqlite", postgres_url)
    again = copy_history(tmp_path / "laptop.sqlite", postgres_url)
    assert (first.ratings, again.ratings) == (3, 0)
    team = History(postgres_url)
    assert sorted(team.ratings()["left_task"]) == ["t0", "t1", "t2"]
    team.close()


_RATER = textwrap.dedent("""
    import sys
    import pandas as pd
    from genlab.history import History
    from genlab.rating import RatingSession

    location, rater = sys.argv[1], sys.argv[2]
    history = History(location)
    runs = pd.DataFrame({
        "task_id": [f"t{p}-{m}" for p in range(6) for m in range(4)],
        "model": [f"model-{m}" for p in range(6) for m in range(4)],
        "prompt": [f"prompt {p}" for p in range(6) for m in range(4)],
        "status": "succeeded",
    })
    session = RatingSession(runs, history=history, rater=rater, seed=len(rater), pairs=36)
    print("ready", flush=True)
    sys.stdin.readline()  # both begin together: when both are ready
    answers = 0
    while session.current is not None:
        session.answer(["left", "right", "tie", "both bad"][answers % 4])
        answers += 1
    print(answers)
""")


def test_two_processes_rating_at_once_lose_no_vote(postgres_url: str) -> None:
    History(postgres_url).close()  # the schema first, so neither process creates it
    workers = [
        subprocess.Popen([sys.executable, "-c", _RATER, postgres_url, name],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for name in ("ana", "ben")
    ]
    for worker in workers:
        assert worker.stdout is not None
        assert select.select([worker.stdout], [], [], 180)[0], "a rater never got ready"
        ready = worker.stdout.readline()
        assert ready == "ready\n", ready + (worker.stderr.read() if worker.stderr else "")
    for worker in workers:  # go
        assert worker.stdin is not None
        worker.stdin.write("\n")
        worker.stdin.flush()
    answered = []
    for worker in workers:
        out, err = worker.communicate(timeout=180)
        assert worker.returncode == 0, err
        answered.append(int(out.strip().splitlines()[-1]))
    assert answered == [36, 36]  # 6 prompts x 6 pairs of 4 models, each rater all of them
    history = History(postgres_url)
    votes = history.ratings()
    history.close()
    assert len(votes) == 72
    per_rater = votes.groupby("rater").apply(
        lambda v: len(set(zip(v["left_task"], v["right_task"], strict=True))),
        include_groups=False,
    )
    assert per_rater.to_dict() == {"ana": 36, "ben": 36}  # every vote, no pair twice
    assert isinstance(votes, pd.DataFrame)


def test_a_history_leaderboard_lists_models_with_results_but_no_votes(
    history_location: str,
) -> None:
    from genlab.report import leaderboard

    history = History(history_location)
    history.append_many([
        {"entry_id": f"e{i}", "task_id": f"t{i}", "model": m, "kind": "image",
         "state": "accepted", "status": "succeeded", "request": "{}", "submitted_at": 1.0}
        for i, m in enumerate(["image-b", "image-d", "image-c"])
    ])
    history.add_rating(_vote("t0", "t1", "right"))
    board = leaderboard(history)
    assert board.df["status"].to_dict() == {"image-d": "ranked", "image-b": "ranked",
                                            "image-c": "unrated"}
    assert leaderboard(history, model=["image-b", "image-d"]).df.index.tolist() == [
        "image-d", "image-b"]
    history.close()
