"""Every public function and class shows how it is used: its docstring has an example that
pytest runs as a doctest (``--doctest-modules`` over src/), so a new public name without one
fails here.

The public names are ``genlab.__all__`` and each public subpackage's ``__all__``. Names that
predate this rule and have no example yet are listed in ``NOT_YET``; the list only shrinks (a
listed name that gained an example must leave it)."""

from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = ("genlab", "genlab.catalog", "genlab.client", "genlab.history", "genlab.comparison",
            "genlab.experiments", "genlab.rating", "genlab.report", "genlab.widgets",
            "genlab.media", "genlab.display", "genlab.emulator")

NOT_YET: frozenset[str] = frozenset()


def _public() -> dict[str, object]:
    """Each public function and class once, under the first name it is exported as."""
    found: dict[str, object] = {}
    seen: set[int] = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            if (inspect.isclass(value) or inspect.isfunction(value)) and id(value) not in seen:
                seen.add(id(value))
                found[f"{package}.{name}"] = value
    return found


PUBLIC = _public()


def _has_example(value: object) -> bool:
    return ">>>" in (value.__doc__ or "")


@pytest.mark.parametrize("name", sorted(set(PUBLIC) - NOT_YET))
def test_a_public_name_shows_a_runnable_example(name: str) -> None:
    value = PUBLIC[name]
    assert _has_example(value), (
        f"{name} has no doctest in its docstring: add an 'Example:' section with a quick, "
        "offline '>>>' example (pytest runs it)")
    # The example is one pytest runs: it lives in src/, which --doctest-modules collects.
    source = inspect.getsourcefile(value)  # type: ignore[arg-type]
    assert source is not None and "/src/genlab/" in source.replace("\\", "/")


def test_names_not_yet_shown_are_still_public_and_still_without_an_example() -> None:
    stale = sorted(n for n in NOT_YET if n not in PUBLIC or _has_example(PUBLIC[n]))
    assert not stale, f"remove from NOT_YET (gone, or given an example): {stale}"
