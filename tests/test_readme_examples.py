"""Every Python example in README.md and in the site's pages runs as written, offline, against
the embedded emulator.

The README's blocks run first, then the pages' (``PAGES``: docs/index.md and the guide, in the
order the README once held them), in one namespace, as a reader typing them into one notebook
would, in a
temporary folder with no ``GENLAB_*`` settings (so ``genlab.connect()`` starts the emulator).
Each statement runs on its own, and what the README says about it is checked:

- a comment naming an error (``# 900 > task=500: CreditLimitError, nothing sent``) means the
  statement raises it; ``# InvalidParameterError: <message>`` also fixes the message;
- a comment that is a Python literal after an expression (``# 1600``) is its value.

The one address no test can reach, the team's PostgreSQL server, is replaced by a throwaway
cluster's (the block is skipped where PostgreSQL is not installed, as the history's tests are).
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import genlab._connect

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [ROOT / "docs" / page for page in (
    "index.md",
    "guide/in-a-notebook.md",
    "guide/never-pay-twice.md",
    "guide/ratings.md",
    "guide/experiments.md",
    "guide/teams.md",
)]
"""The pages with Python examples, in the order their examples build on each other."""
TEAM_URL = "postgresql://ana@db.example:5432/genlab"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_ERROR = re.compile(r"\b([A-Z][A-Za-z]*Error)\b")
TIME_SCALE = 0.02  # the embedded emulator's pace here: tests/conftest.py's


@dataclass
class Block:
    file: str
    heading: str
    line: int
    source: str


def _blocks(path: Path) -> list[Block]:
    text = path.read_text()
    found = []
    for match in _BLOCK.finditer(text):
        before = text[: match.start()]
        headings = re.findall(r"^#+ (.+)$", before, re.M)
        found.append(Block(str(path.relative_to(ROOT)), headings[-1] if headings else "top",
                           before.count("\n") + 2, match.group(1)))
    return found


BLOCKS = [block for path in (README, *PAGES) for block in _blocks(path)]


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on it."""
    return {
        token.start[0]: token.string.lstrip("#").strip()
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }


def _said(statement: ast.stmt, following: ast.stmt | None, comments: dict[int, str],
          lines: list[str]) -> str:
    """The README's comment on ``statement``: on its last line, and the comment-only lines
    after it up to the next statement."""
    last = statement.end_lineno or statement.lineno
    said = [comments[last]] if last in comments else []
    stop = following.lineno if following is not None else len(lines) + 1
    for number in range(last + 1, stop):
        if number in comments and lines[number - 1].lstrip().startswith("#"):
            said.append(comments[number])
        else:
            break
    return " ".join(said)


def _expected_value(statement: ast.stmt, said: str) -> tuple[bool, Any]:
    if not isinstance(statement, ast.Expr) or not said:
        return False, None
    try:
        return True, ast.literal_eval(said)
    except (ValueError, SyntaxError):
        return False, None


def _words(value: str) -> str:
    return " ".join(value.split())


@pytest.fixture(scope="module")
def namespace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One namespace for all blocks, run in a temporary folder with no GENLAB_* settings.

    ``genlab.connect()`` gets an embedded emulator of its own (not one an earlier test of the
    process started) at the other tests' pace (``TIME_SCALE``) instead of a person's (0.1): the
    examples and what they show are the same, only the simulated processing time is shorter.
    """
    folder = tmp_path_factory.mktemp("readme")
    saved_env = {k: v for k, v in os.environ.items() if k.startswith("GENLAB_")}
    for name in saved_env:
        del os.environ[name]
    before = Path.cwd()
    os.chdir(folder)
    scope: dict[str, Any] = {"__name__": "__readme__"}
    earlier = genlab._connect._embedded
    start = genlab._connect.embedded_emulator
    genlab._connect._embedded = None
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(genlab._connect, "embedded_emulator",
                          lambda time_scale=0.1: start(TIME_SCALE))
            yield scope
    finally:
        client = scope.get("client")
        if client is not None and hasattr(client, "close"):
            client.close()
        ours = genlab._connect._embedded
        genlab._connect._embedded = earlier
        if ours is not None:
            ours.stop()
        os.chdir(before)
        os.environ.update(saved_env)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.file}:{b.line}" for b in BLOCKS])
def test_the_readme_example_runs_as_written(
    block: Block, namespace: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    source = block.source
    if TEAM_URL in source:
        source = source.replace(TEAM_URL, request.getfixturevalue("postgres_url"))
    tree = ast.parse(source)
    comments = _comments(source)
    lines = source.splitlines()
    body = tree.body
    for i, statement in enumerate(body):
        said = _said(statement, body[i + 1] if i + 1 < len(body) else None, comments, lines)
        where = f"{block.file} line {block.line + statement.lineno - 1}"
        shown = ast.get_source_segment(source, statement)
        error = _ERROR.search(said)
        expects_value, value = _expected_value(statement, said)
        code = compile(ast.Module([statement], type_ignores=[]), where, "exec")
        if expects_value:
            code = compile(ast.Expression(statement.value), where, "eval")  # type: ignore[attr-defined]
        try:
            with redirect_stdout(io.StringIO()):
                result = eval(code, namespace)  # noqa: S307 - the README's own examples
        except Exception as exc:
            if error is None:
                raise AssertionError(f"{where}: {shown!r} raised {exc!r}") from exc
            assert type(exc).__name__ == error.group(1), f"{where}: {exc!r}"
            told = said.split(f"{error.group(1)}:", 1)
            if said.startswith(f"{error.group(1)}:"):
                assert _words(told[1]) in _words(str(exc)), f"{where}: {exc}"
            continue
        assert error is None, f"{where}: {shown!r} should raise {error.group(1)}, as it says"
        if expects_value:
            assert result == value, f"{where}: {shown!r} is {result!r}, the README says {value!r}"


def test_every_python_block_is_checked() -> None:
    """The examples this test runs are the README's and every page's: none is missed by the
    pattern, and no page with a Python example is left out of ``PAGES``."""
    pages = [README, *(ROOT / "docs").rglob("*.md")]
    with_python = {page for page in pages if "```python" in page.read_text()}
    # docs/judges.md's judge calls a vision endpoint: tests/test_judge.py runs it against a
    # fake one of its own.
    assert with_python - {ROOT / "docs" / "judges.md"} == {README, *PAGES}
    fences = sum(re.findall(r"^```(\w*)$", page.read_text(), re.M).count("python")
                 for page in with_python - {ROOT / "docs" / "judges.md"})
    assert fences == len(BLOCKS) >= 7
