"""Running a grid: money first, then bounded concurrency behind a progress bar."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

from genlab._errors import (
    APIError,
    SubmissionUncertainError,
    TaskTimeoutError,
)
from genlab.catalog import CATALOG
from genlab.client import (
    AsyncClient,
    Client,
    Labels,
    Outcome,
    ReusedRecord,
    TaskRecord,
    VideoResult,
)
from genlab.client.journal import cap_refusal
from genlab.comparison._plan import Run, plan
from genlab.comparison._result import Comparison
from genlab.grid import run_cells
from genlab.history import History
from genlab.media import Result
from genlab.report import MAX_FETCH_BYTES


def _check_history(client: Client, history: History | None) -> None:
    if history is not None and history is not client.history:
        raise ValueError(
            "history= must be the history the client records into; create the client with "
            "genlab.Client(history=history), or leave history= out"
        )


def compare(
    client: Client,
    prompts: str | Iterable[str],
    models: str | Iterable[str],
    params: Mapping[str, Any] | None = None,
    repeats: int = 1,
    *,
    concurrency: int = 4,
    timeout: float | None = None,
    max_credits: int | None = None,
    history: History | None = None,
    tag: str | None = None,
    download_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    quiet: bool = False,
    reuse: bool | None = None,
    on_update: Callable[[TaskRecord], object] | None = None,
) -> Comparison:
    """Run every prompt on every model with every swept parameter, side by side.

    Every run is validated before anything is sent; invalid ones are reported in their cell
    and cost nothing. The estimated credits are printed first, and nothing is sent when they
    exceed ``max_credits``. Failures of single runs never stop the others.

    Args:
        client: a :class:`genlab.Client`.
        prompts: one prompt or several.
        models: model names from ``genlab.CATALOG``.
        params: request fields; a list value is swept (``{"duration": [5, 10]}``), other
            values apply to every run. Each applies only to models that have the field.
        repeats: runs per combination (to see variance).
        concurrency: tasks in flight at once.
        timeout: seconds each task may take before it is reported as ``timeout``.
        max_credits: refuse to start when the estimate is higher.
        history: the client's :class:`genlab.History`, to tag the runs in (optional; the
            client's own history is used when it is one).
        tag: a tag for these submissions in the history, e.g. ``"kites-v2"``.
        download_dir: also save every result there (and record the paths in the history).
        progress: show a progress bar (notebook or terminal).
        quiet: do not print the cost line (it stays in ``Comparison.money_line``); for
            widgets and worker threads, which must not print.
        reuse: fill cells from earlier results of the same request at zero credits
            (``True``), never (``False``), or for seeded requests (``None``); see
            :meth:`genlab.Client.submit`.
        on_update: called with each run's record at every status change (on the client's
            runner thread: keep it short, e.g. assign a widget's value).

    Returns:
        A :class:`Comparison`.

    Raises:
        CreditLimitError: the estimate exceeds ``max_credits``, or the grid would cross the
            client's :class:`~genlab.client.Budget` (checked as a whole); nothing was sent.
        ValueError: the grid itself is wrong (see :func:`plan`).

    Example:
        cmp = genlab.compare(client, ["a fox"], ["video-a", "video-f"],
                             {"duration": [4, 8]}, max_credits=2_000, tag="fox")

        A grid over ``max_credits`` is refused before anything is sent:

        >>> import genlab
        >>> client = genlab.connect("http://localhost:1", "key", history=False, keep=False)
        >>> try:  # priced before anything is sent
        ...     genlab.compare(client, prompts=["a fox"], models=["video-a"],
        ...                    params={"duration": [10, 20]}, max_credits=1000)
        ... except genlab.CreditLimitError as error:
        ...     print(error.estimate)
        2 runs: 4,800 credits estimated
        4800
        >>> client.close()
    """
    if isinstance(client, AsyncClient):
        raise TypeError("compare() runs blocking; pass a genlab.Client, not an AsyncClient")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    grid = plan(prompts, models, params, repeats)
    _check_history(client, history)
    if not quiet:
        print(grid.money_line)  # money first: called from a cell, so stdout is the reader's
    valid = [r for r in grid.runs if r.request is not None]
    refusal = cap_refusal([(r.model, r.credits) for r in valid], max_credits=max_credits,
                    batch=True, named=grid.money_line)
    if refusal is not None:
        raise refusal.error()
    client.check_budget([r.request for r in valid if r.request is not None])
    outcomes: list[Outcome] = []
    if valid:
        # The tag travels on each submission (a memory journal keeps none; Comparison.df
        # still has it).
        outcomes = run_cells(
            client, [r.request for r in valid if r.request is not None],
            labels=Labels(tag=tag) if tag is not None else None, concurrency=concurrency,
            timeout=timeout, reuse=reuse, progress=progress, desc="compare", unit="run",
            on_update=on_update,
        ).outcomes
    saved = _download(client, outcomes, download_dir, concurrency) if download_dir else {}
    by_run = {id(run): i for i, run in enumerate(valid)}
    rows, records = [], []
    for number, run in enumerate(grid.runs):
        i = by_run.get(id(run))
        outcome = outcomes[i] if i is not None else None
        rows.append(_row(number, run, outcome, saved.get(i) if i is not None else None, tag))
        records.append(outcome.record if outcome is not None else None)
    fetch = functools.partial(client.fetch_media, max_bytes=MAX_FETCH_BYTES)
    journal = client.history if isinstance(client.history, History) else None
    return Comparison(_frame(rows, grid.params), grid=grid, records=records, tag=tag, fetch=fetch,
                      history=journal)


def _download(
    client: Client,
    outcomes: Sequence[Outcome],
    directory: str | os.PathLike[str],
    workers: int,
) -> dict[int, list[str] | str]:
    targets = [(i, o.record) for i, o in enumerate(outcomes) if o.ok and o.record is not None]
    if not targets:
        return {}
    saved: dict[int, list[str] | str] = {}
    with ThreadPoolExecutor(max(1, min(workers, len(targets)))) as pool:
        futures = {i: pool.submit(client.download, record, directory) for i, record in targets}
    for i, future in futures.items():
        try:
            saved[i] = [str(p) for p in future.result()]
        except Exception as exc:  # shown in the run's row; the gallery falls back to the URL
            saved[i] = f"download failed: {exc}"
    return saved


def _status(outcome: Outcome) -> tuple[str, str | None]:
    record, error = outcome.record, outcome.error
    if outcome.ok:
        return "succeeded", None
    if record is not None and record.failed:
        return "failed", str(record.error) if record.error else "failed; no reason given"
    if isinstance(error, TaskTimeoutError):
        return "timeout", str(error)
    if isinstance(error, SubmissionUncertainError):
        return "uncertain", str(error)
    if isinstance(error, APIError):
        return "refused", str(error)
    if error is not None:
        return "error", f"{type(error).__name__}: {error}"
    return record.status if record is not None else "unknown", None


def _row(
    number: int, run: Run, outcome: Outcome | None, saved: list[str] | str | None, tag: str | None
) -> dict[str, Any]:
    status, error = ("invalid", run.invalid) if outcome is None else _status(outcome)
    record = outcome.record if outcome is not None else None
    first = record.results[0] if record is not None and record.results else None
    video = first if isinstance(first, VideoResult) else None
    result = record if isinstance(record, Result) else None
    if isinstance(saved, str):
        error = f"{error}; {saved}" if error else saved
    return {
        "run": number,
        "prompt": run.prompt,
        "model": run.model,
        "kind": CATALOG[run.model].KIND,
        **run.values,
        "repeat": run.repeat,
        "status": status,
        "error": error,
        "mode": run.request.mode.value if run.request is not None else None,
        "task_id": outcome.task_id if outcome is not None else None,
        "credits": run.credits,
        "seconds": record.seconds if record is not None else None,
        "result_url": first.url if first is not None else None,
        "cover_url": video.cover_url if video is not None else None,
        "width": first.width if first is not None else None,
        "height": first.height if first is not None else None,
        "media_seconds": video.duration if video is not None else None,
        # Saved by download_dir, else kept by the client when the task succeeded.
        "paths": saved if isinstance(saved, list) else (
            list(record.kept) if record is not None and record.kept else None),
        "tag": tag,
        "reused": isinstance(record, ReusedRecord),  # an earlier result: nothing was paid
        # Whether the kept media measured as asked (None: not kept, or not measured).
        "as_asked": result.as_asked if result is not None else None,
        "mismatches": "; ".join(result.mismatches) or None if result is not None else None,
    }


_DTYPES: dict[str, Any] = {
    "run": "int64",
    "repeat": "int64",
    "credits": "Int64",
    "seconds": "Float64",
    "width": "Int64",
    "height": "Int64",
    "media_seconds": "Float64",
    "reused": "boolean",
    "as_asked": "boolean",
}
_TEXT = ("prompt", "model", "kind", "status", "error", "mode", "task_id", "result_url",
         "cover_url", "tag", "mismatches")


def _frame(rows: list[dict[str, Any]], params: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(rows[0]) if rows else None)
    for name, dtype in _DTYPES.items():
        df[name] = df[name].astype(dtype)
    for name in _TEXT:
        df[name] = df[name].astype("string")
    for name in params:
        # Proper dtypes where the values allow (Int64 durations, string resolutions); lists
        # and mixed values stay objects.
        df[name] = pd.Series(list(df[name]), index=df.index, dtype=object).convert_dtypes()
    return df
