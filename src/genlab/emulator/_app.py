"""The emulator's HTTP surface: the interface's four endpoints, uploads, media and the ledger.

Every error answers with the interface's envelope ``{"error": {code, message, status,
request_id}}`` — never FastAPI's 422 or a bare HTML page.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, BinaryIO

import anyio
from fastapi import FastAPI, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from genlab._errors import APIError
from genlab.emulator._openapi import install_openapi
from genlab.emulator._probe import MediaProbeError, probe_media
from genlab.emulator._state import EmulatorState, envelope, error_for
from genlab.emulator._tasks import new_id

DROP_FLAG = "genlab_drop_connection"


class Problem(Exception):
    """An error answer with a code of the emulator's own (auth, not found, too large, ...)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def _request_id(request: Request) -> str:
    rid = getattr(request.state, "request_id", None)
    if rid is None:
        rid = new_id("req")
        request.state.request_id = rid
    return str(rid)


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)


def build_app(state: EmulatorState) -> FastAPI:
    """The FastAPI app around ``state`` (see :func:`genlab.emulator.create_app`)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await state.aclose()

    app = FastAPI(
        title="genlab emulator",
        version="1.0",
        description="A faithful local copy of the video and image generation service.",
        lifespan=lifespan,
    )
    app.state.emulator = state

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        body = envelope(exc.code, exc.message, exc.status, _request_id(request))
        return _json(exc.status, body, exc.headers)

    @app.exception_handler(_EmptyAnswer)
    async def _empty(request: Request, exc: _EmptyAnswer) -> Response:
        return Response(status_code=exc.status)

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> JSONResponse:
        status, body = error_for(exc, _request_id(request))
        return _json(status, body)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        body = envelope("INVALID_PARAMETER", where, 400, _request_id(request))
        return _json(400, body)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}
        code = codes.get(exc.status_code, "HTTP_ERROR")
        body = envelope(code, str(exc.detail), exc.status_code, _request_id(request))
        return _json(exc.status_code, body)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        message = f"the emulator failed: {type(exc).__name__}; this is a bug, please report it"
        return _json(500, envelope("INTERNAL_ERROR", message, 500, _request_id(request)))

    async def guard(request: Request, *, submit: bool = False, inject: bool = True) -> None:
        """Authentication first, then the injected faults (unless ``inject`` is False)."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        expected = state.config.api_key.encode()
        # Compare in constant time so the key cannot be guessed from timings.
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), expected):
            raise Problem(
                401,
                "UNAUTHORIZED",
                "missing or wrong API key; send the header 'Authorization: Bearer <API_KEY>'",
            )
        if not inject:
            return
        faults = state.faults
        if faults.latency > 0:
            await asyncio.sleep(faults.latency)
        if faults.roll(faults.rate_limit_rate):
            raise Problem(
                429,
                "RATE_LIMITED",
                "too many requests; retry after the Retry-After delay",
                headers={"Retry-After": f"{faults.retry_after:g}"},
            )
        if faults.roll(faults.error_rate):
            if submit:
                # A proxy shedding load: the service never saw the request.
                raise _EmptyAnswer(503)
            raise Problem(503, "SERVICE_UNAVAILABLE", "the service is overloaded; try again")

    async def read_json(request: Request) -> Any:
        cap = state.config.max_body_bytes
        declared = request.headers.get("content-length")
        too_big = Problem(
            413,
            "PAYLOAD_TOO_LARGE",
            f"the request body exceeds {cap} bytes; send large media as URLs, not Base64",
        )
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise too_big  # refused before reading a byte of it
        chunks: list[bytes] = []
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > cap:
                raise too_big
            chunks.append(chunk)
        try:
            return json.loads(b"".join(chunks))
        except (ValueError, UnicodeDecodeError) as exc:
            raise Problem(400, "INVALID_PARAMETER", f"the body is not valid JSON: {exc}") from None
        except RecursionError:
            # Found by the reliability suite: thousands of nested brackets made json.loads
            # raise RecursionError, which answered 500. Such a body is the caller's mistake.
            raise Problem(
                400, "INVALID_PARAMETER", "the body is not valid JSON: it is nested too deeply"
            ) from None

    def base_url(request: Request) -> str:
        return state.config.public_url or str(request.base_url)

    async def submit(request: Request, kind: str) -> JSONResponse:
        await guard(request, submit=True)
        body = await read_json(request)
        rid = _request_id(request)
        task = await state.accept(body, kind, rid)
        if state.faults.roll(state.faults.drop_rate):
            setattr(request.state, DROP_FLAG, True)
        created = state.record(task, base_url(request), rid)["created_at"]
        return _json(
            200,
            {
                "task_id": task.task_id,
                "model": task.model,
                "created_at": created,
                "request_id": rid,
            },
        )

    async def query(request: Request, task_id: str, kind: str) -> JSONResponse:
        await guard(request)
        task = state.book.get(task_id)
        if task is None or task.kind != kind:
            raise Problem(404, "TASK_NOT_FOUND", f"no {kind} task with id {task_id!r}")
        return _json(200, state.record(task, base_url(request), _request_id(request)))

    @app.post("/v1/videos/generate", tags=["videos"], summary="Submit a video task")
    async def videos_generate(request: Request) -> JSONResponse:
        return await submit(request, "video")

    @app.post("/v1/images/generate", tags=["images"], summary="Submit an image task")
    async def images_generate(request: Request) -> JSONResponse:
        return await submit(request, "image")

    @app.get("/v1/videos/tasks/{task_id}", tags=["videos"], summary="Query a video task")
    async def videos_task(request: Request, task_id: str) -> JSONResponse:
        return await query(request, task_id, "video")

    @app.get("/v1/images/tasks/{task_id}", tags=["images"], summary="Query an image task")
    async def images_task(request: Request, task_id: str) -> JSONResponse:
        return await query(request, task_id, "image")

    @app.post("/v1/uploads", tags=["emulator"], summary="Upload a local file (emulator only)")
    async def uploads(request: Request, file: UploadFile) -> JSONResponse:
        await guard(request)
        data = await file.read(state.config.max_body_bytes + 1)
        if len(data) > state.config.max_body_bytes:
            raise Problem(413, "PAYLOAD_TOO_LARGE", "the file is too large to upload")
        try:
            info = await asyncio.to_thread(probe_media, data)
        except MediaProbeError as exc:
            raise Problem(
                400, "INVALID_PARAMETER", f"the upload could not be read: {exc}"
            ) from None
        key, stored = state.upload(file.filename or "upload", data)
        return _json(
            200,
            {
                "url": f"{base_url(request).rstrip('/')}/media/{key}",
                "content_type": stored.content_type,
                "size_bytes": stored.size,
                "kind": info.kind,
                "width": info.width,
                "height": info.height,
                "duration": info.duration,
                "request_id": _request_id(request),
            },
        )

    @app.head("/media/{key:path}", include_in_schema=False)
    @app.get("/media/{key:path}", tags=["emulator"], summary="Media files (public, no key needed)")
    async def media(key: str) -> Response:
        # Found by the reliability suite: with a small store, a file could be evicted (unlinked)
        # between finding it and sending it, and the answer was a 500 or a body cut short.
        # The file is now opened first; an open file outlives its unlinking. When it was
        # evicted before it could be opened, it is rendered again (a few tries at most).
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

    @app.get("/v1/emulator/ledger", tags=["emulator"], summary="Accepted submissions and credits")
    async def ledger(request: Request) -> JSONResponse:
        # Found by the reliability suite: the control endpoints (ledger, faults) were subject
        # to the faults they control, so after PUT {"error_rate": 1} no request could ever
        # turn the faults off again. They are the test harness, not the service: no faults.
        await guard(request, inject=False)
        entries = state.ledger()
        credits = sum(e["credits"] or 0 for e in entries)
        return _json(200, {"submissions": entries, "count": len(entries), "total_credits": credits})

    @app.get("/v1/emulator/faults", tags=["emulator"], summary="The injected faults")
    async def get_faults(request: Request) -> JSONResponse:
        await guard(request, inject=False)
        return _json(200, state.faults.as_dict())

    @app.put("/v1/emulator/faults", tags=["emulator"], summary="Change the injected faults")
    async def put_faults(request: Request) -> JSONResponse:
        await guard(request, inject=False)
        changes = await read_json(request)
        if not isinstance(changes, dict):
            raise Problem(400, "INVALID_PARAMETER", "send a JSON object of fault settings")
        try:
            state.faults.update(**changes)
        except (ValueError, TypeError) as exc:
            raise Problem(400, "INVALID_PARAMETER", str(exc)) from None
        return _json(200, state.faults.as_dict())

    install_openapi(app)
    return app


class HeldFileResponse(FileResponse):
    """A FileResponse over a file opened before the response was returned.

    The media store may evict (unlink) the path at any moment; the open file stays readable.
    Starlette reads the body through ``_open_file``; where a Starlette version lacks that hook,
    it opens the path itself, as before.
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


class _EmptyAnswer(Exception):
    """Answer with a bare status and no body (a load balancer's 503)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Shell:
    """The outermost ASGI layer: it drops a connection after a submit when told to.

    Dropping must happen outside Starlette so the server's own transport can be reached;
    without one (an in-process transport) the drop surfaces as ``ConnectionResetError``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start" and scope.get("state", {}).get(DROP_FLAG):
                transport = getattr(getattr(send, "__self__", None), "transport", None)
                if transport is None:
                    raise ConnectionResetError("the emulator dropped the connection (fault)")
                # Reset the connection; the answer below then goes nowhere, quietly.
                transport.abort()
            await send(message)

        await self.app(scope, receive, guarded)
