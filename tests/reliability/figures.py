"""Figures of the reliability suite: recorded by the tests, written to one JSON file.

Each test records what it measured, and for the figures that have a goal, whether the goal was
met; the same conditions are then asserted (:meth:`Section.assert_goals`), so a figure in the
table and a failing test never disagree. At the end of the session the figures are merged into
``build/reliability/figures.json`` (sections of the same scale are replaced, others kept), which
``python -m tests.reliability.report`` turns into a table and ``docs/reliability.md``.

Example:
    section = figures.section("soak", "Soak under faults")
    section.add("tasks", 100)
    section.goal("duplicate submissions", dups, "0", dups == 0)
    section.assert_goals()
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIGURES_PATH = ROOT / "build" / "reliability" / "figures.json"
# Sections in the order the report shows them.
ORDER = (
    "soak", "crash", "parity", "schemathesis", "load", "bad_media", "hostile", "secrets", "escaping"
)


@dataclass
class Figure:
    """One measured value, with its goal when it has one."""

    name: str
    value: Any
    unit: str = ""
    goal: str | None = None
    met: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "goal": self.goal,
            "met": self.met,
        }


@dataclass
class Section:
    """The figures of one part of the suite (soak, crash, parity, ...)."""

    key: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, value: Any, unit: str = "") -> Any:
        """Record a figure without a goal; returns ``value``."""
        self._replace(Figure(name, _plain(value), unit))
        return value

    def goal(self, name: str, value: Any, goal: str, met: bool, unit: str = "") -> bool:
        """Record a figure and whether it met ``goal`` (a short text such as ``"0"``)."""
        self._replace(Figure(name, _plain(value), unit, goal, bool(met)))
        return bool(met)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def assert_goals(self) -> None:
        """Fail with every missed goal listed, after all of them were recorded."""
        missed = [f for f in self.figures if f.met is False]
        assert not missed, f"{self.title}: goals not met: " + "; ".join(
            f"{f.name} = {f.value} (goal {f.goal})" for f in missed
        )

    def _replace(self, figure: Figure) -> None:
        self.figures = [f for f in self.figures if f.name != figure.name] + [figure]

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "figures": [f.as_dict() for f in self.figures],
            "notes": list(self.notes),
        }


class Figures:
    """Every section recorded in one pytest session."""

    def __init__(self, scale: str, detail: dict[str, Any] | None = None) -> None:
        self.scale = scale
        self.detail = detail or {}
        self.sections: dict[str, Section] = {}

    def section(self, key: str, title: str) -> Section:
        if key not in self.sections:
            self.sections[key] = Section(key, title)
        return self.sections[key]

    def write(self, path: Path = FIGURES_PATH, *, command: str = "") -> Path | None:
        """Merge this session's sections into ``path``; other sections of the same scale stay."""
        if not self.sections:
            return None
        data = load(path)
        if data.get("scale") != self.scale:
            data = {"sections": {}}
        data["scale"] = self.scale
        data["scale_detail"] = self.detail
        data["written_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        data["command"] = command or data.get("command", "")
        sections = data.setdefault("sections", {})
        for key, section in self.sections.items():
            sections[key] = section.as_dict()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


def load(path: Path = FIGURES_PATH) -> dict[str, Any]:
    """The figures file as a dict (empty when absent or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _plain(value: Any) -> Any:
    # JSON-friendly and short: floats rounded, everything else as is or as text.
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return round(value, 4)
    return str(value)
