"""``GET /media/...``: results and uploads, public (no key), rendered on first request."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from starlette.types import Receive, Scope, Send

from genlab.emulator._api.deps import Problem, State

router = APIRouter()


@router.head("/media/{key:path}", include_in_schema=False)
@router.get("/media/{key:path}", tags=["emulator"], summary="Media files (public, no key needed)")
async def media(key: str, state: State) -> Response:
    # The bounded store may evict (unlink) a file at any moment, so the answer is sent from a
    # hard link of its own (a second name for the same bytes, in the store's scratch folder),
    # made before the answer starts and removed when it ends: eviction removes only the
    # store's name. This relies on no web framework's internals (Starlette's FileResponse
    # opens its path itself, whatever was opened before). A file evicted before it could be
    # linked is rendered again, a few tries at most.
    for _ in range(3):
        stored = await state.media(key)
        if stored is None:
            raise Problem(404, "MEDIA_NOT_FOUND", f"no media at {key!r} (yet)")
        pinned = state.store.scratch(stored.path.suffix)
        try:
            os.link(stored.path, pinned)
        except FileNotFoundError:
            continue
        return PinnedFileResponse(pinned, media_type=stored.content_type)
    raise Problem(503, "SERVICE_UNAVAILABLE", "the media store is too busy; try again")


class PinnedFileResponse(FileResponse):
    """A FileResponse over a hard link made for this one answer, removed when it ends.

    The media store may evict (unlink) its own name for the file at any moment; the link keeps
    the bytes until the answer is sent, or the client went away.
    """

    def __init__(self, pinned: Path, *, media_type: str) -> None:
        super().__init__(pinned, media_type=media_type)
        self._pinned = pinned

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._pinned.unlink(missing_ok=True)
