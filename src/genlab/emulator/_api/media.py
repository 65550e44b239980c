"""``GET /media/...``: results and uploads, public (no key), rendered on first request."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import BinaryIO

import anyio
from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from starlette.types import Receive, Scope, Send

from genlab.emulator._api.deps import Problem, State

router = APIRouter()


@router.head("/media/{key:path}", include_in_schema=False)
@router.get("/media/{key:path}", tags=["emulator"], summary="Media files (public, no key needed)")
async def media(key: str, state: State) -> Response:
    # The bounded store may evict (unlink) a file at any moment, so the file is opened before
    # the answer starts: an open file outlives its unlinking. A file evicted before it could be
    # opened is rendered again, a few tries at most.
    for _ in range(3):
        stored = await state.media(key)
        if stored is None:
            raise Problem(404, "MEDIA_NOT_FOUND", f"no media at {key!r} (yet)")
        try:
            held = stored.path.open("rb")
        except FileNotFoundError:
            continue
        return HeldFileResponse(held, stored.path, media_type=stored.content_type)
    raise Problem(503, "SERVICE_UNAVAILABLE", "the media store is too busy; try again")


class HeldFileResponse(FileResponse):
    """A FileResponse over a file opened before the response was returned.

    The media store may evict (unlink) the path at any moment; the open file stays readable.
    Starlette reads the body through ``_open_file``; where a Starlette version lacks that hook,
    it opens the path itself.
    """

    def __init__(self, held: BinaryIO, path: Path, *, media_type: str) -> None:
        super().__init__(path, media_type=media_type, stat_result=os.fstat(held.fileno()))
        self._held = held

    @asynccontextmanager
    async def _open_file(self) -> AsyncIterator[anyio.AsyncFile[bytes]]:
        yield anyio.wrap_file(self._held)  # closed by __call__, once

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._held.close()
