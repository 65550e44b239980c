"""`genlab history migrate` loses nothing: an experiment made on a laptop (its prompt versions
and aliases, cells, tasks, scores and votes) arrives whole in a new SQLite file or in PostgreSQL,
reads back the same there, and a second migration doubles nothing. A prompt the destination
already numbers differently is merged by its text, and every table of the schema has a rule."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import genlab
from genlab import emulator
from genlab.experiments import Experiment, prompt
from genlab.history import Copied, History, RatingEntry, copy_history
from genlab.history._copy import RULES
from genlab.history._schema import METADATA, TASKS
from genlab.media import Result

KEY = "migrate-key-8d2f"
STUDY = "kite-study"
IMAGE = {"model": "image-d", "prompt": "a lone kite", "resolution": "512"}
LEASES = ("lease_owner", "lease_until")  # a process of the laptop's: never copied


def words(result: Result) -> float:
    """A scorer: the filled prompt's length in words."""
    return float(len((result.prompt or "").split()))


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


def _client(server: emulator.EmulatorHandle, history: History, media: Path) -> genlab.Client:
    return genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                         wait_timeout=120, keep=media)


def _open_study(client: genlab.Client) -> Experiment:
    """The study as a person opens it again: the same call, references by version and alias."""
    return genlab.experiment(
        client, STUDY, prompts=["kite@1", "kite@best"], models=["image-d"],
        vars={"subject": ["paper kite", "box kite"], "place": "dunes"},
        params={"resolution": "512"}, seeds=[1, 2], scorers=[words], quiet=True,
        progress=False,
    )


@pytest.fixture(scope="module")
def laptop(server: emulator.EmulatorHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A laptop's history: a scored experiment over two prompt versions (aliased), people's
    votes between its results (one taken back), and a result reused."""
    folder = tmp_path_factory.mktemp("laptop")
    history = History(folder / "history.sqlite")
    with _client(server, history, folder / "media") as client:
        kite = prompt("A {subject} over {place} at dusk", name="kite", history=history)
        kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
        kite2.alias("best")
        kite.alias("first")
        prompt("An {animal} at night", name="owl", history=history)  # in no experiment
        df = _open_study(client).df
        assert (df["status"] == "succeeded").all() and df["words"].notna().all()
        new = df[df["prompt_version"] == 2]
        old = df[df["prompt_version"] == 1]
        for left, right in zip(new["task_id"], old["task_id"], strict=True):
            history.add_rating(RatingEntry(left, right, "left", left_model="image-d",
                                           right_model="image-d", prompt_address="kite",
                                           left_settings={"resolution": "512"}, rater="ana"))
        taken_back = history.add_rating(RatingEntry(
            str(old["task_id"].iloc[0]), str(new["task_id"].iloc[0]), "left",
            left_model="image-d", right_model="image-d", prompt_address="kite", rater="ben"))
        assert history.undo_rating(taken_back)
        client.generate(IMAGE, progress=False)
        client.generate(IMAGE, progress=False, reuse=True)  # the kept result: a reuse note
    assert len(history.ratings()) == 4 and not history.spend().empty
    history.close()
    return folder / "history.sqlite"


def _migrate(source: Path, destination: str) -> str:
    """``genlab history migrate SRC DST`` as a person runs it: the installed command."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("genlab")), "history", "migrate", str(source),
         destination], capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _contents(location: str | Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the schema, row by row (in a stable order), leases left out."""
    history = History(location)
    try:
        tables = {}
        for table in METADATA.sorted_tables:
            names = [c.name for c in table.columns if table is not TASKS or c.name not in LEASES]
            rows = history.query(f"SELECT * FROM {table.name}")
            tables[table.name] = sorted((tuple(r[n] for n in names) for r in rows), key=repr)
        return tables
    finally:
        history.close()


def test_an_experiment_migrates_whole_and_once(
    laptop: Path, history_location: str, server: emulator.EmulatorHandle, tmp_path: Path
) -> None:
    before = _contents(laptop)
    assert all(before.values()), [t for t, rows in before.items() if not rows]  # none empty
    said = _migrate(laptop, history_location)
    assert said.startswith("copied 9 submission(s) with ")  # 8 cells, and one image reused
    assert "1 reuse note(s); 5 rating(s); 2 prompt(s) with 3 version(s) and 2 alias(es); " \
        "8 experiment cell(s); 8 score(s). 0 submission(s) already there" in said
    assert _contents(history_location) == before  # every row of every table, leases aside

    source, team = History(laptop), History(history_location)
    try:
        billed = len(server.ledger())
        with _client(server, source, tmp_path / "a") as a, \
                _client(server, team, tmp_path / "b") as b:
            here, there = _open_study(a), _open_study(b)
            pd.testing.assert_frame_equal(there.df, here.df)
        assert len(server.ledger()) == billed  # nothing was sent again, nothing scored again
        assert there.money_line == "8 cells: 8 done earlier, nothing to send"
        pd.testing.assert_frame_equal(team.prompts(), source.prompts())
        pd.testing.assert_frame_equal(team.ratings(), source.ratings())
        ids = here.task_ids()
        assert team.scores(ids) == source.scores(ids) and len(team.scores(ids)) == 8
        assert team.experiments() == source.experiments() == [STUDY]
        pd.testing.assert_frame_equal(team.spend(), source.spend())  # the reuse note came
    finally:
        source.close()
        team.close()
    assert _contents(history_location) == before  # opening the study there added nothing

    again = _migrate(laptop, history_location)
    assert "copied 0 submission(s) with 0 status event(s) and 0 reuse note(s); 0 rating(s); " \
        "0 prompt(s) with 0 version(s) and 0 alias(es); 0 experiment cell(s); 0 score(s). " \
        "9 submission(s) already there" in again
    assert _contents(history_location) == before  # nothing doubled


def test_a_prompt_the_destination_numbers_otherwise_is_merged_by_its_text(
    tmp_path: Path, history_location: str
) -> None:
    laptop = History(tmp_path / "laptop.sqlite")
    laptop.save_prompt("kite", "A kite at dusk")
    laptop.save_prompt("kite", "A kite at dawn")
    laptop.set_prompt_alias("kite", "best", 2)
    laptop.set_prompt_alias("kite", "mine", 1)
    laptop.plan_cells("study", [
        {"cell": f"c{v}", "prompt_name": "kite", "prompt_version": v, "variables": {},
         "model": "image-d", "seed": 1, "address": f"a{v}"} for v in (1, 2)])
    laptop.close()
    team = History(history_location)  # a colleague's kite: its 1 is another text
    team.save_prompt("kite", "A colleague's kite")
    team.save_prompt("kite", "A kite at dusk")  # ... and its 2 is the laptop's 1
    team.set_prompt_alias("kite", "mine", 1)
    team.close()

    copied = copy_history(tmp_path / "laptop.sqlite", history_location)
    assert (copied.prompts, copied.prompt_versions, copied.prompt_aliases,
            copied.experiment_cells) == (0, 1, 1, 2)
    team = History(history_location)
    try:
        versions = team.prompts()[["version", "parent", "template", "aliases"]]
        assert versions.values.tolist() == [
            [1, pd.NA, "A colleague's kite", "mine"],  # the colleague's alias stays theirs
            [2, 1, "A kite at dusk", ""],
            [3, 2, "A kite at dawn", "best"],  # the laptop's 2, its parent the laptop's 1
        ]
        cells = {c["cell"]: c["prompt_version"] for c in team.experiment_cells("study")}
        assert cells == {"c1": 2, "c2": 3}  # the versions as this history numbers them
    finally:
        team.close()
    assert copy_history(tmp_path / "laptop.sqlite", history_location) == Copied()


def test_every_table_of_the_schema_has_a_copy_rule() -> None:
    ruled = [rule.table.name for rule in RULES]
    missing = sorted(set(METADATA.tables) - set(ruled))
    assert not missing, f"copy_history has no rule for {missing}: add one to RULES in " \
        "genlab/history/_copy.py (or one saying why the table is not copied)"
    assert sorted(ruled) == sorted(METADATA.tables)  # one rule each
    counted = {f.name for f in dataclasses.fields(Copied)}
    rule_of = {rule.table: rule for rule in RULES}
    for rule in RULES:
        assert rule.how.strip(), rule.table.name
        assert all(k in rule.table.c for k in rule.key), rule.table.name
        if rule.copy is None and rule.part_of is None:
            continue  # not copied: ``how`` says why
        assert rule.table.name in counted, f"Copied has no count of {rule.table.name}"
        if rule.part_of is None:
            assert rule.key, f"{rule.table.name}: a table copied by itself needs a key"
        else:
            assert rule_of[rule.part_of].copy is not None, rule.table.name
