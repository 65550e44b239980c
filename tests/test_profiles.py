"""The emulator's profiles: a different service that still follows the interface, over real
HTTP on loopback. These tests look at the wire (plain httpx); tests/test_different_service.py
runs genlab's client against the same profiles."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from genlab.emulator import PROFILES, ProfileHandle, get_profile, start_profile

KEY = "sk-profile-test-3b1f9c"
AUTH = {"Authorization": f"Bearer {KEY}"}
IMAGE = {"model": "image-b", "prompt": "a red kite"}


@pytest.fixture
def different() -> Iterator[ProfileHandle]:
    with start_profile(
        "different", api_key=KEY, time_scale=0.02, seed=7, link_ttl=30
    ) as handle:
        handle.controls.next_html_errors = 0
        yield handle


def finished_record(http: httpx.Client, base: str, task_id: str) -> dict[str, object]:
    path = f"{base}/v1/images/tasks/{quote(task_id, safe='')}"
    for _ in range(400):  # bounded: the sped-up emulator finishes an image in well under 2 s
        answer = http.get(path, headers=AUTH)
        if answer.status_code == 200 and answer.json()["status"] in ("succeeded", "failed"):
            return dict(answer.json())
        time.sleep(0.02)
    raise AssertionError("the task never finished")


def test_every_profile_is_named_and_described() -> None:
    assert {"emulator", "different", "cdn", "proxy", "eventual", "prefix", "odd-ids",
            "error-shapes", "newer"} <= set(PROFILES)
    assert all(p.summary for p in PROFILES.values())
    with pytest.raises(ValueError, match="choose one of: emulator"):
        get_profile("nope")


def test_the_different_service_differs_where_the_interface_is_silent(
    different: ProfileHandle,
) -> None:
    base = different.base_url
    assert base.endswith("/api")
    with httpx.Client(timeout=10) as http:
        # The API lives under the prefix; elsewhere a web server's HTML page answers.
        outside = http.post(base.removesuffix("/api") + "/v1/images/generate", json=IMAGE,
                            headers=AUTH)
        assert outside.status_code == 404 and "text/html" in outside.headers["content-type"]

        accepted = http.post(f"{base}/v1/images/generate", json=IMAGE, headers=AUTH)
        assert accepted.status_code == 200
        task_id = accepted.json()["task_id"]
        assert all(c in task_id for c in "/?# %")  # an odd id, as the interface allows

        # Right after the submit the task is not visible yet.
        early = http.get(f"{base}/v1/images/tasks/{quote(task_id, safe='')}", headers=AUTH)
        assert early.status_code == 404 and early.json()["error"]["code"] == "NOT_FOUND"

        record = finished_record(http, base, task_id)
        assert record["task_id"] == task_id
        url = record["images"][0]["url"]  # type: ignore[index]
        assert url.startswith(different.media_origin + "/cdn/") and "signature=" in url

        # The media host redirects, serves generic bytes, and never wants the API key.
        media = http.get(url, follow_redirects=True)
        assert media.status_code == 200 and len(media.history) == 1
        assert media.headers["content-type"] == "application/octet-stream"
        assert media.content.startswith(b"\x89PNG")
        assert http.get(url, headers=AUTH).status_code == 400
        assert different.controls.media_with_key == 1

        tampered = url.replace("signature=", "signature=0")
        assert http.get(tampered).status_code == 403


def test_signed_links_expire() -> None:
    with start_profile("cdn", api_key=KEY, time_scale=0.02, link_ttl=0.2) as cdn, \
            httpx.Client(timeout=10) as http:
        task_id = http.post(f"{cdn.base_url}/v1/images/generate", json=IMAGE,
                            headers=AUTH).json()["task_id"]
        url = finished_record(http, cdn.base_url, task_id)["images"][0]["url"]  # type: ignore[index]
        time.sleep(0.3)
        expired = http.get(url, follow_redirects=True)
        assert expired.status_code == 403 and "expired" in expired.text
        fresh = finished_record(http, cdn.base_url, task_id)["images"][0]["url"]  # type: ignore[index]
        assert http.get(fresh, follow_redirects=True).status_code == 200


def test_failed_tasks_carry_other_error_shapes() -> None:
    with start_profile("error-shapes", api_key=KEY, time_scale=0.02) as shapes, \
            httpx.Client(timeout=10) as http:
        shapes.app.emulator.faults.update(fail_rate=1.0)
        shapes.controls.error_shape = "numeric-code"
        task_id = http.post(f"{shapes.base_url}/v1/images/generate", json=IMAGE,
                            headers=AUTH).json()["task_id"]
        error = finished_record(http, shapes.base_url, task_id)["error"]
        assert error == {"code": 5003, "message": None, "reason": error["reason"]}  # type: ignore[index]
        assert "could not generate" in error["reason"]  # type: ignore[index]


def test_a_proxy_answers_html_pages_before_and_after_the_service() -> None:
    with start_profile("proxy", api_key=KEY, time_scale=0.02, seed=1) as proxy, \
            httpx.Client(timeout=10) as http:
        proxy.controls.next_html_errors = 1
        before = http.post(f"{proxy.base_url}/v1/images/generate", json=IMAGE, headers=AUTH)
        assert before.status_code == 502 and before.text.startswith("<html>")
        billed = len(proxy.ledger())
        proxy.controls.next_lost_answers = 1
        proxy.controls.next_html_errors = 0
        after = http.post(f"{proxy.base_url}/v1/images/generate", json=IMAGE, headers=AUTH)
        assert after.status_code == 504 and "Gateway Timeout" in after.text
        assert len(proxy.ledger()) == billed + 1  # processed and billed; the answer was lost


def test_the_newer_service_takes_a_field_and_a_model_the_catalog_does_not_know() -> None:
    body = {"model": "video-next", "prompt": "waves", "duration": 2, "camera_motion": "dolly"}
    with start_profile("newer", api_key=KEY, time_scale=0.02) as newer, \
            httpx.Client(timeout=10) as http:
        accepted = http.post(f"{newer.base_url}/v1/videos/generate", json=body, headers=AUTH)
        assert accepted.status_code == 200 and accepted.json()["model"] == "video-next"


def test_genlab_serve_runs_a_profile() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "genlab", "serve", "--profile", "different", "--port", "0",
               "--api-key", KEY, "--time-scale", "0.02"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, env=env) as server:
        try:
            assert server.stdout is not None
            first, second, third = (server.stdout.readline() for _ in range(3))
            assert "profile different: every profile from error-shapes to newer" in second
            assert "media are served from http://127.0.0.1:" in third
            base_url = first.split(" at ", 1)[1].strip()
            assert base_url.endswith("/api")
            answer = httpx.post(f"{base_url}/v1/images/generate", json=IMAGE, headers=AUTH,
                                timeout=10)
            # A seeded proxy may answer a 502 page; either way it is this profile answering.
            assert answer.status_code in (200, 502)
        finally:
            server.terminate()
            server.wait(timeout=15)
    assert server.returncode == 0


def test_genlab_serve_refuses_an_unknown_profile() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "genlab", "serve", "--profile", "nope", "--port", "0"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 2 and "no profile 'nope'; choose one of" in run.stderr
