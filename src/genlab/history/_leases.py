"""Leases: which process waits on an unfinished task, so two never wait on the same one.

A process that submits a task, or claims it in ``resume``, writes its owner id and a time
``lease_seconds`` ahead; a daemon thread renews that time while the process has unfinished
tasks. A crashed process stops renewing, so its tasks are free again once the time passes; a
closed history hands its leases back at once.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import sqlalchemy as sa

from genlab._wire import TERMINAL_STATUSES
from genlab.history._schema import TASKS

logger = logging.getLogger("genlab")
_T = TASKS.c


class Leases:
    """The leases one journal holds, and the thread renewing them."""

    def __init__(
        self,
        write: Callable[[], AbstractContextManager[sa.Connection]],
        user: str | None,
        host: str | None,
        seconds: float,
    ) -> None:
        if seconds <= 0:
            raise ValueError(f"lease_seconds must be positive, got {seconds}")
        self.seconds = seconds
        self.host = host or "?"
        self.owner = f"{user or '?'}@{self.host}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        self._write = write
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def taken(self, now: float) -> dict[str, Any]:
        """The column values that make a row this process's for the next ``seconds``."""
        return {"lease_owner": self.owner, "lease_until": now + self.seconds}

    def free(self, row: Mapping[str, Any], now: float) -> bool:
        """Whether this process may wait on ``row``'s task: nobody holds it, the lease ran
        out, it is our own, or its holder was a process on this machine that is gone."""
        until, owner = row.get("lease_until"), row.get("lease_owner")
        if until is None or until < now or owner == self.owner:
            return True
        return isinstance(owner, str) and self._gone(owner)

    def _gone(self, owner: str) -> bool:
        who, _, rest = owner.partition("/")
        pid = rest.partition("/")[0]
        if who.rpartition("@")[2] != self.host or not pid.isdigit():
            return False  # another machine's process: only its lease's time can tell
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except OSError:  # it exists but is not ours to signal
            return False
        return False

    def holding(self) -> None:
        """Renew this process's leases from now on (a daemon thread, started once)."""
        with self._guard:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(
                    target=self._renew_loop, name="genlab-leases", daemon=True
                )
                self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                if self.renew() == 0:
                    return  # nothing left to wait on; holding() starts it again
            except (sa.exc.SQLAlchemyError, OSError) as exc:
                logger.warning("genlab: could not renew task leases (%s); retrying", exc)

    def renew(self) -> int:
        """Push this process's unfinished leases ``seconds`` ahead; how many it holds."""
        with self._write() as db:
            result = db.execute(
                sa.update(TASKS).where(
                    _T.lease_owner == self.owner, _T.lease_until.is_not(None),
                    sa.or_(_T.status.is_(None), _T.status.not_in(sorted(TERMINAL_STATUSES))),
                ).values(lease_until=time.time() + self.seconds)
            )
            return int(result.rowcount)

    def release(self) -> None:
        """Stop renewing and hand every lease back (another process may resume at once)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        try:
            with self._write() as db:
                db.execute(sa.update(TASKS).where(
                    _T.lease_owner == self.owner, _T.lease_until.is_not(None)
                ).values(lease_until=None))
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            logger.warning("genlab: could not hand task leases back (%s); they expire in "
                           "%.0f s", exc, self.seconds)
