"""The emulator's ASGI app: the routers of ``_api``, one error answer for every failure, and
the outermost layer that can drop a connection.

Every error answers with the interface's envelope ``{"error": {code, message, status,
request_id}}`` — never FastAPI's 422 or a bare HTML page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from genlab._errors import APIError
from genlab.emulator._api import ROUTERS
from genlab.emulator._api.deps import (
    DROP_FLAG,
    EmptyAnswer,
    Problem,
    answer,
    envelope,
    request_id,
)
from genlab.emulator._openapi import install_openapi
from genlab.emulator._state import EmulatorState


def build_app(state: EmulatorState) -> FastAPI:
    """The FastAPI app around ``state`` (see :func:`genlab.emulator.create_app`)."""
    app = FastAPI(
        title="genlab emulator",
        version="1.0",
        description="A faithful local copy of the video and image generation service.",
        lifespan=_lifespan,
        exception_handlers={
            Problem: _problem,
            EmptyAnswer: _empty,
            APIError: _api_error,
            RequestValidationError: _validation,
            StarletteHTTPException: _http,
            Exception: _crash,
        },
    )
    app.state.emulator = state
    for router in ROUTERS:
        app.include_router(router)
    install_openapi(app)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: EmulatorState = app.state.emulator
    yield
    await state.aclose()


# --- one envelope for every failure ----------------------------------------------------------


async def _problem(request: Request, exc: Problem) -> JSONResponse:
    body = envelope(exc.code, exc.message, exc.status, request_id(request))
    return answer(exc.status, body, exc.headers)


async def _empty(request: Request, exc: EmptyAnswer) -> Response:
    return Response(status_code=exc.status)


async def _api_error(request: Request, exc: APIError) -> JSONResponse:
    rid = exc.request_id or request_id(request)
    return answer(exc.status, envelope(exc.code, exc.message, exc.status, rid))


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return answer(400, envelope("INVALID_PARAMETER", where, 400, request_id(request)))


async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}
    code = codes.get(exc.status_code, "HTTP_ERROR")
    body = envelope(code, str(exc.detail), exc.status_code, request_id(request))
    return answer(exc.status_code, body)


async def _crash(request: Request, exc: Exception) -> JSONResponse:
    message = f"the emulator failed: {type(exc).__name__}; this is a bug, please report it"
    return answer(500, envelope("INTERNAL_ERROR", message, 500, request_id(request)))


class Shell:
    """The outermost ASGI layer: it drops a connection after a submit when told to, and adds
    ``headers`` to every answer (the emulator's ``Genlab-Time-Scale``).

    Dropping must happen outside Starlette so the server's own transport can be reached;
    without one (an in-process transport) the drop surfaces as ``ConnectionResetError``.
    """

    def __init__(self, app: ASGIApp, headers: Mapping[str, str] | None = None) -> None:
        self.app = app
        self.headers = [(k.lower().encode("latin-1"), v.encode("latin-1"))
                        for k, v in (headers or {}).items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start" and self.headers:
                message = {**message, "headers": [*message.get("headers", ()), *self.headers]}
            if message["type"] == "http.response.start" and scope.get("state", {}).get(DROP_FLAG):
                transport = getattr(getattr(send, "__self__", None), "transport", None)
                if transport is None:
                    raise ConnectionResetError("the emulator dropped the connection (fault)")
                # Reset the connection; the answer below then goes nowhere, quietly.
                transport.abort()
            await send(message)

        await self.app(scope, receive, guarded)
