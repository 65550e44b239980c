"""The small ASGI pieces profiles are built from: scopes, whole answers, pages.

Example:
    >>> inner({"path": "/api/v1/x"}, "/v1/x", "/api")["root_path"]
    '/api'
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from starlette.types import Message, Receive, Scope, Send


def inner(scope: Scope, path: str, prefix: str) -> Scope:
    """The scope the emulator sees: the path under the prefix, which becomes its root path."""
    full = prefix + path
    return {**scope, "path": full, "raw_path": full.encode(), "root_path": prefix}


def origin_port(scope: Scope) -> int | None:
    server = scope.get("server")
    return server[1] if server else None


def port_of(origin: str) -> int:
    return int(origin.rsplit(":", 1)[1])


async def read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def call(app: Any, scope: Scope, body: bytes) -> tuple[int, list[Any], bytes]:
    """Run ``app`` on ``scope`` with ``body``; its status, headers and whole answer."""
    sent = False
    start: dict[str, Any] = {}
    parts: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def capture(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    await app(scope, receive, capture)
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    return int(start.get("status", 500)), headers, b"".join(parts)


async def respond(send: Send, status: int, headers: list[Any], body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def respond_slowly(
    send: Send, receive: Receive, status: int, headers: list[Any], body: bytes, *,
    interval: float, step: int, stop: threading.Event,
) -> bool:
    """Answer ``body`` ``step`` bytes at a time, ``interval`` seconds apart.

    The headers (with the true ``Content-Length``) go at once. The answer stops when the client
    hangs up (False is returned), and the rest goes at once when ``stop`` is set (the server is
    stopping), so neither an abandoned nor a stopping answer lingers.
    """
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    gone = asyncio.ensure_future(_disconnect(receive))
    try:
        for start in range(0, len(body), max(1, step)):
            if stop.is_set():
                await send({"type": "http.response.body", "body": body[start:]})
                return True
            piece = body[start:start + max(1, step)]
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            done, _ = await asyncio.wait({gone}, timeout=interval)
            if done:
                return False
        await send({"type": "http.response.body", "body": b""})
        return True
    finally:
        gone.cancel()


async def _disconnect(receive: Receive) -> None:
    """Return once the client has hung up (the request's body was read before)."""
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
    except Exception:  # a server that cannot tell: taken as gone, never left unretrieved
        return


async def page(send: Send, status: int, title: str) -> None:
    """A proxy's or web server's HTML page (never the interface's JSON envelope)."""
    html = f"<html><head><title>{status} {title}</title></head><body><h1>{title}</h1></body></html>"
    await respond(send, status, [(b"content-type", b"text/html")], html.encode())


def generic_type(send: Send) -> Send:
    """``send`` with the content type made generic, as many object stores answer."""

    async def typed(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message["headers"] if k.lower() != b"content-type"]
            message = {**message, "headers": [*headers,
                                              (b"content-type", b"application/octet-stream")]}
        await send(message)

    return typed


def to_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None
