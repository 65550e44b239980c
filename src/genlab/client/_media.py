"""Media bytes over the client's one HTTP stack: results, covers, anything at a public URL.

Media URLs are public and may live on another host (a CDN, a signed bucket URL), so media
requests never carry the API key, to any host, and follow redirects. They are retried like a
GET (network trouble, 429, 5xx). Every failure is a :class:`~genlab.MediaError` naming the URL
without its query string, where signed URLs keep their credentials.

Example:
    data = await fetch_media(http, record.results[0].url, max_bytes=8 * MB)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx

from genlab._errors import APIError, MediaError, RateLimitError, ServerError
from genlab.client._transport import MAX_REDIRECTS, Http

T = TypeVar("T")

MB = 1024 * 1024
MAX_MEDIA_BYTES = 64 * MB
"""The default limit of :func:`fetch_media`: no media item is read into memory past it."""
CHUNK = 1 << 16

# The client's default Accept (application/json) is for the API; a media host may negotiate.
_MEDIA_HEADERS = {"Accept": "*/*"}


async def stream_media(
    http: Http, url: str, consume: Callable[[httpx.Response], Awaitable[T]]
) -> T:
    """GET ``url`` and hand the streaming 2xx response to ``consume``; return what it returns.

    A retry calls ``consume`` again on a fresh response, so it must start over (e.g. reopen
    its file for writing). A relative URL is resolved against the service's base URL.

    Raises:
        MediaError: not an http(s) URL, an error status (after retries where they are safe),
            network trouble that outlasted the retries, or what ``consume`` raised as such.
    """
    try:
        target = httpx.URL(http.config.base_url).join(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise MediaError(f"not a valid URL ({exc})", url=url) from None
    if target.scheme not in ("http", "https"):
        raise MediaError("only http(s) media URLs are fetched", url=url)
    # Each hop is checked by httpx: the Authorization header is never set on media requests,
    # and httpx drops it anyway when a redirect leaves the origin.
    try:
        async for attempt in http.get_retrying():
            with attempt:
                async with http.client.stream(
                    "GET", target, headers=_MEDIA_HEADERS, follow_redirects=True
                ) as response:
                    if not response.is_success:
                        raise_for_media(response, url)
                    return await consume(response)
    except (ServerError, RateLimitError) as exc:  # retries used up
        reason = f"HTTP {exc.status}; try again later"
        raise MediaError(reason, url=url, status=exc.status) from None
    except httpx.TooManyRedirects:
        raise MediaError(f"more than {MAX_REDIRECTS} redirects", url=url) from None
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        raise MediaError(f"{type(exc).__name__}: {exc}", url=url) from exc
    raise AssertionError("stamina gave up without raising")  # pragma: no cover


def raise_for_media(response: httpx.Response, url: str) -> None:
    """The error for a media host's non-2xx answer: 429 and 5xx are retried like a GET's;
    anything else is a :class:`~genlab.MediaError` at once.

    A media host never sees the API key, so a 401/403 there is about the link, not the key:
    signed URLs expire, and the message says so.
    """
    status = response.status_code
    if status == 429:
        raise RateLimitError("the media host is rate limiting", retry_after=_retry_after(response))
    if status >= 500:
        raise ServerError("the media host failed", status=status)
    hint = None
    if status in MediaError.EXPIRED_STATUSES:
        hint = (
            "the link may have expired (signed media URLs do): fetch the task's record again "
            "for fresh URLs (client.download(record) does so by itself)"
        )
    raise MediaError(f"HTTP {status}", url=url, status=status, hint=hint)


def _retry_after(response: httpx.Response) -> float | None:
    error = APIError.from_response(429, None, headers=response.headers)
    return error.retry_after if isinstance(error, RateLimitError) else None


async def read_capped(response: httpx.Response, max_bytes: int) -> bytes:
    """A response's whole body, refusing (MediaError) anything larger than ``max_bytes``.

    A ``Content-Length`` beyond the limit is refused before any byte is read.
    """
    url = str(response.request.url)
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise MediaError(_too_large(int(declared), max_bytes), url=url)
    buffer = bytearray()
    async for chunk in response.aiter_bytes(CHUNK):
        buffer += chunk
        if len(buffer) > max_bytes:
            raise MediaError(_too_large(None, max_bytes), url=url)
    return bytes(buffer)


def _too_large(size: int | None, max_bytes: int) -> str:
    what = f"it is {size / MB:.1f} MB" if size is not None else "it is larger"
    return f"{what}; at most {max_bytes / MB:g} MB is read (max_bytes={max_bytes})"


async def fetch_media(http: Http, url: str, *, max_bytes: int = MAX_MEDIA_BYTES) -> bytes:
    """The bytes behind a media URL, at most ``max_bytes`` of them.

    Raises:
        MediaError: see :func:`stream_media`; also when the media is larger than ``max_bytes``.
    """
    async def read(response: httpx.Response) -> bytes:
        return await read_capped(response, max_bytes)

    return await stream_media(http, url, read)
