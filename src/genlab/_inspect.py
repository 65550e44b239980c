"""``genlab.inspect(path)``: what made a kept file, read from the file itself, and its history row.

The provenance is read from inside the file (see :mod:`genlab.media`), never from its name or
folder, so it is found after the file was renamed, copied elsewhere or sent to someone. A file
that carries none (a format without provenance, or one kept before genlab wrote it) falls back
to the JSON sidecar beside it, and says so. A file genlab did not make gets an answer saying
that, not an exception.

The history row is looked up by task id: in the history given, else in the default one
(``$GENLAB_HISTORY``, else ``.genlab/history.sqlite``) when it exists; none is ever created.

Example:
    >>> import pathlib, tempfile
    >>> from genlab import media
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> mp4 = b"\\x00\\x00\\x00\\x10ftypisom\\x00\\x00\\x02\\x00"  # a real one has moov, mdat
    >>> facts = media.provenance_for({"model": "video-a", "prompt": "a fox"}, task_id="t1")
    >>> _ = (folder / "renamed.mp4").write_bytes(media.stamp(mp4, facts))
    >>> found = inspect(folder / "renamed.mp4", history=folder / "none.sqlite")
    >>> found.model, found.task_id, found.source, found.history_row
    ('video-a', 't1', 'file', None)
    >>> _ = (folder / "notes.txt").write_text("not media")
    >>> inspect(folder / "notes.txt").found
    False
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from genlab import display
from genlab.media import is_remote, media_name, read_provenance

if TYPE_CHECKING:
    from genlab.history import History

HISTORY_ENV = "GENLAB_HISTORY"
_NOT_SETTINGS = frozenset({"model", "prompt"})
_PART = re.compile(r"_(cover|last_frame|\d+)$")


@dataclass(frozen=True)
class Inspection:
    """What :func:`inspect` found about a file; a notebook shows it as a card.

    Attributes:
        path: the file looked at.
        provenance: the provenance object (schema ``provenance["genlab"]``), or None when
            neither the file nor a sidecar says what made it.
        source: ``"file"`` (read from inside the file), ``"sidecar"`` (the JSON beside it),
            or None.
        history_row: the task's row of the history (``History.df()``'s columns), or None.
        history: where the row was looked for, or None when no history was looked at.
        notes: what was looked at and what was not found, in words.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
        >>> _ = path.write_text("not a generated file")
        >>> found = inspect(path)
        >>> found.provenance, found.source
        (None, None)
    """

    path: str
    provenance: dict[str, Any] | None
    source: Literal["file", "sidecar"] | None = None
    history_row: dict[str, Any] | None = None
    history: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def found(self) -> bool:
        """True when something says what made the file."""
        return self.provenance is not None

    def _get(self, key: str) -> Any:
        return (self.provenance or {}).get(key)

    @property
    def model(self) -> str | None:
        return self._get("model")  # type: ignore[no-any-return]

    @property
    def prompt(self) -> str | None:
        return self._get("prompt")  # type: ignore[no-any-return]

    @property
    def task_id(self) -> str | None:
        return self._get("task_id")  # type: ignore[no-any-return]

    @property
    def seed(self) -> int | None:
        return self._get("seed")  # type: ignore[no-any-return]

    @property
    def address(self) -> str | None:
        """The request's content address."""
        return self._get("address")  # type: ignore[no-any-return]

    @property
    def version(self) -> str | None:
        """The genlab version that kept the file."""
        return self._get("version")  # type: ignore[no-any-return]

    @property
    def request(self) -> dict[str, Any]:
        """The request, every field with its defaults (data URIs as digests)."""
        body = self._get("request")
        return dict(body) if isinstance(body, dict) else {}

    @property
    def settings(self) -> dict[str, Any]:
        """The request without its model and prompt."""
        return {k: v for k, v in self.request.items() if k not in _NOT_SETTINGS}

    @property
    def when(self) -> str | None:
        """When the task completed, else when the file was kept (ISO 8601, UTC)."""
        return self._get("completed_at") or self._get("kept_at")  # type: ignore[no-any-return]

    def __str__(self) -> str:
        name = media_name(self.path)
        if not self.found:
            return "\n".join([f"{name}: no genlab provenance", *self.notes])
        facts = " · ".join(self._facts())
        lines = [f"{name}: {self.model} · {facts}"]
        if self.prompt:
            lines.append(f"prompt: {self.prompt}")
        if self.settings:
            shown = ", ".join(
                f"{k}={_shown(v) or display.EMPTY}" for k, v in self.settings.items()
            )
            lines.append(f"settings: {shown}")
        return "\n".join([*lines, *self.notes])

    def __repr__(self) -> str:
        if not self.found:
            return f"Inspection({self.path!r}, no genlab provenance)"
        row = "history row" if self.history_row else "no history row"
        return (
            f"Inspection({self.path!r}, model={self.model!r}, task_id={self.task_id!r}, "
            f"source={self.source!r}, {row})"
        )

    def _facts(self) -> list[str]:
        facts = [f"task {self.task_id}"]
        if self._get("completed_at"):
            facts.append(f"completed {self._get('completed_at')}")
        elif self._get("kept_at"):
            facts.append(f"kept {self._get('kept_at')}")
        if self.seed is not None:
            facts.append(f"seed {self.seed}")
        if self.version:
            facts.append(f"genlab {self.version}")
        row = self.history_row or {}
        if row.get("credits") is not None:
            facts.append(f"{row['credits']} credits")
        return facts

    def _repr_html_(self) -> str:
        name = media_name(self.path)
        notes = display.text(" ".join(self.notes), display.MUTED, tag="div", size="85%")
        if not self.found:
            page = display.card(name, "no provenance", [], " ".join(self.notes), name="inspect")
            return f"<div class='genlab-inspect-file'>{page}</div>"
        status = (self.history_row or {}).get("status") or "kept"
        page = display.card(
            self.model, str(status), [name, *self._facts()], self.prompt or "", name="inspect"
        )
        rows = [{"setting": k, "value": _shown(v) or None} for k, v in self.settings.items()]
        settings = display.table({"setting": "setting", "value": "value"}, rows,
                                 wrapped={"value"}, empty="No settings.")
        return f"<div class='genlab-inspect-file'>{page}{settings}{notes}</div>"


def inspect(
    path: str | os.PathLike[str],
    history: History | str | os.PathLike[str] | None = None,
    *,
    storage_options: dict[str, Any] | None = None,
) -> Inspection:
    """What made a kept file: its provenance, read from the file itself, and its history row.

    Args:
        path: the file: a local path (renamed or copied anywhere) or a storage URL.
        history: a :class:`genlab.History`, or its location; None looks in the default one
            (``$GENLAB_HISTORY``, else ``.genlab/history.sqlite``) if it exists.
        storage_options: for a storage URL, passed to fsspec as they are.

    Returns:
        An :class:`Inspection`; ``.found`` is False for a file genlab did not make.

    Raises:
        OSError: the file cannot be read (it does not exist, ...).

    Example:
        found = genlab.inspect("~/Downloads/kite.png")
        found                       # a card: model, prompt, settings, task, when, version
        found.request, found.history_row["credits"]

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "photo.png"
        >>> _ = path.write_bytes(b"not made by genlab")
        >>> print(inspect(path).notes[0][:59])
        No genlab provenance: the file was not kept by genlab, or a
    """
    shown = str(path)
    where: str | Path = shown if is_remote(shown) else Path(path).expanduser()
    facts = read_provenance(where, storage_options=storage_options)
    notes: list[str] = []
    source: Literal["file", "sidecar"] | None = "file" if facts else None
    if facts is None and isinstance(where, Path):
        sidecar = _sidecar(where)
        if sidecar is not None:
            facts, source = sidecar[1], "sidecar"
            notes.append(
                f"The file carries no provenance; read from the sidecar {sidecar[0].name} "
                "beside it (a renamed or moved file loses it)."
            )
    if facts is None:
        notes.append(
            "No genlab provenance: the file was not kept by genlab, or a program that "
            "re-encoded it dropped its metadata."
        )
        return Inspection(shown, None, notes=tuple(notes))
    if isinstance(facts.get("genlab"), int) and facts["genlab"] > 1:
        notes.append(f"Written by a newer genlab (schema {facts['genlab']}); known fields shown.")
    row, looked, said = _history_row(str(facts.get("task_id") or ""), history)
    notes += said
    return Inspection(shown, facts, source, row, looked, tuple(notes))


def _sidecar(path: Path) -> tuple[Path, dict[str, Any]] | None:
    """The ``<task_id>.json`` that lists this file, beside it (``t1_0.png``, ``t1_cover.jpg``
    and ``t1.mp4`` all belong to ``t1.json``)."""
    stems, stem = [path.stem], path.stem
    while _PART.search(stem):
        stem = _PART.sub("", stem)
        stems.append(stem)
    for name in dict.fromkeys(stems):
        candidate = path.with_name(f"{name}.json")
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not data.get("task_id"):
            continue
        if path.name not in data.get("files", [path.name]):
            continue
        sent = data.get("request")
        request: dict[str, Any] = sent if isinstance(sent, dict) else {}
        return candidate, {
            "genlab": None,
            "task_id": data["task_id"],
            "model": data.get("model") or request.get("model"),
            "prompt": request.get("prompt"),
            "seed": request.get("seed"),
            "request": request,
            "completed_at": data.get("completed_at"),
        }
    return None


def _history_row(
    task_id: str, history: History | str | os.PathLike[str] | None
) -> tuple[dict[str, Any] | None, str | None, list[str]]:
    """(the task's row, where it was looked for, notes)."""
    from genlab.history import History, default_path

    if not task_id:
        return None, None, []
    opened = None
    if not isinstance(history, History):
        given = history is not None
        location = str(history) if given else os.environ.get(HISTORY_ENV, "").strip()
        location = location or str(default_path())
        local = _local_file(location)
        if local is not None and not local.is_file():  # never create one by looking
            hint = "" if given else "; pass history=... to look for the task's row"
            return None, None, [f"No history at {local}{hint}."]
        try:
            history = opened = History(location)
        except Exception as exc:  # a history that cannot open: say so, show the file anyway
            return None, None, [f"Could not open the history: {exc}"]
    try:
        row = _row(history, task_id)
    except Exception as exc:
        return None, history.location, [f"Could not read the history: {exc}"]
    finally:
        if opened is not None:
            opened.close()
    if row is None:
        return None, history.location, [f"Task {task_id} is not in the history at "
                                        f"{history.location}."]
    return row, history.location, []


def _local_file(location: str) -> Path | None:
    """The SQLite file of a history location; None for a database server."""
    if location.lower().startswith("sqlite:///"):
        return Path(location[len("sqlite:///") :])
    return None if "://" in location else Path(location)


def _row(history: History, task_id: str) -> dict[str, Any] | None:
    """The task's ``df()`` row (only its own is built)."""
    import pandas as pd

    frame = history.tasks([task_id])
    if frame.empty:
        return None
    return {str(k): (None if _missing(v, pd) else v) for k, v in frame.iloc[0].items()}


def _missing(value: Any, pd: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or a mapping is a value
        return False


def _shown(value: Any) -> str:
    """A setting as text: JSON for lists and objects, empty for none."""
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False)
