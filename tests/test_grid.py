"""One grid for comparisons and experiments, as a user sees it: the same ``params`` mean the
same requests in ``genlab.compare`` and ``genlab.experiment``, experiments run at once on one
history each label only their own tasks, a cell's task is recorded as the task is accepted,
and the client never imports IPython (live output is genlab.display's)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import genlab
from genlab import emulator
from genlab.experiments import prompt
from genlab.history import History

KEY = "grid-key-2b7d"


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    h = History(tmp_path / "history.sqlite")
    yield h
    h.close()


@pytest.fixture
def client(server: emulator.EmulatorHandle, history: History,
           tmp_path: Path) -> Iterator[genlab.Client]:
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                       wait_timeout=120, keep=tmp_path / "media") as c:
        yield c


def test_the_same_params_make_the_same_requests_in_compare_and_experiment(
    client: genlab.Client, history: History
) -> None:
    params = {"duration": [2, 3], "resolution": "480P"}
    cmp = genlab.compare(client, ["a kite"], ["video-a", "image-b"], params=params,
                         progress=False, quiet=True)
    kite = prompt("a kite", name="plain-kite", history=history)
    exp = genlab.experiment(client, "same-grid", [kite], ["video-a", "image-b"],
                            params=params, seeds=[None], progress=False, quiet=True)
    from_compare = [run.request for run in cmp.runs]
    from_experiment = [cell.request for cell in exp.cells]
    # A list sweeps in both: two video cells (2 s and 3 s at 480P), and one image cell (the
    # image model has no duration; its resolution 480P is not one it takes, in both).
    assert [r.to_body() if r else None for r in from_compare] == \
        [r.to_body() if r else None for r in from_experiment]
    assert [r.model_dump() if r else None for r in from_compare] == \
        [r.model_dump() if r else None for r in from_experiment]
    assert [(r.model, r.values["duration"]) for r in cmp.runs] == \
        [("video-a", 2), ("video-a", 3), ("image-b", None)]
    assert [None if v is pd.NA else v for v in exp.df["duration"]] == [2, 3, None]
    videos = exp.df[exp.df["model"] == "video-a"]
    assert list(videos["status"]) == ["succeeded", "succeeded"]  # no "must be an integer"
    assert list(cmp.df["status"]) == list(exp.df["status"])


def test_experiments_started_at_once_on_one_history_each_label_their_own_tasks(
    client: genlab.Client, history: History
) -> None:
    started = threading.Barrier(2)
    made: dict[str, genlab.Experiment] = {}
    failed: list[BaseException] = []
    kite = prompt("A {colour} kite", name="kite", history=history)

    def one(name: str, colours: list[str]) -> None:
        try:
            started.wait(timeout=30)
            made[name] = genlab.experiment(client, name, [kite], ["image-b", "image-d"],
                                           vars={"colour": colours}, seeds=[1, 2],
                                           progress=False, quiet=True)
        except BaseException as exc:  # shown by the assertion below
            failed.append(exc)

    threads = [threading.Thread(target=one, args=("reds", ["red", "crimson"])),
               threading.Thread(target=one, args=("blues", ["blue", "navy", "teal"]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failed, failed
    rows = history.df()
    tag_of = dict(zip(rows["task_id"], rows["tag"], strict=True))
    for name, colours in (("reds", ["red", "crimson"]), ("blues", ["blue", "navy", "teal"])):
        df = made[name].df
        assert len(df) == len(colours) * 2 * 2
        assert set(df["status"]) == {"succeeded"}
        assert set(df["colour"]) == set(colours)  # only its own cells
        # Each task's prompt is one of its own colours, and its history row has its tag.
        own = {f"A {c} kite" for c in colours}
        assert set(df["prompt"]) == own
        assert {tag_of[t] for t in df["task_id"]} == {name}
    reds, blues = set(made["reds"].df["task_id"]), set(made["blues"].df["task_id"])
    assert not reds & blues
    assert set(rows["tag"].dropna()) == {"reds", "blues"}
    assert len(rows) == len(reds) + len(blues)


def test_history_tag_still_tags_submissions_that_carry_none(
    client: genlab.Client, history: History
) -> None:
    history.tag = "by-hand"
    try:
        task = client.submit(model="image-b", prompt="a kite")
        client.wait(task, progress=False)
        labelled = client.submit(model="image-b", prompt="an owl",
                                 labels=genlab.client.Labels(tag="its-own"))
        client.wait(labelled, progress=False)
    finally:
        history.tag = None
    tags = dict(zip(history.df()["task_id"], history.df()["tag"], strict=True))
    assert tags[task.task_id] == "by-hand"
    assert tags[labelled.task_id] == "its-own"  # what travels on the submission wins


def test_a_cells_task_is_recorded_by_the_journal_with_the_submission(
    client: genlab.Client, history: History
) -> None:
    from genlab.grid import run_cells

    kite = prompt("A {colour} kite", name="kite", history=history)
    cells = genlab.experiments.plan_cells([kite], ["image-b", "image-d"],
                                          {"colour": ["red", "blue"]})
    history.plan_cells("watched", [c.row() for c in cells])
    # The runner writes nothing to the history itself: the cell -> task rows come from the
    # journal's step that records each task's acceptance, from the labels the submission
    # carried.
    ran = run_cells(client, [c.request for c in cells if c.request is not None],
                    progress=False, labels=[genlab.client.Labels(
                        tag="watched", experiment="watched", cell=c.key) for c in cells])
    recorded = {c["cell"]: c["task_id"] for c in history.experiment_cells("watched")}
    assert recorded == {c.key: o.task_id for c, o in zip(cells, ran.outcomes, strict=True)}
    assert all(o.ok for o in ran.outcomes)


def test_a_sweep_of_an_empty_list_says_what_to_give(client: genlab.Client,
                                                    history: History) -> None:
    kite = prompt("a kite", name="k", history=history)
    with pytest.raises(ValueError, match=r"params\['duration'\] is an empty list"):
        genlab.experiment(client, "empty", [kite], ["video-a"], params={"duration": []},
                          progress=False, quiet=True)
    with pytest.raises(ValueError, match=r"params\['duration'\] is an empty list"):
        genlab.compare(client, ["a kite"], ["video-a"], params={"duration": []},
                       progress=False, quiet=True)


def test_importing_the_client_loads_no_ipython_and_no_progress_bar() -> None:
    # A script using the client pays for no notebook machinery; live output is
    # genlab.display's, drawn only in a kernel.
    code = ("import sys, genlab.client; "
            "print(sorted(m for m in ('IPython', 'tqdm', 'ipykernel') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
