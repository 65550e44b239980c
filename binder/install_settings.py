"""Install genlab's JupyterLab settings for this environment (JupyterLab and Notebook 7 read
the same ones): saving a notebook saves its widgets' state, so the Studio, its task cards and
their videos show again when the notebook is reopened, without a kernel.

The settings go into ``<app dir>/settings/overrides.d/genlab.json``, beside any overrides the
environment already has; a person's own settings (Settings → Jupyter Widgets) still win.
The server's configuration (``jupyter_server_config.json``: a save keeps the widget state a
reopened notebook would otherwise lose, see :func:`genlab.widgets.keep_widget_state`) goes into
``<prefix>/etc/jupyter/jupyter_server_config.d/genlab.json``.
Run by ``make lab`` and by Binder's postBuild: ``python binder/install_settings.py``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from jupyterlab.commands import get_app_dir

SOURCE = Path(__file__).with_name("jupyterlab-settings.json")
SERVER = Path(__file__).with_name("jupyter_server_config.json")


def install() -> Path:
    """Copy the settings into the environment's JupyterLab app folder; where they went."""
    target = Path(get_app_dir()) / "settings" / "overrides.d" / "genlab.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, target)
    return target


def install_server_config() -> Path:
    """Copy the server's configuration into the environment's; where it went."""
    target = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "genlab.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SERVER, target)
    return target


if __name__ == "__main__":
    print(f"JupyterLab and Notebook 7 save widget state in notebooks: {install()}")
    print(f"and a save keeps the state a reopened notebook would lose: {install_server_config()}")
