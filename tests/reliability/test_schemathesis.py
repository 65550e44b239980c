"""Schemathesis over the emulator's own OpenAPI document: whatever it generates from
``/openapi.json``, the emulator never answers 5xx, and every 4xx is the error envelope.

``PUT /v1/emulator/faults`` is left out of that run (it switches on injected 5xx on purpose);
its own test below checks it refuses settings that would break later requests.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.core.result import Ok

from genlab.emulator import create_app

from ._bodies import json_values
from ._support import KEY, guard_fetches
from .conftest import Scale, current_scale
from .figures import Figures

SCALE = current_scale()
INJECTS_FAULTS = "PUT /v1/emulator/faults"
AUTH = {"Authorization": f"Bearer {KEY}"}


def is_envelope(body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
        and isinstance(error.get("status"), int)
        and isinstance(error.get("request_id"), str)
    )


@pytest.mark.slow
def test_schemathesis_finds_no_server_error(scale: Scale, figures: Figures) -> None:
    section = figures.section("schemathesis", "Schemathesis over the emulator's /openapi.json")
    app = create_app(api_key=KEY, time_scale=0.01, fetch_timeout=1.0)
    guard_fetches(app)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), "some operations of the document do not load"
    tested = [op for op in operations if op.label != INJECTS_FAULTS]
    statuses: Counter[int] = Counter()
    problems: list[str] = []

    def fuzz(operation: Any) -> None:
        @settings(max_examples=scale.schemathesis_examples, deadline=None, database=None,
                  derandomize=True, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            response = case.call(headers=AUTH, timeout=30)
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                problems.append(f"{operation.label} -> {response.status_code}: "
                                f"{response.text[:200]}")
            elif response.status_code >= 400:
                try:
                    body = response.json()
                except ValueError:
                    body = None
                if not is_envelope(body):
                    problems.append(f"{operation.label} -> {response.status_code} without an "
                                    f"envelope: {response.text[:200]}")

        run()

    for operation in tested:
        fuzz(operation)

    app.emulator.close()
    cases = sum(statuses.values())
    server_errors = sum(c for s, c in statuses.items() if s >= 500)
    section.add("operations in the document", len(operations))
    section.add("operations tested", len(tested))
    section.add("cases", cases)
    section.add("answers by status", ", ".join(f"{s}: {c}" for s, c in sorted(statuses.items())))
    section.goal("5xx answers", server_errors, "0", server_errors == 0)
    bad_4xx = sum(1 for p in problems if "without an envelope" in p)
    section.goal("4xx answers without the error envelope", bad_4xx, "0", bad_4xx == 0)
    for problem in problems[:3]:
        section.note(problem)
    section.assert_goals()
    assert cases >= len(tested)


# --- the fault settings ------------------------------------------------------------------


@pytest.fixture
async def emulator_app() -> AsyncIterator[Any]:
    app = create_app(api_key=KEY, time_scale=0.01)
    yield app
    app.emulator.close()


@pytest.fixture
async def http(emulator_app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=emulator_app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://emulator",
                                 headers=AUTH) as client:
        yield client


FAULT_NAMES = ["fail_rate", "error_rate", "error_after_billing", "rate_limit_rate",
               "retry_after", "latency", "drop_rate", "seed"]
fault_changes = st.dictionaries(
    st.sampled_from(FAULT_NAMES),
    st.one_of(json_values, st.floats(-2, 2), st.integers(-5, 5)),
    max_size=3,
)


@pytest.mark.slow
@settings(max_examples=SCALE.wild_examples, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=fault_changes)
async def test_fault_settings_are_checked_when_set(
    changes: dict[str, Any], http: httpx.AsyncClient, emulator_app: Any
) -> None:
    faults = emulator_app.emulator.faults
    faults.update(fail_rate=0, error_rate=0, rate_limit_rate=0, latency=0, drop_rate=0)
    before = faults.as_dict()
    answer = await http.put("/v1/emulator/faults", json=changes)
    assert answer.status_code in (200, 400), answer.text
    after = faults.as_dict()
    if answer.status_code == 400:
        assert is_envelope(answer.json()) and after == before  # nothing half-applied
        return
    assert answer.json() == after
    for name, value in after.items():
        if name == "seed":
            assert value is None or (isinstance(value, int) and not isinstance(value, bool))
        else:
            assert isinstance(value, int | float) and not isinstance(value, bool)
            assert math.isfinite(value) and value >= 0
    # Whatever was accepted, a request is answered: a task query or an injected fault.
    faults.update(latency=0)
    probe = await http.get("/v1/videos/tasks/unknown")
    assert probe.status_code in (404, 429, 503), probe.text
    assert is_envelope(probe.json())


async def test_faults_can_always_be_switched_off(http: httpx.AsyncClient) -> None:
    # The control endpoints are the harness, not the service: with every request failing,
    # the faults and the ledger still answer, so the faults can be switched off again.
    on = await http.put("/v1/emulator/faults", json={"error_rate": 1, "rate_limit_rate": 1})
    assert on.status_code == 200
    assert (await http.get("/v1/videos/tasks/t")).status_code in (429, 503)
    assert (await http.get("/v1/emulator/ledger")).status_code == 200
    off = await http.put("/v1/emulator/faults", json={"error_rate": 0, "rate_limit_rate": 0})
    assert off.status_code == 200
    assert (await http.get("/v1/videos/tasks/t")).status_code == 404
