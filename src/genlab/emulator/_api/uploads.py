"""``POST /v1/uploads`` (emulator only): keep a local file; its URL serves as a reference.

The key is checked before a byte of the body is read (the route declares no body parameter,
so FastAPI reads nothing first). The multipart body is then parsed as it arrives and the file
part streamed to a scratch file, refused (413) as soon as it passes the cap, or before reading
at all when ``Content-Length`` already says so: nobody can fill the disk or the memory.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import IO, TYPE_CHECKING

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from python_multipart.multipart import MultipartParser, parse_options_header

from genlab.emulator._api.deps import BaseUrl, Problem, RequestId, State, answer, service_faults
from genlab.media import MediaInfo, MediaProbeError, probe

if TYPE_CHECKING:  # a typing-only name of python-multipart
    from python_multipart.multipart import MultipartCallbacks

router = APIRouter()

# Room for the multipart framing around the file: boundaries and part headers.
_FRAMING = 64 * 1024


@router.post(
    "/v1/uploads",
    tags=["emulator"],
    summary="Upload a local file (emulator only)",
    dependencies=[Depends(service_faults)],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                }
            },
        }
    },
)
async def uploads(request: Request, state: State, rid: RequestId, base: BaseUrl) -> JSONResponse:
    cap = state.config.max_body_bytes
    too_big = Problem(
        413, "PAYLOAD_TOO_LARGE", f"the file is too large to upload (at most {cap} bytes)"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap + _FRAMING:
        raise too_big  # refused before reading a byte of it
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise Problem(
            400,
            "INVALID_PARAMETER",
            "send the file as multipart/form-data in a field named 'file'",
        )
    scratch = state.store.scratch()
    try:
        with scratch.open("wb") as sink:
            receiver = _FilePart(sink, cap)
            parser = MultipartParser(boundary, receiver.callbacks())
            async for chunk in request.stream():
                parser.write(chunk)
                if receiver.too_big:
                    raise too_big
            parser.finalize()
        if receiver.filename is None:
            raise Problem(400, "INVALID_PARAMETER", "the multipart body has no 'file' field")
        try:
            info = await asyncio.to_thread(_probe, scratch)
        except MediaProbeError as exc:
            message = f"the upload could not be read: {exc}"
            raise Problem(400, "INVALID_PARAMETER", message) from None
        key, stored = state.upload(receiver.filename, scratch)
    finally:
        scratch.unlink(missing_ok=True)  # gone already when the store adopted it
    return answer(
        200,
        {
            "url": f"{base.rstrip('/')}/media/{key}",
            "content_type": stored.content_type,
            "size_bytes": stored.size,
            "kind": info.kind,
            "width": info.width,
            "height": info.height,
            "duration": info.duration,
            "request_id": rid,
        },
    )


def _probe(path: Path) -> MediaInfo:
    with path.open("rb") as file:
        return probe(file, strict=True)


class _FilePart:
    """Writes the multipart field ``file`` to ``sink`` as it is parsed; counts its bytes."""

    def __init__(self, sink: IO[bytes], cap: int) -> None:
        self.sink = sink
        self.cap = cap
        self.size = 0
        self.too_big = False
        self.filename: str | None = None
        self._field = b""
        self._value = b""
        self._disposition = b""
        self._writing = False

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self._begin,
            "on_header_field": self._header_field,
            "on_header_value": self._header_value,
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_done,
            "on_part_data": self._data,
        }

    def _begin(self) -> None:
        self._disposition = b""
        self._writing = False

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _header_end(self) -> None:
        if self._field.lower() == b"content-disposition":
            self._disposition = self._value
        self._field = self._value = b""

    def _headers_done(self) -> None:
        _, options = parse_options_header(self._disposition)
        if options.get(b"name") == b"file" and self.filename is None:
            self.filename = options.get(b"filename", b"upload").decode("utf-8", "replace")
            self._writing = True

    def _data(self, data: bytes, start: int, end: int) -> None:
        if not self._writing or self.too_big:
            return
        self.size += end - start
        if self.size > self.cap:
            self.too_big = True
            return
        self.sink.write(data[start:end])
