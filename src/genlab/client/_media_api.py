"""The client's methods for media and local files: uploads, reference URLs, media bytes.

Kept apart from the task methods of :class:`~genlab.AsyncClient`, which inherits them.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from genlab.catalog import media_digest
from genlab.client._files import FileLike
from genlab.client._media import MAX_MEDIA_BYTES, fetch_media
from genlab.client._transport import Http
from genlab.client._uploads import inline_reference, upload


class MediaMethods:
    """Uploads, reference URLs and media bytes, over the client's one HTTP stack."""

    _http: Http
    _supports_uploads: bool = False
    _media_digests: dict[str, str]  # uploaded URL -> digest of its bytes (content addresses)

    @property
    def supports_uploads(self) -> bool:
        """True when the service takes local files through :meth:`upload` (genlab's emulator).

        ``genlab.connect()`` sets it when it starts the embedded emulator; the real service
        has no upload endpoint, so it is False unless set.
        """
        return self._supports_uploads

    @supports_uploads.setter
    def supports_uploads(self, value: bool) -> None:
        self._supports_uploads = bool(value)

    async def upload(self, source: FileLike, filename: str | None = None) -> str:
        """Upload a local file (path or bytes) to the emulator; returns a URL to reference.

        The real service has no upload endpoint: there, give public URLs (or
        :func:`genlab.client.data_uri` for images on models that accept Base64), or let
        :meth:`reference_url` choose.

        Example:
            url = await client.upload("character.png")
            await client.submit(model="video-d", reference_images=[{"url": url}], ...)
        """
        url = await upload(self._http, source, filename)
        # A request naming this URL is identified by these bytes, so re-uploading the same file
        # (a new URL each time) still finds the result already paid for.
        if isinstance(source, bytes):
            self._media_digests[url] = media_digest(source)
        else:
            self._media_digests[url] = await asyncio.to_thread(_file_digest, Path(source))
        return url

    async def reference_url(
        self, data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
    ) -> str:
        """The URL to send for a local file used as reference media.

        Uploaded when :attr:`supports_uploads`; otherwise a ``data:`` URI when the list allows
        them (``allow_data_uri``, from the catalog) and the file is an image.

        Raises:
            InvalidParameterError: the list needs a public http(s) URL; ``field`` names the
                list in the message.

        Example:
            url = await client.reference_url(png, "frame.png", allow_data_uri=True)
        """
        if self.supports_uploads:
            return await self.upload(data, filename)
        return inline_reference(data, filename, allow_data_uri=allow_data_uri, field=field)

    async def fetch_media(self, url: str, *, max_bytes: int = MAX_MEDIA_BYTES) -> bytes:
        """The bytes behind a media URL (a result, a cover), at most ``max_bytes`` of them.

        Fetched like :meth:`download` fetches: retried where safe, redirects followed, and never
        with the API key (media URLs are public and may be on another host).

        Raises:
            MediaError: an error status, network trouble, not an http(s) URL, or larger than
                ``max_bytes`` (64 MiB by default).

        Example:
            png = await client.fetch_media(record.images[0].url)
        """
        return await fetch_media(self._http, url, max_bytes=max_bytes)


def _file_digest(path: Path) -> str:
    # Read in chunks: an upload is streamed from disk, and so is its digest.
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()
