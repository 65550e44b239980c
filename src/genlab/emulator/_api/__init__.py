"""The emulator's HTTP surface as FastAPI routers, one module per resource.

``tasks``: the interface's four endpoints; ``uploads``: local files as references; ``media``:
results and uploads; ``admin``: the ledger and the faults. ``deps`` holds what they share.
"""

from __future__ import annotations

from fastapi import APIRouter

from genlab.emulator._api import admin, media, tasks, uploads

ROUTERS: tuple[APIRouter, ...] = (tasks.router, uploads.router, media.router, admin.router)

__all__ = ["ROUTERS"]
