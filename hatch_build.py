"""Wheel build hook: the tutorial notebooks of notebooks/ go into the wheel as
``genlab/notebooks/`` (the tutorials, the report notebook, and nbval's sanitizing rules),
and nothing else of that folder (its test-only conftest.py, runs' leftovers, checkpoints).

An editable install takes none: ``genlab notebooks`` then copies the checkout's notebooks/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SHIPPED = ("*.ipynb", "reports/*.ipynb", "app/*.ipynb", "sanitize.cfg")


def shipped_notebooks(folder: Path) -> list[Path]:
    """The files of ``folder`` (the repository's notebooks/) that the package ships."""
    return sorted({p for pattern in SHIPPED for p in folder.glob(pattern) if p.is_file()})


class NotebooksHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        folder = Path(self.root) / "notebooks"
        for path in shipped_notebooks(folder):
            target = "genlab/notebooks/" + path.relative_to(folder).as_posix()
            build_data["force_include"][str(path)] = target
