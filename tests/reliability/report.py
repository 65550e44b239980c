"""Print the reliability figures as a table and write ``docs/reliability.md``.

Run after the suite (``make reliability`` does both)::

    GENLAB_RELIABILITY=full python -m pytest tests/reliability -q -p no:cacheprovider
    python -m tests.reliability.report

The figures come from ``build/reliability/figures.json``, written by the tests.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .figures import FIGURES_PATH, ORDER, ROOT, load

DOC_PATH = ROOT / "docs" / "reliability.md"
COMMANDS = {
    "full": "make reliability",
    "short": "python -m pytest tests/reliability -q -p no:cacheprovider && "
    "python -m tests.reliability.report",
}


def _value(figure: dict[str, Any]) -> str:
    value = figure["value"]
    if isinstance(value, float):
        text = f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    else:
        text = str(value)
    unit = figure.get("unit") or ""
    return f"{text} {unit}".strip() if unit not in ("B",) else f"{text} bytes"


def _met(figure: dict[str, Any]) -> str:
    met = figure.get("met")
    return "" if met is None else ("yes" if met else "NO")


def _sections(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    sections = data.get("sections", {})
    known = [(k, sections[k]) for k in ORDER if k in sections]
    return known + [(k, v) for k, v in sections.items() if k not in ORDER]


def _scale_line(data: dict[str, Any]) -> str:
    detail = data.get("scale_detail") or {}
    shown = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in detail.items() if k != "name")
    return f"{data.get('scale', '?')} ({shown})" if shown else str(data.get("scale", "?"))


def render_text(data: dict[str, Any]) -> str:
    lines = [
        f"Reliability figures, {data.get('scale', '?')} scale, written {data.get('written_at')}",
        f"Reproduce with: {COMMANDS.get(data.get('scale', ''), data.get('command', ''))}",
    ]
    missed = 0
    for _, section in _sections(data):
        lines += ["", section["title"]]
        width = max([46, *(len(f["name"]) for f in section["figures"])])
        lines.append(f"  {'figure':{width}} {'value':>24}  {'goal':>14}  met")
        for figure in section["figures"]:
            goal = figure.get("goal") or ""
            lines.append(f"  {figure['name']:{width}} {_value(figure):>24}  {goal:>14}  "
                         f"{_met(figure)}")
            missed += figure.get("met") is False
        for note in section.get("notes", []):
            lines.append(f"  note: {note[:300]}")
    lines += ["", "every goal met" if not missed else f"{missed} goal(s) NOT met"]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


HAND_WRITTEN = "<!-- sections below are written by hand and kept when this file is regenerated -->"


def kept_by_hand(path: Path) -> str:
    """The hand-written tail of an existing report (from the marker on), or ""."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""
    at = text.find(HAND_WRITTEN)
    return "" if at < 0 else "\n" + text[at:]


def render_markdown(data: dict[str, Any]) -> str:
    scale = data.get("scale", "?")
    written = str(data.get("written_at", ""))
    out = [
        "# Reliability and security figures",
        "",
        "Measured by the reliability suite (`tests/reliability/`): soak under injected faults, "
        "crash and resume, parity fuzz between `genlab.validate` and the emulator, "
        "schemathesis over the emulator's OpenAPI document, load, bad reference media, "
        "hostile input, secrets and escaping. Every figure with a goal is also asserted by "
        "its test.",
        "",
        f"- Date: {written[:10]} ({written} UTC)",
        f"- Scale: {_scale_line(data)}",
        f"- Reproduce: `{COMMANDS.get(scale, data.get('command', ''))}`; `make test` runs the "
        "same tests in a short form (`GENLAB_RELIABILITY` unset).",
        "- Machine: shared, 2 busy cores; times and rates are indicative, never asserted.",
    ]
    for _, section in _sections(data):
        out += ["", f"## {section['title']}", ""]
        recorded = str(section.get("recorded_at") or "")
        if recorded[:10] and recorded[:10] != written[:10]:
            # Sections are merged across runs (see figures.py): say when this one was measured.
            out += [f"Measured {recorded[:10]} ({recorded} UTC), in an earlier run.", ""]
        out += ["| figure | value | goal | met |", "|---|---:|---|---|"]
        for figure in section["figures"]:
            out.append(f"| {_cell(figure['name'])} | {_cell(_value(figure))} | "
                       f"{_cell(figure.get('goal') or '')} | {_met(figure)} |")
        notes = section.get("notes", [])
        if notes:
            out.append("")
            out += [f"- {_cell(note[:400])}" for note in notes]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    data = load(FIGURES_PATH)
    if not data.get("sections"):
        print(f"no figures at {FIGURES_PATH}; run the suite first (make reliability)")
        return 1
    print(render_text(data))
    target = Path(argv[0]) if argv else DOC_PATH
    target.write_text(render_markdown(data) + kept_by_hand(target), encoding="utf-8")
    print(f"\nwrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
