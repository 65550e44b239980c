"""An experiment's outcome, read from the history: one row per cell, a grid, a comparison of
two prompt versions, a one-file report.

Everything is read back from the history (the cells, their tasks, the kept media's facts and
the scores), so an experiment opened in a new process shows the same as the run that made it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from genlab.experiments._plan import Cell
from genlab.experiments._prompt import Prompt, PromptDiff, prompt
from genlab.history import DisplayFrame, History

if TYPE_CHECKING:
    import pandas as pd

    from genlab.experiments._verdict import Verdict
    from genlab.report import ReportFile

Columns = Literal["prompt", "prompt_version", "model"]

FACT_COLUMNS: tuple[str, ...] = (
    "media_width", "media_height", "media_duration", "media_fps", "media_frames",
    "video_codec", "audio_codec", "has_audio", "media_bytes", "as_asked", "mismatches",
)
"""The measured facts of each cell's kept media, as the history keeps them."""

_DTYPES: dict[str, Any] = {
    "experiment": "string", "prompt_name": "string", "prompt_version": "Int64",
    "prompt": "string", "model": "string", "seed": "Int64", "task_id": "string",
    "status": "string", "error": "string", "credits": "Int64", "seconds": "Float64",
    "media_width": "Int64", "media_height": "Int64", "media_duration": "Float64",
    "media_fps": "Float64", "media_frames": "Int64", "video_codec": "string",
    "audio_codec": "string", "has_audio": "boolean", "media_bytes": "Int64",
    "as_asked": "boolean", "mismatches": "string",
}
_READ = ("task_id", "status", "state", "credits", "total_seconds", "error_message", "paths",
         *FACT_COLUMNS)


class Experiment:
    """What :func:`genlab.experiment` ran (or continued), read from the history.

    Attributes:
        name: the experiment's name (its tag in the history).
        history: where it lives.
        cells: every planned cell, invalid ones included.
        scorers: the scorers' names (columns of :attr:`df`).
        money_line: what the run said before sending anything.

    Example:
        >>> import os, tempfile
        >>> from genlab.experiments import plan_cells, prompt
        >>> history = History(os.path.join(tempfile.mkdtemp(), "h.sqlite"))
        >>> kite = prompt("A {subject} at dusk", name="kite", history=history)
        >>> cells = plan_cells([kite], ["image-d", "image-b"], {"subject": ["kite", "owl"]},
        ...                    {}, [1])
        >>> exp = Experiment("kites", history, cells)
        >>> exp.models, exp.variables, exp.df["status"].tolist()
        (['image-d', 'image-b'], ['subject'], ['not sent', 'not sent', 'not sent', 'not sent'])
        >>> history.close()
    """

    def __init__(
        self, name: str, history: History, cells: Sequence[Cell], scorers: Sequence[str] = (),
        *, errors: Mapping[str, str] | None = None, money_line: str = "",
        uncertain: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.history = history
        self.cells = list(cells)
        self.scorers = list(scorers)
        self.errors = dict(errors or {})
        self.money_line = money_line
        self._uncertain = set(uncertain)
        self._frame: pd.DataFrame | None = None
        self._paths: dict[str, list[str]] = {}

    # --- what it holds -----------------------------------------------------------------

    @property
    def versions(self) -> list[Prompt]:
        """The prompt versions, in the order given."""
        return list(dict.fromkeys(c.prompt for c in self.cells))

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(c.model for c in self.cells))

    @property
    def variables(self) -> list[str]:
        """The variables' names (a column of :attr:`df` each)."""
        return list(dict.fromkeys(k for c in self.cells for k in c.variables))

    @property
    def params(self) -> list[str]:
        """The swept request parameters' names (a column of :attr:`df` each)."""
        return list(dict.fromkeys(k for c in self.cells for k in c.params))

    @property
    def invalid(self) -> list[tuple[Cell, str]]:
        """The cells the catalog refused (never sent), with its message."""
        return [(c, c.invalid) for c in self.cells if c.invalid is not None]

    def refresh(self) -> Experiment:
        """Read the cells' tasks and scores from the history again (``df`` caches them)."""
        self._frame = None
        return self

    def task_ids(self, status: str | None = None) -> list[str]:
        """The cells' task ids (of those with this ``status``), in cell order."""
        frame = self.df
        if status is not None:
            frame = frame[frame["status"] == status]
        return [str(t) for t in frame["task_id"].dropna()]

    @property
    def df(self) -> pd.DataFrame:
        """One row per cell: ``experiment``, ``prompt_name``, ``prompt_version``, ``prompt``
        (the filled text), one column per variable and per swept parameter, ``model``,
        ``seed``, ``task_id``, ``status`` (``invalid`` for a refused cell, with the catalog's
        message in ``error``), ``error``, ``credits``, ``seconds``, the media facts and one
        column per scorer."""
        if self._frame is None:
            self._frame = self._read()
        return self._frame

    def _read(self) -> pd.DataFrame:
        import pandas as pd

        assigned = self.history.cell_tasks(self.name)
        ids = [t for t in assigned.values() if t]
        found = self.history.tasks(experiment=self.name, columns=_READ)
        plain = found.astype(object).where(found.notna(), None)  # missing values as None
        tasks: dict[str, Mapping[Any, Any]] = {
            str(row["task_id"]): row for row in plain.to_dict("records")}
        scores = self.history.scores(ids)
        variables, params = self.variables, self.params  # once: each walks every cell
        rows = []
        self._paths = {}
        for cell in self.cells:
            task_id = assigned.get(cell.key) if cell.request is not None else None
            task = tasks.get(task_id) if task_id else None
            line: dict[str, Any] = {
                "experiment": self.name, "prompt_name": cell.prompt.name,
                "prompt_version": cell.prompt.version, "prompt": cell.text,
                **{v: cell.variables.get(v) for v in variables},
                **{p: cell.params.get(p) for p in params},
                "model": cell.model, "seed": cell.seed, "task_id": task_id,
                "status": "uncertain" if task is None and cell.key in self._uncertain
                else _status(cell, task, self.errors.get(cell.key)),
                "error": cell.invalid or (task or {}).get("error_message")
                or self.errors.get(cell.key),
                "credits": (task or {}).get("credits", cell.credits),
                "seconds": _seconds(task),
                **{f: (task or {}).get(f) for f in FACT_COLUMNS},
                **{s: scores.get(task_id or "", {}).get(s) for s in self.scorers},
            }
            rows.append(line)
            if task is not None and task.get("paths"):
                try:
                    self._paths[str(task_id)] = [str(p) for p in json.loads(task["paths"])]
                except (TypeError, ValueError):
                    pass
        columns = ["experiment", "prompt_name", "prompt_version", "prompt", *variables,
                   *params, "model", "seed", "task_id", "status", "error", "credits",
                   "seconds", *FACT_COLUMNS, *self.scorers]
        frame = pd.DataFrame(rows, columns=columns)
        for column, dtype in _DTYPES.items():
            frame[column] = frame[column].astype(dtype)
        for column in self.scorers:
            frame[column] = frame[column].astype("Float64")
        for column in [*variables, *params]:
            frame[column] = pd.Series(list(frame[column]), index=frame.index,
                                      dtype=object).convert_dtypes()
        return DisplayFrame(frame)

    def paths(self, task_id: str) -> list[str]:
        """The files kept of a cell's task."""
        self.df  # noqa: B018  # reads them
        return self._paths.get(task_id, [])

    # --- seeing it -----------------------------------------------------------------------

    def version(self, ref: Prompt | int | str) -> Prompt:
        """One of this experiment's versions: a Prompt, a number (``2``, ``"2"``, ``"v2"``),
        ``"kite@2"``, an alias (``"best"``, ``"kite@best"``).

        Raises:
            LookupError: no version of this experiment answers to ``ref``.
        """
        versions = self.versions
        if isinstance(ref, Prompt):
            found = [v for v in versions if v == ref]
        else:
            text = str(ref).strip()
            name, _, at = text.rpartition("@")
            names = {v.name for v in versions} if not name else {name}
            at = at[1:] if at[:1] in "vV" and at[1:].isdigit() else at
            found = []
            for each in sorted(names):
                try:
                    wanted = prompt(f"{each}@{at}", history=self.history)
                except LookupError:
                    continue
                found += [v for v in versions if v == wanted]
        if len(found) != 1:
            shown = ", ".join(v.ref for v in versions)
            why = "matches several" if found else "matches none"
            raise LookupError(f"{ref!r} {why} of this experiment's versions ({shown})")
        return found[0]

    def show(self, columns: Columns = "prompt", *, page: int = 1) -> Any:
        """The grid: a row per set of variables, a column per prompt version (the word diff
        of each version against the column before it above it) or per model
        (``columns="model"``); in each cell the seeds side by side as thumbnails (a video
        its poster until played), and a row's videos play, pause and seek together. A large
        grid shows a page of rows at a time (48 cells at most), with a note naming the
        next page; :meth:`to_html` writes them all.

        Example:
            exp.show(columns="model")
            exp.show(page=2)
        """
        from genlab.display import HTML
        from genlab.experiments._view import grid_html

        return HTML(grid_html(self, "model" if columns == "model" else "prompt", page=page))

    def _repr_html_(self) -> str:
        from genlab.experiments._view import grid_html

        return grid_html(self, "prompt", page=1)

    def __repr__(self) -> str:
        counts = self.df["status"].value_counts()
        told = ", ".join(f"{n} {s}" for s, n in counts.items())
        return f"Experiment({self.name!r}: {len(self.cells)} cells; {told})"

    def diffs(self) -> list[PromptDiff]:
        """Each version's word diff against the one before it (in the order given)."""
        versions = self.versions
        return [b.diff(a) for a, b in zip(versions, versions[1:], strict=False)]

    def compare(self, baseline: Prompt | int | str, candidate: Prompt | int | str
                ) -> pd.DataFrame:
        """The candidate version against the baseline, per model and set of variables: what
        changed in the text, how many cells succeeded, the change in seconds and in each
        score (the mean over seeds of candidate minus baseline, seed by seed), and how much
        the seeds disagree about it (``spread``: the largest minus the smallest per-seed
        difference). Rows where the seeds disagree most come first. A DataFrame of these
        numbers; a notebook shows it as a table that fits the output, the prompt's change
        highlighted and each score's baseline, candidate and change side by side.

        Example:
            exp.compare("kite@1", "best")
        """
        from genlab.experiments._view import compare_frame

        return compare_frame(self, self.version(baseline), self.version(candidate))

    def leaderboard(self, **options: Any) -> Any:
        """Rank the prompt versions by people's votes between this experiment's results:
        ``genlab.leaderboard(history, by="prompt_version", experiment=name)``, scores with
        intervals as models are ranked. ``options`` are the leaderboard's (``level``,
        ``rounds``, ``seed``, filters).

        Example:
            genlab.rate(exp)        # blind pairs: one model, variables and seed, two versions
            exp.leaderboard()       # after some votes
        """
        from genlab.report import leaderboard

        board = leaderboard(self.history, by="prompt_version", experiment=self.name,
                            **options)
        if not board.votes:  # what to do next, rather than an empty table
            board.notes = (*board.notes, "genlab.rate(exp) shows blind pairs of the versions "
                           f"of {self.name!r} (one model, variables and seed, two "
                           "versions) to vote on; exp.leaderboard() ranks them once there "
                           "are votes")
        return board

    def verdict(self, baseline: Prompt | int | str, candidate: Prompt | int | str,
                metric: str = "votes", alpha: float = 0.05, *,
                raters: str | Sequence[str] | None = None,
                higher_is_better: bool | None = None) -> Verdict:
        """Is ``candidate`` better than ``baseline``, and how sure: a :class:`Verdict`
        (``.outcome`` ``"better"``, ``"worse"`` or ``"undecided"``, ``.effect``,
        ``.interval``, ``.n``), from cells paired by model, variables and seed.

        ``metric="votes"`` reads people's blind votes (``genlab.rate(exp)``; ``raters=``
        ``"judges"`` or names for others'): a sign test on the paired cells the votes decide.
        ``metric=`` a scorer's name: the median change of that score over paired cells with
        its interval. ``alpha``: the chance, on two versions that are alike, of a verdict
        other than undecided (at most). See :mod:`genlab.experiments._verdict`.

        Example:
            exp.verdict("kite@1", "kite@2")              # people's votes
            exp.verdict("kite@1", "kite@2", metric="sharpness")
        """
        from genlab.experiments._verdict import verdict_in

        def ref(given: Prompt | int | str) -> tuple[str, int] | str:
            return (given.name, given.version) if isinstance(given, Prompt) else str(given)

        # Resolved among the cells the history holds, as ``genlab gate`` does.
        return verdict_in(self.history, self.name, ref(baseline), ref(candidate),
                          metric=metric, alpha=alpha, raters=raters,
                          higher_is_better=higher_is_better)

    def to_html(self, path: str | os.PathLike[str], *, columns: Columns = "prompt"
                ) -> ReportFile:
        """Write the experiment as one HTML file (the whole grid with diffs, its media as
        thumbnails loaded lazily, the versions' score summary and every cell), loading
        nothing from elsewhere. Returns where it went, as :meth:`Comparison.to_html` does
        (a notebook shows it as a link to the file).

        Example:
            exp.to_html("kite-study.html")
        """
        from genlab.experiments._view import page_html
        from genlab.report import ReportFile

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)  # as a comparison's to_html does
        target.write_text(page_html(self, "model" if columns == "model" else "prompt",
                                    page_folder=target.parent), encoding="utf-8")
        return ReportFile(target)


def _status(cell: Cell, task: Mapping[str, Any] | None, error: str | None) -> str:
    if cell.request is None:
        return "invalid"
    if task is None:
        return "error" if error else "not sent"
    if task.get("status"):
        return str(task["status"])
    return str(task.get("state") or "unknown")


def _seconds(task: Mapping[str, Any] | None) -> float | None:
    seconds = (task or {}).get("total_seconds")
    return None if seconds is None else float(seconds)
