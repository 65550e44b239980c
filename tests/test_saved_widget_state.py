"""A saved notebook keeps its widgets: saving it with the widget state emptied (as JupyterLab
and Notebook 7 do after reopening it without a kernel) keeps the state from the file on disk
for every widget its outputs still show."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_server.services.contents.filemanager import (
    AsyncFileContentsManager,
    FileContentsManager,
)

from genlab.widgets import keep_widget_state

STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"


def _manager(root: Path, kind: type[Any] = FileContentsManager) -> Any:
    """A contents manager with the hook registered as genlab's server extension registers it
    (genlab.jupyter; tests/test_jupyter_install.py checks a real server loads it)."""
    manager = kind(root_dir=str(root))
    manager.register_pre_save_hook(keep_widget_state)
    return manager


def _notebook(shown: list[str], state: dict[str, Any] | None) -> dict[str, Any]:
    """A notebook whose cell shows the widgets ``shown``, with widget ``state`` (None: none)."""
    outputs = [nbformat.v4.new_output("display_data", data={
        VIEW: {"model_id": m, "version_major": 2, "version_minor": 0},
        "text/plain": "Studio(...)"}) for m in shown]
    cell = nbformat.v4.new_code_cell("genlab.studio(client)", outputs=outputs)
    nb = nbformat.v4.new_notebook(cells=[cell])
    if state is not None:
        nb.metadata["widgets"] = {STATE: {"version_major": 2, "version_minor": 0,
                                          "state": state}}
    return json.loads(nbformat.writes(nb))


def _model(name: str, **state: Any) -> dict[str, Any]:
    return {"model_module": "@jupyter-widgets/controls", "model_name": name,
            "model_module_version": "2.0.0", "state": state}


# A Studio: a box holding a label and a nested box (with its layout) holding a video's HTML;
# one widget that no output shows any more.
FULL = {
    "studio": _model("VBoxModel", children=["IPY_MODEL_label", "IPY_MODEL_inner"],
                     layout="IPY_MODEL_layout"),
    "label": _model("HTMLModel", value="⚠ Saved view: the kernel that ran this Studio ..."),
    "inner": _model("HBoxModel", children=["IPY_MODEL_card"]),
    "card": _model("HTMLModel", value="<video src='data:video/mp4;base64,AAAA'></video>"),
    "layout": _model("LayoutModel", width="100%"),
    "gone": _model("HTMLModel", value="a widget whose output was cleared"),
}


def _save(tmp_path: Path, on_disk: dict[str, Any] | None, saving: dict[str, Any],
          name: str = "studio.ipynb") -> dict[str, Any]:
    """What a FileContentsManager with genlab's hook writes for ``saving``."""
    manager = _manager(tmp_path)
    if on_disk is not None:
        (tmp_path / name).write_text(json.dumps(on_disk))
    manager.save({"type": "notebook", "format": "json", "content": saving}, name)
    return dict(json.loads((tmp_path / name).read_text()))


def _saved_state(notebook: dict[str, Any]) -> dict[str, Any]:
    return dict(notebook["metadata"]["widgets"][STATE]["state"])


@pytest.mark.parametrize("emptied", [{}, None], ids=["empty-state", "no-state"])
def test_an_emptied_save_keeps_every_shown_widget_from_disk(
    tmp_path: Path, emptied: dict[str, Any] | None
) -> None:
    written = _save(tmp_path, _notebook(["studio"], FULL), _notebook(["studio"], emptied))
    state = _saved_state(written)
    assert sorted(state) == ["card", "inner", "label", "layout", "studio"]  # not "gone"
    assert state["card"] == FULL["card"]
    assert written["metadata"]["widgets"][STATE]["version_major"] == 2
    # Saved again and again (autosave after each reopening): still all there.
    for _ in range(3):
        written = _save(tmp_path, None, _notebook(["studio"], {}))
        assert sorted(_saved_state(written)) == ["card", "inner", "label", "layout", "studio"]


def test_state_the_page_sends_wins_and_only_what_it_lacks_comes_from_disk(
    tmp_path: Path,
) -> None:
    newer = {"studio": FULL["studio"], "label": _model("HTMLModel", value="newer"),
             "layout": FULL["layout"]}  # the nested box and its card are missing
    state = _saved_state(_save(tmp_path, _notebook(["studio"], FULL),
                               _notebook(["studio"], newer)))
    assert state["label"]["state"]["value"] == "newer"
    assert sorted(state) == ["card", "inner", "label", "layout", "studio"]


def test_a_complete_save_is_written_as_sent(tmp_path: Path) -> None:
    sent = copy.deepcopy({k: v for k, v in FULL.items() if k != "gone"})
    sent["card"] = _model("HTMLModel", value="a new result")
    written = _save(tmp_path, _notebook(["studio"], FULL), _notebook(["studio"], sent))
    assert _saved_state(written) == sent


def test_cleared_outputs_let_the_widgets_go(tmp_path: Path) -> None:
    written = _save(tmp_path, _notebook(["studio"], FULL), _notebook([], {}))
    assert _saved_state(written) == {}


def test_a_new_widget_unknown_on_disk_is_left_to_the_page(tmp_path: Path) -> None:
    written = _save(tmp_path, _notebook(["studio"], FULL), _notebook(["other"], {}))
    assert _saved_state(written) == {}


def test_a_first_save_or_an_unreadable_file_is_saved_as_sent(tmp_path: Path) -> None:
    assert _saved_state(_save(tmp_path, None, _notebook(["studio"], {}), "new.ipynb")) == {}
    (tmp_path / "bad.ipynb").write_text("{not json")
    manager = _manager(tmp_path)
    manager.save({"type": "notebook", "format": "json",
                  "content": _notebook(["studio"], {})}, "bad.ipynb")
    assert _saved_state(json.loads((tmp_path / "bad.ipynb").read_text())) == {}


def test_files_that_are_not_notebooks_are_untouched(tmp_path: Path) -> None:
    model = {"type": "file", "format": "text", "content": "notes"}
    keep_widget_state(model, "notes.txt", FileContentsManager(root_dir=str(tmp_path)))
    assert model == {"type": "file", "format": "text", "content": "notes"}


async def test_the_servers_async_contents_manager_keeps_it_too(tmp_path: Path) -> None:
    manager = _manager(tmp_path, AsyncFileContentsManager)
    (tmp_path / "studio.ipynb").write_text(json.dumps(_notebook(["studio"], FULL)))
    await manager.save({"type": "notebook", "format": "json",
                        "content": _notebook(["studio"], {})}, "studio.ipynb")
    written = json.loads((tmp_path / "studio.ipynb").read_text())
    assert sorted(_saved_state(written)) == ["card", "inner", "label", "layout", "studio"]
