"""The emulator's control endpoints: the ledger of billed submissions and the injected faults.

They are the test harness, not the service: they need the key but are never themselves subject
to injected faults, so faults switched on can always be switched off again.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from genlab.emulator._api.deps import JsonBody, Problem, State, answer, require_key

router = APIRouter(tags=["emulator"], dependencies=[Depends(require_key)])


@router.get("/v1/emulator/ledger", summary="Accepted submissions and credits")
async def ledger(state: State) -> JSONResponse:
    entries = state.ledger()
    credits = sum(e["credits"] or 0 for e in entries)
    return answer(200, {"submissions": entries, "count": len(entries), "total_credits": credits})


@router.get("/v1/emulator/faults", summary="The injected faults")
async def get_faults(state: State) -> JSONResponse:
    return answer(200, state.faults.as_dict())


@router.put("/v1/emulator/faults", summary="Change the injected faults")
async def put_faults(changes: JsonBody, state: State) -> JSONResponse:
    if not isinstance(changes, dict):
        raise Problem(400, "INVALID_PARAMETER", "send a JSON object of fault settings")
    try:
        state.faults.update(**changes)
    except (ValueError, TypeError) as exc:
        raise Problem(400, "INVALID_PARAMETER", str(exc)) from None
    return answer(200, state.faults.as_dict())
