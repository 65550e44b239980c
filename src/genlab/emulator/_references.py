"""Fetch and probe a request's reference media, and judge them with the catalog's rules.

Every fetch has a timeout and a byte cap; only http, https and data URLs are followed. URLs
the emulator itself serves (uploads, earlier results) are read from its store directly, so
in-process use without a listening server works too.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import httpx

from genlab._errors import ErrorDetail
from genlab.catalog import MediaInfo, RequestBase, media_problems_for
from genlab.emulator._probe import MediaProbeError, probe_media
from genlab.emulator._store import MediaStore

DEFAULT_MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """How patient and how generous reference fetching is."""

    timeout: float = 10.0
    max_bytes: int = DEFAULT_MAX_BYTES


async def probe_references(
    request: RequestBase,
    *,
    store: MediaStore,
    http: httpx.AsyncClient,
    limits: FetchLimits,
) -> tuple[dict[str, list[MediaInfo]], list[ErrorDetail]]:
    """Fetch and probe every reference of ``request``.

    Returns:
        The probed items per list name, in order (what :func:`genlab.catalog.plan_output`
        reads), and every problem: fetching, probing, then the catalog's media rules.
    """
    jobs: list[tuple[str, int, str]] = []
    for list_name in request.LIST_RULES:
        for i, item in enumerate(request.references(list_name)):
            url = item if isinstance(item, str) else item.url
            jobs.append((list_name, i, url))
    if not jobs:
        return {}, []
    name = request.model_name

    async def one(list_name: str, i: int, url: str) -> MediaInfo | ErrorDetail:
        rules = request.media_requirements(list_name)
        cap = (
            min(limits.max_bytes, rules.max_bytes * 2)
            if rules and rules.max_bytes
            else (limits.max_bytes)
        )
        where = f"{list_name}[{i}]"
        try:
            data = await _fetch(url, store=store, http=http, timeout=limits.timeout, cap=cap)
            return await asyncio.to_thread(probe_media, data)
        except _FetchError as exc:
            return ErrorDetail((list_name, i, "url"), f"{name}: {where} {exc}")
        except MediaProbeError as exc:
            return ErrorDetail((list_name, i, "url"), f"{name}: {where} could not be read: {exc}")

    results = await asyncio.gather(*(one(*job) for job in jobs))
    infos: dict[str, list[MediaInfo]] = {}
    problems: list[ErrorDetail] = []
    for (list_name, _, _), result in zip(jobs, results, strict=True):
        if isinstance(result, ErrorDetail):
            problems.append(result)
        else:
            infos.setdefault(list_name, []).append(result)
    if problems:
        return infos, problems
    return infos, media_problems_for(request, infos)


class _FetchError(Exception):
    pass


def _show(url: str) -> str:
    return url if len(url) <= 80 else url[:77] + "..."


async def _fetch(
    url: str, *, store: MediaStore, http: httpx.AsyncClient, timeout: float, cap: int
) -> bytes:
    if url[:5].lower() == "data:":
        return _decode_data_uri(url, cap)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise _FetchError(f"{_show(url)!r} is not an http(s) or data URL")
    own = _own_media_key(parts.path)
    if own is not None:
        data = store.read(own)
        if data is None:
            raise _FetchError(f"{_show(url)} is not (or no longer) in the emulator's media store")
        return data
    try:
        async with asyncio.timeout(timeout):
            async with http.stream("GET", url, follow_redirects=True) as response:
                if response.status_code != 200:
                    raise _FetchError(
                        f"could not be fetched: {_show(url)} answered HTTP {response.status_code}"
                    )
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > cap:
                    raise _FetchError(f"is {int(declared)} bytes; more than the {cap} allowed")
                chunks: list[bytes] = []
                total = 0
                async for chunk in response.aiter_bytes():
                    total += len(chunk)
                    if total > cap:
                        raise _FetchError(f"is larger than the {cap} bytes allowed")
                    chunks.append(chunk)
                return b"".join(chunks)
    except TimeoutError:
        raise _FetchError(f"could not be fetched within {timeout:g} s: {_show(url)}") from None
    except httpx.HTTPError as exc:
        reason = type(exc).__name__
        raise _FetchError(f"could not be fetched ({reason}): {_show(url)}") from None


def _own_media_key(path: str) -> str | None:
    if path.startswith("/media/"):
        return unquote(path[len("/media/") :])
    return None


def _decode_data_uri(url: str, cap: int) -> bytes:
    header, sep, payload = url.partition(",")
    if not sep:
        raise _FetchError("is a malformed data URI (no comma)")
    if len(payload) * 3 // 4 > cap:
        raise _FetchError(f"is a data URI larger than the {cap} bytes allowed")
    if header.lower().endswith(";base64"):
        try:
            return base64.b64decode(payload, validate=False)
        except (binascii.Error, ValueError):
            raise _FetchError("is a data URI whose Base64 payload is invalid") from None
    return unquote(payload).encode("latin-1", errors="replace")
