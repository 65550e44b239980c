"""The interface's four endpoints: submit a video or image task, and query it."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from genlab._wire import Kind
from genlab.emulator._api.deps import (
    DROP_FLAG,
    LATE_503_FLAG,
    BaseUrl,
    EmptyAnswer,
    JsonBody,
    OwnOrigins,
    Problem,
    RequestId,
    State,
    answer,
    service_faults,
    submit_faults,
)

router = APIRouter()
_SUBMIT = [Depends(submit_faults)]
_QUERY = [Depends(service_faults)]


@router.post(
    "/v1/videos/generate", tags=["videos"], summary="Submit a video task", dependencies=_SUBMIT
)
async def videos_generate(
    request: Request, body: JsonBody, state: State, rid: RequestId, own: OwnOrigins
) -> JSONResponse:
    return await _submit(request, body, state, rid, "video", own)


@router.post(
    "/v1/images/generate", tags=["images"], summary="Submit an image task", dependencies=_SUBMIT
)
async def images_generate(
    request: Request, body: JsonBody, state: State, rid: RequestId, own: OwnOrigins
) -> JSONResponse:
    return await _submit(request, body, state, rid, "image", own)


@router.get(
    "/v1/videos/tasks/{task_id}",
    tags=["videos"],
    summary="Query a video task",
    dependencies=_QUERY,
)
async def videos_task(task_id: str, state: State, rid: RequestId, base: BaseUrl) -> JSONResponse:
    return _query(task_id, state, rid, base, "video")


@router.get(
    "/v1/images/tasks/{task_id}",
    tags=["images"],
    summary="Query an image task",
    dependencies=_QUERY,
)
async def images_task(task_id: str, state: State, rid: RequestId, base: BaseUrl) -> JSONResponse:
    return _query(task_id, state, rid, base, "image")


async def _submit(
    request: Request, body: object, state: State, rid: str, kind: Kind, own: frozenset[str]
) -> JSONResponse:
    task = await state.accept(body, kind, rid, own)
    if getattr(request.state, LATE_503_FLAG, False):
        raise EmptyAnswer(503)  # created and billed; the gateway's bare 503 is all that comes
    if state.faults.roll(state.faults.drop_rate):
        setattr(request.state, DROP_FLAG, True)  # accepted and billed, then never answered
    return answer(200, state.acknowledgement(task, rid))


def _query(task_id: str, state: State, rid: str, base: str, kind: Kind) -> JSONResponse:
    task = state.book.get(task_id)
    if task is None or task.kind != kind:
        raise Problem(404, "TASK_NOT_FOUND", f"no {kind} task with id {task_id!r}")
    return answer(200, state.record(task, base, rid))
