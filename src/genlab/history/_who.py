"""Who ran a task and where: user, host, project and notebook, recorded with every submission.

Example:
    >>> who = Who("ana", "lab-3", "sweeps", "compare.ipynb")
    >>> who.columns()["notebook"]
    'compare.ipynb'
"""

from __future__ import annotations

import getpass
import os
import socket
import sys
from dataclasses import asdict, dataclass


@dataclass(slots=True)
class Who:
    """The values of the ``user``, ``host``, ``project`` and ``notebook`` columns."""

    user: str | None
    host: str | None
    project: str | None
    notebook: str | None

    @classmethod
    def here(cls, project: str | None = None) -> Who:
        """This process: ``$GENLAB_USER`` or the login name, the host name, ``project`` or
        ``$GENLAB_PROJECT``, and the notebook Jupyter runs (``$JPY_SESSION_NAME``) or the
        script's file name."""
        return cls(
            os.environ.get("GENLAB_USER") or _login(),
            socket.gethostname() or None,
            project or os.environ.get("GENLAB_PROJECT") or None,
            _notebook(),
        )

    def columns(self) -> dict[str, str | None]:
        return asdict(self)


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in some containers
        return None


def _notebook() -> str | None:
    session = os.environ.get("JPY_SESSION_NAME")  # set by jupyter-server for each kernel
    if session:
        return os.path.basename(session) or session
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return script if script.endswith((".py", ".ipynb")) else None
