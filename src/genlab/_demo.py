"""``make demo``: the main job, end to end, on the embedded emulator."""

from __future__ import annotations

from pathlib import Path

import genlab


def _credits(value: int | None) -> str:
    return f"{value} credits" if value is not None else "price not published"


def show_catalog() -> None:
    """Validate each model's example request and print its mode and credit estimate."""
    print("The catalog: one example request per model")
    for name, cls in genlab.CATALOG.items():
        request = genlab.validate(cls.EXAMPLE)
        estimate = _credits(genlab.estimate_credits(request))
        print(f"  {name:8} {request.kind:5} {request.mode.label:38} {estimate}")
    bad = {"model": "video-c", "prompt": "x", "duration": 40, "generate_audio": True}
    try:
        genlab.validate(bad)
    except genlab.InvalidParameterError as exc:
        print("\nA bad request is caught before it costs anything:")
        print("  " + str(exc).replace("\n", "\n  "))


def run_demo(output: str = "genlab-output", time_scale: float = 0.05) -> int:
    """Run the demo; returns the process exit code."""
    show_catalog()
    Path(output).mkdir(parents=True, exist_ok=True)
    return 0
