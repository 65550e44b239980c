"""The public surface: ``__all__`` of ``genlab`` and ``genlab.catalog`` is sorted and complete."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import genlab
import genlab.catalog
import genlab.media

PACKAGES = [genlab, genlab.catalog]


def public_names(module: types.ModuleType) -> set[str]:
    """Names the package defines or re-exports from its own modules.

    Modules, private names and names imported from elsewhere (``typing.Any``, pydantic,
    ``from __future__ import annotations``) are not part of the surface.
    """
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        origin = getattr(value, "__module__", None)
        if isinstance(origin, str) and not (
            origin == module.__name__ or origin.startswith(module.__name__ + ".")
        ):
            continue
        names.add(name)
    return names


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_all_is_sorted(module: types.ModuleType) -> None:
    assert sorted(module.__all__) == module.__all__


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_all_has_no_duplicates(module: types.ModuleType) -> None:
    assert len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_every_name_in_all_exists(module: types.ModuleType) -> None:
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_every_public_name_is_in_all(module: types.ModuleType) -> None:
    assert sorted(public_names(module) - set(module.__all__)) == []


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_star_import_gives_all(module: types.ModuleType) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module.__name__} import *", namespace)  # noqa: S102 - the star import itself
    assert set(namespace) - {"__builtins__"} == set(module.__all__)


def test_the_catalog_exports_every_request_class() -> None:
    for cls in genlab.CATALOG.values():
        assert cls.__name__ in genlab.catalog.__all__
        assert getattr(genlab.catalog, cls.__name__) is cls


def test_the_documented_surface() -> None:
    for name in ("validate", "estimate_credits", "CATALOG", "Mode", "InvalidParameterError",
                 "ErrorDetail", "GenerationRequest"):
        assert name in genlab.__all__
    for name in ("output_size", "media_problems_for", "MediaInfo"):
        assert name in genlab.catalog.__all__
    # One MediaInfo: the facts the catalog's media rules judge are the probe's, so a preflight
    # check imports it with media_problems_for and passes it genlab.media.probe's answer.
    assert genlab.catalog.MediaInfo is genlab.MediaInfo is genlab.media.MediaInfo
    assert genlab.validate is genlab.catalog.validate
    assert genlab.CATALOG is genlab.catalog.CATALOG


def test_the_studio_is_exported_lazily_and_not_a_client_method() -> None:
    code = (
        "import sys, genlab; before = 'ipywidgets' in sys.modules; "
        "import genlab.widgets; print(before, genlab.studio is genlab.widgets.studio)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    assert not hasattr(genlab.Client, "studio")
    assert "studio" in dir(genlab)
