"""Soak: many tasks through ``Client.map`` while every fault is switched on.

What a user relies on: every task ends in a state they can act on (succeeded, failed,
uncertain, refused), nothing is billed twice, every submission that was billed but whose
answer was lost (a dropped connection, a bare 503 after billing) is reported as uncertain,
none is silently resent, and the client's memory stays flat.
"""

from __future__ import annotations

import collections
import gc
import time
from typing import Any

import httpx
import pytest
import stamina.instrumentation

import genlab
from genlab import APIError, SubmissionUncertainError, TaskFailedError
from genlab.client import Outcome
from genlab.emulator._digest import body_digest

from ._support import KEY, rss_mb, serve
from .conftest import Scale
from .figures import Figures

FAULTS = {
    "fail_rate": 0.1,
    "error_rate": 0.05,
    "error_after_billing": 0.5,
    "rate_limit_rate": 0.05,
    "retry_after": 0.05,
    "drop_rate": 0.02,
    "seed": 20260611,
}
CONCURRENCY = 64
# Generous: 1,000 finished tasks with their journal entries and records cost a few MB; a leak
# of the HTTP layer or of waits would grow with every request and blow far past this.
RSS_GROWTH_LIMIT_MB = 150.0


def soak_requests(n: int, prefix: str) -> list[dict[str, Any]]:
    """Cheap requests with unique bodies: image-d 512 and, every tenth, a short 480P video."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 10 == 9:
            out.append({"model": "video-a", "prompt": f"{prefix} clip {i}: a fox in snow",
                        "resolution": "480P", "duration": 2})
        else:
            out.append({"model": "image-d", "prompt": f"{prefix} sketch {i}: a kite",
                        "resolution": "512"})
    return out


def admin(base_url: str, method: str, path: str, body: Any = None) -> Any:
    """An emulator control call (the faults and the ledger are never faulted themselves)."""
    headers = {"Authorization": f"Bearer {KEY}"}
    answer = httpx.request(method, base_url + path, json=body, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def classify(outcome: Outcome) -> str:
    """The state a user sees for one request."""
    if outcome.ok:
        return "succeeded"
    if isinstance(outcome.error, TaskFailedError):
        return "failed"
    if isinstance(outcome.error, SubmissionUncertainError):
        return "uncertain"
    if isinstance(outcome.error, APIError) and outcome.task is None:
        return "refused"  # e.g. 429s beyond the retries: nothing was created
    return f"unknown: {type(outcome.error).__name__}: {outcome.error}"


@pytest.mark.slow
def test_soak_under_faults(scale: Scale, figures: Figures) -> None:
    section = figures.section("soak", "Soak: Client.map under injected faults")
    section.note(
        "faults: " + ", ".join(f"{k}={v}" for k, v in FAULTS.items())
        + f"; concurrency {CONCURRENCY}; emulator: genlab serve --time-scale 0.01 "
        "--max-processing 64 in its own process"
    )
    retries: list[float] = []
    stamina.instrumentation.set_on_retry_hooks([lambda details: retries.append(1.0)])
    try:
        with serve("--time-scale", "0.01", "--max-processing", "64") as server:
            with genlab.Client(
                server.base_url, KEY, poll_scale=0.01, retry_wait_initial=0.01,
                retry_wait_max=0.1, max_connections=CONCURRENCY, wait_timeout=600,
            ) as client:
                # Warm up without faults so imports, pools and caches are not counted as growth.
                warm = client.map(soak_requests(40, "warm-up"), concurrency=CONCURRENCY)
                assert all(o.ok for o in warm), [o.error for o in warm if not o.ok][:3]
                admin(server.base_url, "PUT", "/v1/emulator/faults", FAULTS)
                retries.clear()
                gc.collect()
                rss_before = rss_mb()
                started = time.monotonic()
                outcomes = client.map(
                    soak_requests(scale.soak_tasks, "soak"), concurrency=CONCURRENCY
                )
                elapsed = time.monotonic() - started
                gc.collect()
                rss_after = rss_mb()
                journal_uncertain = len(client.history.uncertain())  # type: ignore[attr-defined]
            admin(server.base_url, "PUT", "/v1/emulator/faults",
                  {"error_rate": 0, "rate_limit_rate": 0, "drop_rate": 0})
            ledger = admin(server.base_url, "GET", "/v1/emulator/ledger")["submissions"]
    finally:
        stamina.instrumentation.set_on_retry_hooks(None)

    states = collections.Counter(classify(o) for o in outcomes)
    unknown = {s: c for s, c in states.items() if s.startswith("unknown")}
    digests = collections.Counter(entry["body_sha256"] for entry in ledger)
    duplicates = sum(1 for count in digests.values() if count > 1)
    known_ids = {o.task.task_id for o in [*warm, *outcomes] if o.task is not None}
    # Billed, yet the client never learnt the task id: the answers lost after billing.
    lost = {e["body_sha256"] for e in ledger if e["task_id"] not in known_ids}
    uncertain = [o.error for o in outcomes if isinstance(o.error, SubmissionUncertainError)]
    uncertain_billed = {body_digest(e.body) for e in uncertain} & set(digests)
    accepted = sum(1 for o in outcomes if o.task is not None)
    billed = len(ledger) - len(warm)

    section.add("tasks", scale.soak_tasks)
    for state in ("succeeded", "failed", "uncertain", "refused"):
        section.add(state, states[state])
    section.goal("tasks ended in a known state", len(outcomes) - sum(unknown.values()),
                 f"all {scale.soak_tasks}",
                 not unknown and len(outcomes) == scale.soak_tasks)
    section.goal("duplicate submissions in the ledger", duplicates, "0", duplicates == 0)
    section.add("answers lost after billing (ledger)", len(lost))
    section.goal("lost answers not reported uncertain", len(lost - uncertain_billed), "0",
                 lost == uncertain_billed and len(uncertain) == journal_uncertain)
    section.goal("billed - (accepted + uncertain and billed)",
                 billed - accepted - len(uncertain_billed), "0",
                 billed == accepted + len(uncertain_billed))
    section.add("uncertain, never billed (503 before the service)",
                len(uncertain) - len(uncertain_billed))
    section.add("retries (429, GET errors)", len(retries))
    section.add("seconds", elapsed, "s")
    growth = rss_after - rss_before
    section.goal("client RSS growth", growth, f"< {RSS_GROWTH_LIMIT_MB:g} MB",
                 growth < RSS_GROWTH_LIMIT_MB, "MB")
    section.add("client RSS after", rss_after, "MB")
    section.assert_goals()
    # The faults really happened: otherwise this test proves nothing.
    assert states["failed"] and len(retries), states
    assert not any(isinstance(o.error, SubmissionUncertainError) and o.task is not None
                   for o in outcomes)
