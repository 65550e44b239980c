"""The ``cdn`` profile's media host: a second origin serving results at signed links that
expire, with a redirect and generic content types, and no business with the API key."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.types import Receive, Scope, Send

from genlab.emulator._profile_asgi import generic_type, inner, page, respond
from genlab.emulator._profile_controls import Controls


class MediaHost:
    """Signs the emulator's media URLs for ``origin`` and serves them there.

    Args:
        app: the emulator's ASGI app (its ``/media/`` routes serve the bytes).
        controls: the profile's controls (``link_ttl``; the counts of requests seen).
        origin: ``http://host:port`` of the media host's own listener.
    """

    def __init__(self, app: Any, controls: Controls, origin: str) -> None:
        self.app, self.controls, self.origin = app, controls, origin
        self._secret = secrets.token_bytes(16)

    def _signature(self, target: str, expires: str) -> str:
        mac = hmac.new(self._secret, f"{target}|{expires}".encode(), hashlib.sha256)
        return mac.hexdigest()[:32]

    def signed(self, url: str) -> str:
        """The signed link on this host for one of the emulator's media URLs."""
        _, marker, target = url.partition("/media/")
        if not marker:
            return url
        expires = f"{time.time() + self.controls.link_ttl:.3f}"
        token = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
        sig = self._signature(target, expires)
        return f"{self.origin}/cdn/{token}?expires={expires}&signature={sig}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with self.controls.lock:
            self.controls.media_requests += 1
            keyed = any(name.lower() == b"authorization" for name, _ in scope["headers"])
            self.controls.media_with_key += keyed
        if keyed:  # a media host has no business with the API key
            await page(send, 400, "This host takes no Authorization header")
            return
        path = scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if path.startswith("/cdn/"):
            token = path[len("/cdn/"):]
            try:
                target = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            except ValueError:
                await page(send, 404, "Not Found")
                return
            expires = (query.get("expires") or [""])[0]
            signature = (query.get("signature") or [""])[0]
            if not hmac.compare_digest(signature, self._signature(target, expires)):
                await page(send, 403, "AccessDenied: bad signature")
                return
            if float(expires) < time.time():
                await page(send, 403, "AccessDenied: Request has expired")
                return
            blob = f"/blob/{quote(target)}?expires={expires}&signature={signature}"
            await respond(send, 302, [(b"location", blob.encode())], b"")
            return
        if path.startswith("/blob/"):
            await self.app(inner(scope, "/media/" + path[len("/blob/"):], ""), receive,
                           generic_type(send))
            return
        await page(send, 404, "Not Found")
