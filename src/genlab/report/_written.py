"""The path of a written report, shown in a notebook as a link to the file."""

from __future__ import annotations

import os
from pathlib import Path

from genlab.display import LINK, MUTED, escape, text

_CONCRETE: type[Path] = type(Path())  # PosixPath or WindowsPath: Path itself cannot be made


class ReportFile(_CONCRETE):  # type: ignore[valid-type,misc]  # the platform's concrete Path
    """A :class:`~pathlib.Path` to a report that a notebook cell shows as a link to open it,
    with its size; everything else is the usual path (``print`` gives the plain path).

    Example:
        >>> import os, tempfile
        >>> here = os.getcwd()
        >>> os.chdir(tempfile.mkdtemp())
        >>> _ = Path("out").mkdir()
        >>> _ = Path("out/r.html").write_text("<p>hi</p>")
        >>> page = ReportFile("out/r.html")._repr_html_()
        >>> '<a href="out/r.html" target="_blank"' in page, str(ReportFile("out/r.html"))
        (True, 'out/r.html')
        >>> os.chdir(here)
    """

    def _repr_html_(self) -> str:
        try:
            size = f" ({self.stat().st_size / 1e6:.1f} MB)"
        except OSError:
            size = " (not found)"
        try:
            shown = os.path.relpath(self)
        except ValueError:  # another drive on Windows: no relative link
            shown = str(self)
        if os.path.isabs(shown) or shown.startswith(".."):
            # Outside the notebook's folder: JupyterLab cannot open it, so it is named.
            place = f"<code>{escape(self)}</code>"
        else:
            href = escape(Path(shown).as_posix())
            place = (f'<a href="{href}" target="_blank" style="color:{LINK}" '
                     f'title="open the report">{escape(shown)}</a>')
        return f"<div class='genlab-report-file'>Report written: {place}{text(size, MUTED)}</div>"


__all__ = ["ReportFile"]
