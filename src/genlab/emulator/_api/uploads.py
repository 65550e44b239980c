"""``POST /v1/uploads`` (emulator only): keep a local file; its URL serves as a reference."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends, UploadFile
from fastapi.responses import JSONResponse

from genlab.emulator._api.deps import BaseUrl, Problem, RequestId, State, answer, service_faults
from genlab.emulator._probe import MediaProbeError, probe_media

router = APIRouter()


@router.post(
    "/v1/uploads",
    tags=["emulator"],
    summary="Upload a local file (emulator only)",
    dependencies=[Depends(service_faults)],
)
async def uploads(file: UploadFile, state: State, rid: RequestId, base: BaseUrl) -> JSONResponse:
    cap = state.config.max_body_bytes
    data = await file.read(cap + 1)
    if len(data) > cap:
        raise Problem(413, "PAYLOAD_TOO_LARGE", "the file is too large to upload")
    try:
        info = await asyncio.to_thread(probe_media, data)
    except MediaProbeError as exc:
        raise Problem(400, "INVALID_PARAMETER", f"the upload could not be read: {exc}") from None
    key, stored = state.upload(file.filename or "upload", data)
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
