"""Bad reference media: unreachable, not media, truncated, too long, too small, too slow a
frame rate, a server that never answers. Each submission gets a clear 400 INVALID_PARAMETER
that names the item, nothing is billed, and nothing hangs.

The emulator runs in-process with a 1 s fetch timeout; the media it fetches are served by a
small file server on a free loopback port.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

import genlab
from genlab import InvalidParameterError

from ._support import KEY, MediaSet, Route, closed_port, file_server, upload
from .conftest import Scale
from .figures import Figures

TEXT = b"these are meeting notes, not an image\n" * 20
GUARD = 30.0  # seconds; a hang guard for each case, far above the 1 s fetch timeout


@pytest.fixture
async def client(app: Any) -> AsyncIterator[genlab.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with genlab.AsyncClient("http://emulator", KEY, transport=transport,
                                  max_retries=0) as c:
        yield c


def video_b_image(url: str) -> dict[str, Any]:
    return {"model": "video-b", "prompt": "a boat",
            "reference_images": [{"url": url, "reference_type": "first_frame"}]}


def video_b_video(url: str) -> dict[str, Any]:
    return {"model": "video-b", "prompt": "a boat", "reference_videos": [{"url": url}]}


async def test_bad_media_gets_a_clear_400_naming_the_item(
    app: Any, client: genlab.AsyncClient, media: MediaSet, scale: Scale, figures: Figures
) -> None:
    section = figures.section("bad_media", "Bad reference media: clear 400s, nothing hangs")
    section.note("in-process emulator (create_app(fetch_timeout=1.0)); media served from a "
                 "loopback file server or uploaded")
    auth = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://emulator", headers=auth) as raw:
        long_url = await upload(raw, media.long_mp4, "long.mp4")
        small_url = await upload(raw, media.small_png, "small.png")
        slow_url = await upload(raw, media.slow_mp4, "slow.mp4")
    routes = {
        "/notes.png": Route(TEXT, "image/png"),
        "/notes.txt": Route(TEXT, "text/plain"),
        "/half.png": Route(media.png[: len(media.png) // 2], "image/png"),
        "/half.mp4": Route(media.mp4[: len(media.mp4) // 2], "video/mp4"),
        "/gone.png": Route(b"", status=404),
        "/never.png": Route(media.png, "image/png", stall=5.0),
    }
    text_uri = "data:image/png;base64," + base64.b64encode(TEXT).decode()
    with file_server(routes) as files:
        cases: list[tuple[str, dict[str, Any], str, str]] = [
            ("unreachable", video_b_image(f"http://127.0.0.1:{closed_port()}/x.png"),
             "reference_images[0]", "could not be fetched"),
            ("not media (text named .png)", video_b_image(f"{files}/notes.png"),
             "reference_images[0]", "could not be read"),
            ("not media (text/plain)", video_b_image(f"{files}/notes.txt"),
             "reference_images[0]", "could not be read"),
            ("not media (data: URI of text)",
             {"model": "video-a", "prompt": "a fox", "reference_images": [{"url": text_uri}]},
             "reference_images[0]", "could not be read"),
            ("truncated PNG", video_b_image(f"{files}/half.png"),
             "reference_images[0]", "could not be read"),
            ("truncated MP4", video_b_video(f"{files}/half.mp4"),
             "reference_videos[0]", "could not be read"),
            ("HTTP 404", video_b_image(f"{files}/gone.png"),
             "reference_images[0]", "404"),
            ("too long (20 s clip, video-b takes 2 to 15 s)", video_b_video(long_url),
             "reference_videos[0]", "at most 15 s"),
            ("too small (100x100, video-b needs 300 px)", video_b_image(small_url),
             "reference_images[0]", "at least 300 px"),
            ("wrong frame rate (20 fps, video-b needs 24 to 60)", video_b_video(slow_url),
             "reference_videos[0]", "at least 24"),
            ("a server that never answers", video_b_image(f"{files}/never.png"),
             "reference_images[0]", "within 1 s"),
        ]
        clear = 0
        slowest = 0.0
        unclear: list[str] = []
        for name, body, item, reason in cases:
            genlab.validate(body)  # every body is valid as far as the catalog can tell
            started = time.monotonic()
            try:
                async with asyncio.timeout(GUARD):
                    await client.submit(body)
                outcome = "accepted"
            except InvalidParameterError as exc:
                message = str(exc)
                ok = exc.status == 400 and exc.code == "INVALID_PARAMETER"
                ok = ok and item in message and reason in message and body["model"] in message
                outcome = "clear" if ok else f"unclear: {message[:200]}"
            except TimeoutError:
                outcome = f"hung for more than {GUARD:g} s"
            slowest = max(slowest, time.monotonic() - started)
            if outcome == "clear":
                clear += 1
            else:
                unclear.append(f"{name}: {outcome}")

    billed = len(app.emulator.ledger())
    section.add("cases", len(cases))
    section.goal("clear 400 INVALID_PARAMETER naming the item", clear, f"all {len(cases)}",
                 clear == len(cases))
    section.goal("submissions billed", billed, "0", billed == 0)
    section.add("slowest case", slowest, "s")
    section.goal("cases that hung", sum("hung" in u for u in unclear), "0",
                 not any("hung" in u for u in unclear))
    for problem in unclear:
        section.note(problem)
    section.assert_goals()
