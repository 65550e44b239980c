"""Fetch and probe a request's reference media, and judge them with the catalog's rules.

Every fetch has a timeout and a byte cap, and is streamed to a scratch file, never held in
memory; a request's fetches share one byte budget (the caps of its items summed, at most
``FetchLimits.max_request_bytes``) and run a few at a time. Only http, https and data URLs are
followed. URLs of the emulator's own media (same scheme, host and port; uploads and earlier
results) are read from its store, rendering a result on demand, so in-process use without a
listening server works too.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

import httpx

from genlab._errors import ErrorDetail
from genlab.catalog import MB, RequestBase, media_problems_for
from genlab.emulator._store import MediaStore
from genlab.media import MediaInfo, MediaProbeError, probe

DEFAULT_MAX_BYTES = 100 * MB
DEFAULT_MAX_REQUEST_BYTES = 512 * MB
DEFAULT_CONCURRENCY = 4
OwnMedia = Callable[[str], Awaitable[Path | None]]
"""Finds the file of one of the emulator's own media keys (rendering it if need be)."""

_B64_SLICE = 1 * MB  # Base64 characters decoded at a time (a multiple of 4)


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """How patient and how generous reference fetching is.

    Raises ``ValueError`` for a limit that would refuse every reference.

    Attributes:
        timeout: seconds allowed for fetching one reference, start to end.
        max_bytes: the cap of one item where the model's media rules state none.
        max_request_bytes: the most one request's references may add up to.
        concurrency: references of one request fetched at once.
    """

    timeout: float = 10.0
    max_bytes: int = DEFAULT_MAX_BYTES
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    concurrency: int = DEFAULT_CONCURRENCY

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError("the fetch timeout must be positive, e.g. 10 (seconds)")
        if self.max_bytes < 1 or self.max_request_bytes < 1:
            raise ValueError(
                "reference fetch caps must be at least 1 byte, e.g. 512 MB for a request"
            )
        if self.concurrency < 1:
            raise ValueError("the fetch concurrency must be at least 1, e.g. 4")


@dataclass
class Fetched:
    """A request's probed references; their files stay readable until the context ends."""

    infos: dict[str, list[MediaInfo]] = field(default_factory=dict)
    problems: list[ErrorDetail] = field(default_factory=list)
    files: dict[tuple[str, int], Path] = field(default_factory=dict)


class _FetchError(Exception):
    pass


class _Budget:
    """Bytes a request's fetches may still take, shared by all of them."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.left = total

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise _FetchError(
                f"pushes the request's reference media past {self.total // MB} MB in all"
            )


@contextlib.asynccontextmanager
async def fetched_references(
    request: RequestBase,
    *,
    store: MediaStore,
    http: httpx.AsyncClient,
    limits: FetchLimits,
    own_origins: Collection[str] = (),
    own_media: OwnMedia | None = None,
) -> AsyncIterator[Fetched]:
    """Fetch and probe every reference of ``request``; scratch files are removed on exit.

    Yields:
        The probed items per list name, in order (what :func:`genlab.catalog.plan_output`
        reads), every problem (fetching, probing, then the catalog's media rules), and the
        file each item was read from.
    """
    jobs: list[tuple[str, int, str, int]] = []
    for list_name in request.LIST_RULES:
        rules = request.media_requirements(list_name)
        # The model's own per-item limit wins (video-e takes 200 MB videos): refusing less
        # would refuse what the service accepts. Disk, not memory, holds what is fetched.
        cap = rules.max_bytes if rules and rules.max_bytes else limits.max_bytes
        for i, item in enumerate(request.references(list_name)):
            url = item if isinstance(item, str) else item.url
            jobs.append((list_name, i, url, cap))
    out = Fetched()
    if not jobs:
        yield out
        return
    name = request.model_name
    budget = _Budget(min(limits.max_request_bytes, sum(job[3] for job in jobs)))
    gate = asyncio.Semaphore(limits.concurrency)
    scratch: list[Path] = []

    async def one(list_name: str, i: int, url: str, cap: int) -> MediaInfo | ErrorDetail:
        where = f"{list_name}[{i}]"
        async with gate:
            try:
                path = await _own_file(url, own_origins, own_media)
                if path is None:
                    path = store.scratch()
                    scratch.append(path)
                    await _fetch(url, path, http=http, limits=limits, cap=cap, budget=budget)
                out.files[(list_name, i)] = path
                return await asyncio.to_thread(_probe_path, path)
            except _FetchError as exc:
                return ErrorDetail((list_name, i, "url"), f"{name}: {where} {exc}")
            except MediaProbeError as exc:
                message = f"{name}: {where} could not be read: {exc}"
                return ErrorDetail((list_name, i, "url"), message)

    try:
        results = await asyncio.gather(*(one(*job) for job in jobs))
        for (list_name, _, _, _), result in zip(jobs, results, strict=True):
            if isinstance(result, ErrorDetail):
                out.problems.append(result)
            else:
                out.infos.setdefault(list_name, []).append(result)
        if not out.problems:
            out.problems = media_problems_for(request, out.infos)
        yield out
    finally:
        for path in scratch:
            path.unlink(missing_ok=True)


def _probe_path(path: Path) -> MediaInfo:
    try:
        with path.open("rb") as file:
            return probe(file, strict=True)
    except FileNotFoundError:
        raise MediaProbeError("the file went away while it was read; send it again") from None


def origin(url: str) -> str:
    """``scheme://host:port`` of a URL, with the default port made explicit.

    Example:
        >>> origin("http://Emulator/media/x"), origin("https://a.b:8443/")
        ('http://emulator:80', 'https://a.b:8443')
    """
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port or default}"


async def _own_file(
    url: str, own_origins: Collection[str], own_media: OwnMedia | None
) -> Path | None:
    """The store's file for one of the emulator's own media URLs; None for any other URL."""
    if own_media is None or url[:5].lower() == "data:":
        return None
    parts = urlsplit(url)
    if not parts.path.startswith("/media/") or origin(url) not in own_origins:
        return None
    path = await own_media(unquote(parts.path[len("/media/") :]))
    if path is None:
        raise _FetchError(f"{_show(url)} is not (or no longer) in the emulator's media store")
    return path


def _show(url: str) -> str:
    return url if len(url) <= 80 else url[:77] + "..."


async def _fetch(
    url: str, path: Path, *, http: httpx.AsyncClient, limits: FetchLimits, cap: int,
    budget: _Budget,
) -> None:
    """Stream ``url`` into ``path``, refusing it past ``cap`` bytes or the request's budget."""
    with path.open("wb") as file:
        if url[:5].lower() == "data:":
            await asyncio.to_thread(_decode_data_uri, url, file, cap, budget)
            return
        if urlsplit(url).scheme not in ("http", "https"):
            raise _FetchError(f"{_show(url)!r} is not an http(s) or data URL")
        timeout = limits.timeout
        try:
            async with asyncio.timeout(timeout):
                # Raw bytes, none compressed: a gzip bomb must not inflate past the cap.
                headers = {"Accept-Encoding": "identity"}
                async with http.stream("GET", url, headers=headers) as response:
                    if response.status_code != 200:
                        raise _FetchError(
                            f"could not be fetched: {_show(url)} answered HTTP "
                            f"{response.status_code}"
                        )
                    declared = response.headers.get("content-length")
                    if declared and declared.isdigit() and int(declared) > cap:
                        raise _FetchError(f"is {int(declared)} bytes; more than the {cap} allowed")
                    total = 0
                    async for chunk in response.aiter_raw():
                        total += len(chunk)
                        if total > cap:
                            raise _FetchError(f"is larger than the {cap} bytes allowed")
                        budget.take(len(chunk))
                        file.write(chunk)
        except TimeoutError:
            raise _FetchError(f"could not be fetched within {timeout:g} s: {_show(url)}") from None
        except httpx.HTTPError as exc:
            reason = type(exc).__name__
            raise _FetchError(f"could not be fetched ({reason}): {_show(url)}") from None


def _decode_data_uri(url: str, file: IO[bytes], cap: int, budget: _Budget) -> None:
    """Decode a ``data:`` URI into ``file`` a slice at a time: a 48 MB value is never copied
    whole, and no single step holds the interpreter for long."""
    comma = url.find(",")
    if comma < 0:
        raise _FetchError("is a malformed data URI (no comma)")
    size = len(url) - comma - 1
    if size * 3 // 4 > cap:
        raise _FetchError(f"is a data URI larger than the {cap} bytes allowed")
    budget.take(size * 3 // 4)
    if not url[:comma].lower().endswith(";base64"):
        file.write(unquote(url[comma + 1 :]).encode("latin-1", errors="replace"))
        return
    carry = ""
    for start in range(comma + 1, len(url), _B64_SLICE):
        piece = carry + url[start : start + _B64_SLICE]
        if not piece.isalnum() and any(c.isspace() for c in piece):
            piece = "".join(piece.split())  # line breaks are allowed; rarely present
        whole = len(piece) - len(piece) % 4
        carry = piece[whole:]
        try:
            file.write(base64.b64decode(piece[:whole], validate=False))
        except (binascii.Error, ValueError):
            raise _FetchError("is a data URI whose Base64 payload is invalid") from None
    if carry.rstrip("="):
        raise _FetchError("is a data URI whose Base64 payload is invalid (cut short)")
