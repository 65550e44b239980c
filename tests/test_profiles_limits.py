"""The service at its limits, played by the emulator's profiles over real HTTP on loopback:
concurrency caps (``capped``), quotas that will not clear (``quota``), an answer trickled byte
by byte (``trickle``) and a gateway in front (``gateway``). These tests look at the wire with
plain httpx and at the emulator's ledger: what a client sees, and what was created and billed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest

from genlab.cli import build_parser
from genlab.emulator import PROFILES, ProfileHandle, start_profile

KEY = "sk-limits-test-4c2d8e"
AUTH = {"Authorization": f"Bearer {KEY}"}
IMAGE = {"model": "image-b", "prompt": "a red kite"}
NEW = ("capped", "quota", "trickle", "misrouted", "sloppy", "gateway")


class Clock:
    """A clock tests move by hand: tasks stay queued until it is moved on."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def submit(http: httpx.Client, service: ProfileHandle, body: dict[str, Any] = IMAGE,
           headers: dict[str, str] = AUTH) -> httpx.Response:
    return http.post(f"{service.base_url}/v1/images/generate", json=body, headers=headers)


def error_of(answer: httpx.Response) -> dict[str, Any]:
    body = answer.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert error["status"] == answer.status_code and error["request_id"]
    return error


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


# --- capped ---------------------------------------------------------------------------------


def test_a_submit_past_the_cap_is_refused_429_and_creates_nothing(http: httpx.Client) -> None:
    clock = Clock()  # frozen: the first tasks stay queued until it moves
    with start_profile("capped", api_key=KEY, time_scale=0.02, clock=clock) as service:
        assert service.controls.cap == 3
        accepted = [submit(http, service) for _ in range(3)]
        assert [a.status_code for a in accepted] == [200, 200, 200]
        assert service.tasks_in_flight() == 3

        refused = submit(http, service)
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "1"
        error = error_of(refused)
        assert error["code"] == "CONCURRENCY_LIMIT" and "at once (3)" in error["message"]
        assert len(service.ledger()) == 3  # nothing created, nothing billed

        service.controls.cap_retry_after = None
        bare = submit(http, service)
        assert bare.status_code == 429 and "retry-after" not in bare.headers
        assert len(service.ledger()) == 3
        assert service.controls.played["capped"] == 2

        clock.now += 3600  # the three finish: the key has room again
        assert service.tasks_in_flight() == 0
        again = submit(http, service)
        assert again.status_code == 200
        assert [e["task_id"] for e in service.ledger()][-1] == again.json()["task_id"]


def test_the_cap_can_be_changed_and_holds_for_concurrent_submits() -> None:
    clock = Clock()
    with start_profile("capped", api_key=KEY, time_scale=0.02, clock=clock) as service:
        service.controls.cap = 2

        async def burst() -> list[int]:
            async with httpx.AsyncClient(timeout=30) as client:
                answers = await asyncio.gather(*(
                    client.post(f"{service.base_url}/v1/images/generate", json=IMAGE,
                                headers=AUTH)
                    for _ in range(6)
                ))
            return sorted(a.status_code for a in answers)

        assert asyncio.run(burst()) == [200, 200, 429, 429, 429, 429]
        assert len(service.ledger()) == 2 and service.tasks_in_flight() == 2


def test_the_cap_comes_after_the_services_own_checks(http: httpx.Client) -> None:
    with start_profile("capped", api_key=KEY, time_scale=0.02, clock=Clock()) as service:
        service.controls.cap = 0
        wrong_key = submit(http, service, headers={"Authorization": "Bearer nope"})
        assert wrong_key.status_code == 401 and error_of(wrong_key)["code"] == "UNAUTHORIZED"
        service.controls.cap = 1
        invalid = submit(http, service, body={"model": "image-b", "prompt": "x", "n": 2})
        assert invalid.status_code == 400
        assert service.tasks_in_flight() == 0  # a refused submit holds no place
        assert submit(http, service).status_code == 200
        assert service.ledger() and service.controls.played["capped"] == 0


# --- quota ----------------------------------------------------------------------------------


def test_an_exhausted_quota_refuses_every_submit_for_an_hour(http: httpx.Client) -> None:
    with start_profile("quota", api_key=KEY, time_scale=0.02) as service:
        refused = submit(http, service)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "3600"
        error = error_of(refused)
        assert error["code"] == "QUOTA_EXCEEDED"
        assert "clears at" in error["message"] and "in 3600 s" in error["message"]

        service.controls.quota_retry_after = "http-date"
        dated = submit(http, service)
        clears = parsedate_to_datetime(dated.headers["retry-after"]).timestamp()
        assert 3000 < clears - time.time() <= 3600  # an hour on, as an IMF-fixdate

        service.controls.quota_retry_after = None
        bare = submit(http, service)
        assert bare.status_code == 429 and "retry-after" not in bare.headers
        assert error_of(bare)["code"] == "QUOTA_EXCEEDED"
        assert service.ledger() == [] and service.controls.played["quota"] == 3


def test_an_insufficient_balance_is_a_402_without_retry_after(http: httpx.Client) -> None:
    with start_profile("quota", api_key=KEY, time_scale=0.02) as service:
        service.controls.quota_code = "INSUFFICIENT_BALANCE"
        refused = submit(http, service)
        assert refused.status_code == 402 and "retry-after" not in refused.headers
        error = error_of(refused)
        assert error["code"] == "INSUFFICIENT_BALANCE"
        assert "credits are added" in error["message"]
        assert service.ledger() == []


def test_a_quota_lets_its_submits_through_then_refuses(http: httpx.Client) -> None:
    with start_profile("quota", api_key=KEY, time_scale=0.02) as service:
        service.controls.quota_left = 2
        invalid = submit(http, service, body={"model": "image-b", "prompt": "x", "n": 2})
        assert invalid.status_code == 400 and service.controls.quota_left == 2  # given back
        statuses = [submit(http, service).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        assert len(service.ledger()) == 2 and service.controls.quota_left == 0
        service.controls.quota_left = None  # the quota cleared
        assert submit(http, service).status_code == 200


# --- trickle --------------------------------------------------------------------------------


def test_a_trickled_answer_outlasts_a_deadline_though_the_task_was_billed(
    http: httpx.Client,
) -> None:
    with start_profile("trickle", api_key=KEY, time_scale=0.02) as service:
        assert service.controls.trickle_interval == 0.5
        url = f"{service.base_url}/v1/images/generate"
        with http.stream("POST", url, json=IMAGE, headers=AUTH) as answer:
            assert answer.status_code == 200
            size = int(answer.headers["content-length"])
            received = b""
            deadline = time.monotonic() + 1.5  # a client's deadline, far below size x 0.5 s
            for chunk in answer.iter_raw():
                received += chunk
                if time.monotonic() > deadline:
                    break
        assert 0 < len(received) < size  # slower only shortens it: this holds on a busy box
        (entry,) = service.ledger()  # created and billed before the first byte was sent
        assert entry["task_id"].encode().startswith(b"task_")
        for _ in range(200):  # bounded: the client hung up, the profile stops trickling
            if service.controls.played["trickle-abandoned"]:
                break
            time.sleep(0.05)
        assert service.controls.played["trickle-abandoned"] == 1


def test_a_patient_client_gets_the_whole_trickled_answer(http: httpx.Client) -> None:
    with start_profile("trickle", api_key=KEY, time_scale=0.02) as service:
        service.controls.trickle_interval = 0.002
        answer = submit(http, service)
        assert answer.status_code == 200
        assert answer.json()["task_id"] == service.ledger()[0]["task_id"]
        assert service.controls.played["trickled"] == 1


def test_stopping_the_service_sends_the_rest_of_a_trickle_at_once() -> None:
    service = start_profile("trickle", api_key=KEY, time_scale=0.02)
    answers: list[httpx.Response] = []
    reader = threading.Thread(target=lambda: answers.append(httpx.post(
        f"{service.base_url}/v1/images/generate", json=IMAGE, headers=AUTH, timeout=300)))
    reader.start()
    for _ in range(400):  # bounded: until the answer has started to trickle
        if service.controls.played["trickled"]:
            break
        time.sleep(0.02)
    service.stop()  # without its end, the answer would take a minute more
    reader.join(60)
    assert not reader.is_alive()
    assert answers[0].json()["task_id"] == service.ledger()[0]["task_id"]


# --- gateway --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403, 404])
@pytest.mark.parametrize("shape", ["json", "waf"])
def test_a_gateway_answers_submits_without_forwarding_them(
    http: httpx.Client, status: int, shape: str,
) -> None:
    with start_profile("gateway", api_key=KEY, time_scale=0.02) as service:
        service.controls.gateway_status = status
        service.controls.gateway_shape = shape  # type: ignore[assignment]
        for headers in (AUTH, {"Authorization": "Bearer wrong"}):
            answer = submit(http, service, headers=headers)
            assert answer.status_code == status
            if shape == "json":
                assert answer.headers["content-type"] == "application/json"
                body = answer.json()
                assert list(body) == ["detail"] and isinstance(body["detail"], str)
                assert ("www-authenticate" in answer.headers) == (status == 401)
            else:
                assert answer.headers["content-type"].startswith("text/html")
                assert answer.text.startswith("<!DOCTYPE html>")
                assert "Request blocked" in answer.text and '"error"' not in answer.text
        assert service.ledger() == [] and service.controls.played["gateway"] == 2


def test_the_gateway_profile_is_a_waf_and_lets_submits_through_when_lifted(
    http: httpx.Client,
) -> None:
    with start_profile("gateway", api_key=KEY, time_scale=0.02) as service:
        blocked = submit(http, service)
        assert blocked.status_code == 403 and "text/html" in blocked.headers["content-type"]
        service.controls.gateway_status = None
        accepted = submit(http, service)
        assert accepted.status_code == 200
        assert [e["task_id"] for e in service.ledger()] == [accepted.json()["task_id"]]
        with pytest.raises(ValueError, match="gateway_status must be 401, 403, 404"):
            service.controls.gateway_status = 500


# --- every new profile from the command line ------------------------------------------------


def test_genlab_serve_help_lists_every_profile(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for profile in PROFILES.values():
        assert f"{profile.name}: {profile.summary}" in shown
    assert "odd-ids: task ids with / ? # % and spaces" in shown  # the % is not a format


@pytest.mark.parametrize("name", NEW)
def test_genlab_serve_runs_each_new_profile(name: str) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "genlab", "serve", "--profile", name, "--port", "0",
               "--api-key", KEY, "--time-scale", "0.02"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, env=env) as server:
        try:
            assert server.stdout is not None
            first, second = server.stdout.readline(), server.stdout.readline()
            assert f"profile {name}: {PROFILES[name].summary}" in second
            base_url = first.split(" at ", 1)[1].strip()
            with httpx.Client(timeout=30) as http, http.stream(
                "POST", f"{base_url}/v1/images/generate", json=IMAGE, headers=AUTH
            ) as answer:
                expected = {"quota": 429, "gateway": 403}.get(name, 200)
                assert answer.status_code == expected
                if name == "sloppy":
                    assert isinstance(answer.read() and answer.json()["task_id"], int)
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert server.returncode == 0
