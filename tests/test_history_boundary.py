"""The history keeps its schema: no SQL on its tables outside ``genlab.history``.

Other packages ask the history through named methods (``History.tasks``, ``History.scores``,
...). This check reads every module of ``src/genlab`` outside ``genlab/history/`` and fails,
naming file and line, where a string names one of the history's tables after ``FROM``,
``JOIN``, ``INTO``, ``UPDATE`` or ``TABLE``, or where a module imports SQLAlchemy (a query
built with it is SQL on the tables too). The table names come from the history's own metadata,
so a new table is covered the day it is declared.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import genlab
from genlab.history._schema import METADATA

SRC = Path(__file__).resolve().parent.parent / "src" / "genlab"
OWNER = "history"  # the one package under src/genlab that may speak SQL
TABLES = sorted({*METADATA.tables, "alembic_version"})  # and Alembic's own bookkeeping
SQL = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+[\"'`\[]?(" + "|".join(map(re.escape, TABLES))
    + r")\b",
    re.IGNORECASE,
)


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal (docstrings and the text parts of f-strings too), with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _imports_sqlalchemy(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(n == "sqlalchemy" or n.startswith("sqlalchemy.") for n in names):
            yield node.lineno


def sql_outside_history(root: Path, allowed: dict[str, str] | None = None) -> list[str]:
    """``file:line: what`` for each SQL text on the history's tables, and each SQLAlchemy
    import, in the modules under ``root`` outside ``root/history``."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name.split("/")[0] == OWNER or name in (allowed or {}):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, text in _strings(tree):
            for match in SQL.finditer(text):
                at = line + text.count("\n", 0, match.start())
                found.append((name, at, f"SQL on the history's table {match.group(1)!r}: "
                                        f"{match.group(0)!r}"))
        found += [(name, line, "imports sqlalchemy") for line in _imports_sqlalchemy(tree)]
    return [f"{name}:{line}: {what}" for name, line, what in sorted(found)]


def test_no_sql_on_the_history_tables_outside_genlab_history() -> None:
    found = sql_outside_history(SRC, {})
    assert not found, (
        "genlab.history owns its tables: ask it through a History method (History.tasks(...), "
        "or add one there) instead of SQL:\n" + "\n".join(found))


def test_the_tables_come_from_the_history_itself() -> None:
    assert {"tasks", "events", "ratings", "scores", "experiment_cells"} <= set(TABLES)


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A package tree with SQL where it does not belong, and prose that only looks like it."""
    root = tmp_path / "genlab"
    (root / "history").mkdir(parents=True)
    (root / "report").mkdir()
    (root / "history" / "_store.py").write_text('SQL = "SELECT * FROM tasks"\n')
    (root / "report" / "_board.py").write_text(
        '"""Leaderboards, learned from finished tasks and from the ratings of people."""\n'
        "\n"
        "def models(history, names):\n"
        '    marks = ", ".join("?" * len(names))\n'
        '    return history.query(f"SELECT DISTINCT model FROM Tasks WHERE model IN "\n'
        '                         f"({marks})", names)\n'
        "\n"
        "def votes(history):\n"
        '    return history.query("""select *\n'
        '        from `ratings` join scores using (task_id)""")\n'
    )
    (root / "report" / "_core.py").write_text("from sqlalchemy import select\n")
    (root / "report" / "_words.py").write_text(
        'NOTE = "runs are read from the history, updated by the client, joined per cell"\n')
    return root


def test_the_check_finds_sql_planted_outside_the_history(planted: Path) -> None:
    found = sql_outside_history(planted)
    assert [f.split(": ")[0] for f in found] == [
        "report/_board.py:5", "report/_board.py:10", "report/_board.py:10",
        "report/_core.py:1",
    ]
    assert "'Tasks'" in found[0] and "'ratings'" in found[1] and "'scores'" in found[2]


def test_an_allowed_file_is_left_out_and_only_it(planted: Path) -> None:
    found = sql_outside_history(planted, {"report/_board.py": "pending"})
    assert [f.split(": ")[0] for f in found] == ["report/_core.py:1"]


# --- what other packages ask instead: History.tasks -------------------------------------


def _rows(count: int) -> list[dict[str, object]]:
    return [
        {"entry_id": f"e{i}", "task_id": f"t{i}", "model": ("image-b", "video-a")[i % 2],
         "kind": ("image", "video")[i % 2], "state": "accepted",
         "status": "succeeded" if i % 3 else "failed", "tag": f"tag{i % 4}",
         "request": "{}", "submitted_at": 1.8e9 + i, "created_at": 1.8e9 + i,
         "completed_at": 1.8e9 + i + 7.5, "address": f"a{i}"}
        for i in range(count)
    ]


@pytest.fixture
def history(tmp_path: Path) -> Iterator[genlab.History]:
    made = genlab.History(tmp_path / "history.sqlite")
    made.append_many(_rows(1203))
    yield made
    made.close()


def test_tasks_by_id_any_number_oldest_first(history: genlab.History) -> None:
    """More ids than one statement takes: every one is found once, in submission order,
    whatever order they were asked in; an unknown id is simply not there."""
    asked = [f"t{i}" for i in range(1202, -1, -2)] + ["t4", "no-such-task"]
    found = history.tasks(asked, columns=["task_id", "status", "total_seconds"])
    assert found["task_id"].tolist() == [f"t{i}" for i in range(0, 1203, 2)]
    assert found["total_seconds"].tolist() == [7.5] * len(found)  # derived, as in df()
    assert list(found.columns) == ["task_id", "status", "total_seconds"]
    assert history.tasks("t7", columns=["address"])["address"].tolist() == ["a7"]
    assert history.tasks([], columns=["task_id"]).empty


def test_tasks_are_rows_of_df_with_its_dtypes(history: genlab.History) -> None:
    whole = history.df(tag="tag1")
    some = history.tasks(tag="tag1")
    assert list(some.columns) == list(whole.columns)
    assert (some.dtypes == whole.dtypes).all() and some["task_id"].equals(whole["task_id"])
    narrowed = history.tasks([f"t{i}" for i in range(12)], tag="tag1", status="succeeded")
    assert narrowed["task_id"].tolist() == ["t1", "t5"]  # t9: failed


def test_tasks_of_an_experiment_are_those_answering_its_cells(history: genlab.History) -> None:
    cell = {"prompt_name": "kite", "prompt_version": 1, "variables": {}, "model": "image-b"}
    history.plan_cells("kites", [{**cell, "cell": "c1"}, {**cell, "cell": "c2"},
                                 {**cell, "cell": "c3"}])
    history.cell_task("kites", "c1", "t8")
    history.cell_task("kites", "c2", "t3")  # c3 not sent yet
    history.plan_cells("owls", [{**cell, "cell": "c1", "task_id": "t5"}])
    assert history.tasks(experiment="kites", columns=["task_id"])["task_id"].tolist() == [
        "t3", "t8"]
    assert history.tasks(experiment="nothing-of-that-name").empty


def test_distinct_rows_and_bookkeeping_columns(history: genlab.History) -> None:
    models = history.tasks(columns=["model"], distinct=True, status="failed")
    assert models["model"].tolist() == ["image-b", "video-a"]
    pairs = history.tasks([f"t{i}" for i in range(1203)], columns=["model", "kind"],
                          distinct=True)
    assert sorted(map(tuple, pairs.values.tolist())) == [("image-b", "image"),
                                                         ("video-a", "video")]
    assert history.tasks("t1", columns=["request", "updated_at"])["request"].tolist() == ["{}"]


def test_an_unknown_column_lists_the_history_s_columns(history: genlab.History) -> None:
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['stauts'\]; the history's "
                                         r"columns are task_id, model, kind"):
        history.tasks(columns=["task_id", "stauts"])
    with pytest.raises(ValueError, match="name one column at least"):
        history.tasks(columns=[])
    with pytest.raises(TypeError, match="unknown filter"):
        history.tasks(modle="video-a")  # type: ignore[call-arg]
