"""The path of a written report, shown in a notebook as a link to the file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from genlab.display import LINK, MUTED, escape, text


class ReportFile:
    """Where a report was written: a notebook cell shows it as a link to open the file, with
    its size; ``print`` gives the plain path, and it goes wherever a path does (``open``,
    ``os.fspath``, ``.name``, ``.read_text()``, ``/``). ``path`` is the
    :class:`~pathlib.Path` itself.

    Example:
        >>> import os, tempfile
        >>> here = os.getcwd()
        >>> os.chdir(tempfile.mkdtemp())
        >>> _ = Path("out").mkdir()
        >>> _ = Path("out/r.html").write_text("<p>hi</p>")
        >>> page = ReportFile("out/r.html")._repr_html_()
        >>> '<a href="out/r.html" target="_blank"' in page, str(ReportFile("out/r.html"))
        (True, 'out/r.html')
        >>> ReportFile("out/r.html") == Path("out/r.html"), ReportFile("out/r.html").path.name
        (True, 'r.html')
        >>> os.chdir(here)
    """

    __slots__ = ("path",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __getattr__(self, name: str) -> Any:
        # Everything else a Path offers (name, exists(), read_text(), parent, ...).
        if name.startswith("_") or name == "path":  # "path" unset: being copied or unpickled
            raise AttributeError(f"'ReportFile' object has no attribute {name!r}")
        return getattr(self.path, name)

    def __truediv__(self, other: str | os.PathLike[str]) -> Path:
        return self.path / other

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"ReportFile({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReportFile):
            return self.path == other.path
        if isinstance(other, Path):
            return self.path == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.path)

    def _repr_html_(self) -> str:
        try:
            size = f" ({self.path.stat().st_size / 1e6:.1f} MB)"
        except OSError:
            size = " (not found)"
        try:
            shown = os.path.relpath(self.path)
        except ValueError:  # another drive on Windows: no relative link
            shown = str(self.path)
        if os.path.isabs(shown) or shown.startswith(".."):
            # Outside the notebook's folder: JupyterLab cannot open it, so it is named.
            place = f"<code>{escape(self.path)}</code>"
        else:
            href = escape(Path(shown).as_posix())
            place = (f'<a href="{href}" target="_blank" style="color:{LINK}" '
                     f'title="open the report">{escape(shown)}</a>')
        return f"<div class='genlab-report-file'>Report written: {place}{text(size, MUTED)}</div>"


__all__ = ["ReportFile"]
