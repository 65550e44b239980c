"""genlab inside a Jupyter server: saved notebooks keep their widgets, and widgets link kept
files where the server serves them.

This module is a Jupyter server extension. Installing genlab (``pip install genlab``, an
editable install, Binder's build) puts ``etc/jupyter/jupyter_server_config.d/genlab.json``
in the environment, which turns it on for every Jupyter server started there (JupyterLab,
Notebook 7, Voilà inside either)::

    {"ServerApp": {"jpserver_extensions": {"genlab.jupyter": true}}}

``jupyter server extension list`` names it. Loaded, it does two things:

* :func:`keep_widget_state` runs before every save. JupyterLab and Notebook 7 (with *Save
  Jupyter widget state*, which genlab's settings turn on) write the widgets' state into a
  notebook's metadata, so a reopened notebook shows its Studio without a kernel. But once
  reopened, the page marks the notebook changed, and the next save (autosave, a minute later)
  writes the state the page holds then: none, since no kernel made those widgets. The
  notebook after that shows "Error displaying widget: model not found" where the Studio was
  (ipywidgets #3270 and #3888). The hook puts back, from the file on disk, the state of every
  widget the notebook's outputs still show; state the page sends is kept as sent, and a
  widget no output shows any more is let go.
* Kernels the server starts learn where it serves files (:data:`FILES_URL`, under its base
  URL: ``/user/<name>/files/`` on JupyterHub and Binder) and from which folder
  (:data:`FILES_ROOT`), so a link inside a widget opens the kept file itself
  (:func:`served_url`). A widget's HTML is not rewritten by the front end as a cell's output
  is: a relative link there resolves against the page (``/lab/tree/...``) and fetches a web
  page instead of the file.

Example:
    >>> view = {"output_type": "display_data", "metadata": {},
    ...         "data": {VIEW: {"model_id": "m1", "version_major": 2, "version_minor": 0}}}
    >>> disk = {"cells": [{"cell_type": "code", "outputs": [view]}], "metadata": {"widgets": {
    ...     STATE: {"version_major": 2, "version_minor": 0, "state": {
    ...         "m1": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_m2"]}},
    ...         "m2": {"model_name": "HTMLModel", "state": {"value": "saved"}},
    ...         "m9": {"model_name": "HTMLModel", "state": {"value": "shown nowhere"}}}}}}}
    >>> emptied = {"cells": disk["cells"], "metadata": {"widgets": {STATE: {
    ...     "version_major": 2, "version_minor": 0, "state": {}}}}}
    >>> sorted(kept_state(emptied, disk)["state"])
    ['m1', 'm2']
"""

from __future__ import annotations

import copy
import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

STATE = "application/vnd.jupyter.widget-state+json"
"""Where a notebook's metadata holds its widgets' state (under ``metadata.widgets``)."""

VIEW = "application/vnd.jupyter.widget-view+json"
"""The output mimetype that shows a widget, by its ``model_id``."""

FILES_URL = "GENLAB_FILES_URL"
"""The environment variable naming the URL path where the page's server serves files
(``/files/``, ``/user/ana/files/``, ``/voila/files/``), set for the kernels it starts."""

FILES_ROOT = "GENLAB_FILES_ROOT"
"""The environment variable naming the folder the server serves under :data:`FILES_URL`."""

_REFERENCE = "IPY_MODEL_"
logger = logging.getLogger("genlab")


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """What a Jupyter server loads of genlab: this module."""
    return [{"module": "genlab.jupyter"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Keep widget state at each save, and tell the kernels where files are served.

    The kernels a server starts inherit its environment (a session adds its own names to
    ``os.environ``), so setting it here reaches every notebook's kernel."""
    registered = serverapp.contents_manager
    registered.register_pre_save_hook(keep_widget_state)

    def again() -> None:
        # Another extension may replace the contents manager after this one loaded
        # (jupytext's does, for every server where it is installed): its saves need the
        # hook too. Extensions all load before the server's loop turns.
        manager = serverapp.web_app.settings.get("contents_manager", serverapp.contents_manager)
        if manager is not registered:
            manager.register_pre_save_hook(keep_widget_state)

    serverapp.io_loop.add_callback(again)
    os.environ[FILES_URL] = _joined(serverapp.base_url, "files/")
    os.environ[FILES_ROOT] = str(Path(serverapp.root_dir).expanduser().resolve())
    serverapp.log.info("genlab: saves keep widget state; kernels link files under %s",
                       os.environ[FILES_URL])


def _joined(base: str, tail: str) -> str:
    return "/" + "/".join(p for p in (base.strip("/"), tail) if p)


def served_url(path: str | os.PathLike[str]) -> str | None:
    """Where the page's server serves the file at ``path``, as a URL path; None when no
    server said (a kernel not started by a Jupyter server with genlab installed, a script)
    or the file is outside the folder it serves.

    Example:
        >>> os.environ[FILES_URL], os.environ[FILES_ROOT] = "/user/ana/files/", "/home/ana"
        >>> served_url("/home/ana/work/genlab-media/task 1.mp4")
        '/user/ana/files/work/genlab-media/task%201.mp4'
        >>> served_url("/tmp/elsewhere.mp4") is None
        True
        >>> del os.environ[FILES_URL], os.environ[FILES_ROOT]
    """
    prefix, root = os.environ.get(FILES_URL), os.environ.get(FILES_ROOT)
    if not prefix or not root:
        return None
    try:
        inside = Path(path).resolve().relative_to(Path(root).resolve())
    except (ValueError, OSError):
        return None
    return prefix.rstrip("/") + "/" + quote(inside.as_posix())


def keep_widget_state(model: dict[str, Any], path: str, contents_manager: Any,
                      **_: Any) -> None:
    """A Jupyter server pre-save hook: a notebook saved with its widget state emptied, or
    missing widgets its outputs show, keeps that state from the file it replaces.

    ``model`` is the contents model being saved; it is changed in place. Anything that is not
    a notebook, or a notebook saved for the first time, is left as it is; so is the save when
    the file on disk cannot be read (the save itself must never fail because of this hook), or
    when the server keeps notebooks elsewhere than in local files.

    Example:
        >>> import json, tempfile
        >>> from types import SimpleNamespace
        >>> folder = tempfile.mkdtemp()
        >>> shows = {"cells": [{"outputs": [{"data": {VIEW: {"model_id": "w1"}}}]}]}
        >>> kept = {"state": {"w1": {"model_name": "ButtonModel"}}}
        >>> with open(os.path.join(folder, "a.ipynb"), "w") as file:
        ...     json.dump(dict(shows, metadata={"widgets": {STATE: kept}}), file)
        >>> saving = {"type": "notebook", "content": dict(shows, metadata={})}
        >>> files = SimpleNamespace(_get_os_path=lambda name: os.path.join(folder, name))
        >>> keep_widget_state(saving, "a.ipynb", files)
        >>> saving["content"]["metadata"]["widgets"][STATE] == kept
        True
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    try:
        disk = _on_disk(path, contents_manager)
        if disk is None:
            return
        state = kept_state(model["content"], disk)
    except Exception:  # a hook that raises would refuse the person's save
        logger.debug("genlab: widget state not checked for %s", path, exc_info=True)
        return
    if state is not None:
        metadata = model["content"].setdefault("metadata", {})
        metadata.setdefault("widgets", {})[STATE] = state


def kept_state(saving: Mapping[str, Any], disk: Mapping[str, Any]) -> dict[str, Any] | None:
    """The widget state ``saving`` (a notebook as a dict) should carry, given the notebook
    ``disk`` it replaces; None when it needs nothing from ``disk``.

    Every widget the outputs of ``saving`` show, and every widget those refer to
    (``IPY_MODEL_<id>`` in their state: children, layouts, styles), is taken from ``saving``'s
    state when it has it, else from ``disk``'s.
    """
    have = _state(saving.get("metadata"))
    old = _state(disk.get("metadata"))
    if not old:
        return None
    wanted = list(_shown(saving))
    seen: set[str] = set()
    added = False
    merged = dict(have)
    while wanted:
        model_id = wanted.pop()
        if model_id in seen:
            continue
        seen.add(model_id)
        entry = have.get(model_id)
        if entry is None and model_id in old:
            entry = merged[model_id] = copy.deepcopy(old[model_id])
            added = True
        if isinstance(entry, Mapping):
            wanted.extend(_references(entry.get("state")))
    if not added:
        return None
    saved = (disk.get("metadata") or {}).get("widgets", {}).get(STATE, {})
    sent = (saving.get("metadata") or {}).get("widgets", {}).get(STATE) or {}
    versions = {k: sent.get(k, saved.get(k)) for k in ("version_major", "version_minor")}
    return {**{k: v for k, v in versions.items() if v is not None}, "state": merged}


def _state(metadata: Any) -> dict[str, Any]:
    if not isinstance(metadata, Mapping):
        return {}
    widgets = metadata.get("widgets")
    block = widgets.get(STATE) if isinstance(widgets, Mapping) else None
    state = block.get("state") if isinstance(block, Mapping) else None
    return dict(state) if isinstance(state, Mapping) else {}


def _shown(notebook: Mapping[str, Any]) -> Iterator[str]:
    """The model ids the notebook's outputs display."""
    for cell in notebook.get("cells") or ():
        if not isinstance(cell, Mapping):
            continue
        for output in cell.get("outputs") or ():
            data = output.get("data") if isinstance(output, Mapping) else None
            view = data.get(VIEW) if isinstance(data, Mapping) else None
            if isinstance(view, str):  # some writers keep a JSON mimetype as text
                try:
                    view = json.loads(view)
                except ValueError:
                    continue
            if isinstance(view, Mapping) and isinstance(view.get("model_id"), str):
                yield view["model_id"]


def _references(value: Any) -> Iterator[str]:
    """The model ids a widget's state refers to (``"IPY_MODEL_<id>"``, nested anywhere)."""
    if isinstance(value, str):
        if value.startswith(_REFERENCE):
            yield value[len(_REFERENCE):]
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _references(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _references(item)


def _on_disk(path: str, contents_manager: Any) -> dict[str, Any] | None:
    """The notebook currently saved at ``path`` as a dict; None when there is none, or when the
    contents manager keeps no local files (its ``get`` may be a coroutine a hook cannot await,
    so such managers are left alone)."""
    local = getattr(contents_manager, "_get_os_path", None)
    if not callable(local):
        return None
    os_path = local(path)
    if not os.path.isfile(os_path):
        return None
    with open(os_path, encoding="utf-8") as file:
        loaded = json.load(file)
    return loaded if isinstance(loaded, dict) else None
