"""Install genlab's JupyterLab settings for this environment (JupyterLab and Notebook 7 read
the same ones): saving a notebook saves its widgets' state, so the Studio, its task cards and
their videos show again when the notebook is reopened, without a kernel.

The settings go into ``<app dir>/settings/overrides.d/genlab.json``, beside any overrides the
environment already has; a person's own settings (Settings → Jupyter Widgets) still win.
Run by ``make lab`` and by Binder's postBuild: ``python binder/install_settings.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from jupyterlab.commands import get_app_dir

SOURCE = Path(__file__).with_name("jupyterlab-settings.json")


def install() -> Path:
    """Copy the settings into the environment's JupyterLab app folder; where they went."""
    target = Path(get_app_dir()) / "settings" / "overrides.d" / "genlab.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, target)
    return target


if __name__ == "__main__":
    print(f"JupyterLab and Notebook 7 save widget state in notebooks: {install()}")
