"""Installing genlab sets up the Jupyter server the way a `make lab`, Binder or
`pip install 'genlab[lab]'` user gets it: nothing copied by hand, nothing in the person's home.

These start ``jupyter server`` from this environment (the one `make` installed genlab into,
editable, as `make lab` does) with an empty home and config folder, so only what the install
itself put in the environment's folders can turn anything on:

- the server names genlab's extension in its configuration (``--show-config``) and loads it;
- a notebook saved with its widget state emptied keeps it (the pre-save hook runs);
- a kernel the server starts knows where the server serves files, under its base URL;
- JupyterLab's own settings say widget state is saved.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"
BASE_URL = "/user/ana/"  # as JupyterHub and Binder serve a person's server


def _home(tmp_path: Path) -> dict[str, str]:
    """An environment whose home, config, data and runtime folders are empty ones."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GENLAB_", "JUPYTER", "JPY_"))}
    home = tmp_path / "home"
    for name, sub in (("HOME", ""), ("JUPYTER_CONFIG_DIR", "config"),
                      ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                      ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib"),
                      ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "xdg-config"),
                      ("XDG_DATA_HOME", "xdg-data")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / sub)
    return env


def _jupyter(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "jupyter", *args], env=env, text=True,
                          capture_output=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_the_servers_configuration_names_genlabs_extension(tmp_path: Path) -> None:
    env = _home(tmp_path)
    shown = _jupyter("server", "--show-config", env=env)
    assert "'genlab.jupyter': True" in shown, shown
    listed = _jupyter("server", "extension", "list", env=env)
    assert any("genlab.jupyter" in line and "OK" in line for line in listed.splitlines()), listed


def test_jupyterlabs_settings_save_widget_state() -> None:
    from jupyterlab.commands import get_app_dir

    overrides = Path(get_app_dir()) / "settings" / "overrides.d" / "genlab.json"
    assert json.loads(overrides.read_text()) == {
        "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """``jupyter server`` under a JupyterHub-like base URL: its URL, root and runtime folder."""
    tmp = tmp_path_factory.mktemp("jupyter")
    root = tmp / "work"
    root.mkdir()
    env = _home(tmp)
    port = _free_port()
    log = (tmp / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "server", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", f"--ServerApp.root_dir={root}", f"--ServerApp.base_url={BASE_URL}",
         "--IdentityProvider.token=", "--ServerApp.password=",
         "--ServerApp.disable_check_xsrf=True", "--ServerApp.allow_root=True"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}{BASE_URL}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}api/status", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"jupyter server did not start: {tmp / 'server.log'}")
            time.sleep(0.3)
        yield url, root, Path(env["JUPYTER_RUNTIME_DIR"])
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _studio_notebook(state: dict[str, Any]) -> dict[str, Any]:
    view = nbformat.v4.new_output("display_data", data={
        VIEW: {"model_id": "studio", "version_major": 2, "version_minor": 0},
        "text/plain": "Studio(...)"})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("studio", outputs=[view])])
    nb.metadata["widgets"] = {STATE: {"version_major": 2, "version_minor": 0, "state": state}}
    return json.loads(nbformat.writes(nb))


def test_a_save_with_emptied_widget_state_keeps_it(server: tuple[str, Path, Path]) -> None:
    url, root, _ = server
    saved = {"studio": {"model_module": "@jupyter-widgets/controls", "model_name": "HTMLModel",
                        "model_module_version": "2.0.0", "state": {"value": "the Studio"}}}
    for state in (saved, {}, {}, {}):  # saved, then reopened and autosaved three times
        answer = httpx.put(f"{url}api/contents/studio.ipynb", timeout=30, json={
            "type": "notebook", "format": "json", "content": _studio_notebook(state)})
        assert answer.status_code in (200, 201), answer.text
        on_disk = json.loads((root / "studio.ipynb").read_text())
        assert on_disk["metadata"]["widgets"][STATE]["state"] == saved


def test_a_kernel_knows_where_the_server_serves_files(server: tuple[str, Path, Path]) -> None:
    from jupyter_client import BlockingKernelClient

    url, root, runtime = server
    (root / "genlab-media").mkdir()
    answer = httpx.post(f"{url}api/sessions", timeout=60, json={
        "path": "look.ipynb", "type": "notebook", "name": "look.ipynb",
        "kernel": {"name": "python3"}})
    assert answer.status_code == 201, answer.text
    kernel = answer.json()["kernel"]["id"]
    client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel}.json"))
    client.load_connection_file()
    client.start_channels()
    try:
        # Asked and answered on the shell channel alone, which queues the request until the
        # kernel is up (a fresh kernel may take long to import on a busy machine).
        client.execute("from genlab.jupyter import served_url", silent=False,
                       user_expressions={"url": "served_url('genlab-media/task 1.mp4')"})
        reply = client.get_shell_msg(timeout=300)["content"]
    finally:
        client.stop_channels()
        httpx.delete(f"{url}api/kernels/{kernel}", timeout=30)
    assert reply["status"] == "ok", reply
    shown = reply["user_expressions"]["url"]["data"]["text/plain"]
    assert shown == repr(f"{BASE_URL}files/genlab-media/task%201.mp4")
