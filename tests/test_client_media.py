"""Media and local files through the client: fetch_media, download's media errors, reference
URLs (upload or data URI), data URIs and safe file names."""

from __future__ import annotations

import base64
import collections
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import genlab
from genlab import (
    AsyncClient,
    Client,
    InvalidParameterError,
    MediaError,
    UnreadableResponseError,
)
from genlab.client import data_uri
from genlab.client._media import MAX_MEDIA_BYTES
from genlab.client._uploads import MAX_FILENAME
from genlab.client.journal import safe_filename
from genlab.emulator import EmulatorHandle
from genlab.emulator._render import render_image

IMAGE = {"model": "image-b", "prompt": "a red kite"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SECRET = "X-Amz-Signature=s3cr3t"
RECORD = {"task_id": "t1", "status": "succeeded", "model": "image-b",
          "images": [{"url": f"https://cdn.example/a.png?{SECRET}", "width": 1, "height": 1}]}

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A transport that records every request and routes it by host."""

    def __init__(self, routes: dict[str, httpx.AsyncBaseTransport | Handler]) -> None:
        self.routes = routes
        self.requests: list[httpx.Request] = []

    def transport(self) -> httpx.AsyncBaseTransport:
        recorder = self

        class Routing(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                recorder.requests.append(request)
                route = recorder.routes[request.url.host]
                if isinstance(route, httpx.AsyncBaseTransport):
                    return await route.handle_async_request(request)
                return route(request)

        return Routing()

    def hosts(self, *, authorized: bool) -> set[str]:
        return {r.url.host for r in self.requests if ("authorization" in r.headers) == authorized}


def client_for(handler: Handler, **options: Any) -> AsyncClient:
    options = {"retry_wait_initial": 0.001, "retry_wait_max": 0.01, **options}
    return AsyncClient("http://svc", "k", transport=httpx.MockTransport(handler), **options)


def png() -> bytes:
    return render_image(640, 480, lines=["ref"])


# --- fetch_media -----------------------------------------------------------------------


async def test_fetch_media_reads_a_result_from_the_emulator(client_async: AsyncClient,
                                                            tmp_path: Path) -> None:
    record = await client_async.generate(IMAGE)
    assert record.images
    data = await client_async.fetch_media(record.images[0].url)
    assert data.startswith(PNG_MAGIC)
    saved = await client_async.download(record, tmp_path)
    assert saved[0].read_bytes() == data  # the same bytes download writes


async def test_fetch_media_never_sends_the_key_to_another_origin(
    client_app: Any, client_key: str, client_options: dict[str, Any]
) -> None:
    emulator = httpx.ASGITransport(app=client_app)
    seen: list[httpx.Request] = []

    def cdn(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        # A signed CDN URL that redirects to where the bytes are (here: the emulator's media).
        return httpx.Response(302, headers={"location": target})

    recorder = Recorder({"emulator": emulator, "cdn.example": cdn})
    async with AsyncClient("http://emulator", client_key, transport=recorder.transport(),
                           **client_options) as client:
        record = await client.generate(IMAGE)
        assert record.images
        target = record.images[0].url
        data = await client.fetch_media(f"https://cdn.example/a.png?{SECRET}")
    assert data.startswith(PNG_MAGIC)
    assert len(seen) == 1 and "authorization" not in seen[0].headers
    media = [r for r in recorder.requests if r.url.path.startswith("/media/")]
    assert media and all("authorization" not in r.headers for r in media)
    api = [r for r in recorder.requests if r.url.path.startswith("/v1/")]
    assert api and all(r.headers["authorization"] == f"Bearer {client_key}" for r in api)
    assert recorder.hosts(authorized=True) == {"emulator"}


async def test_fetch_media_mirrors_download_no_key_to_media_hosts() -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.url.host == "svc":
            return httpx.Response(200, json=RECORD)
        return httpx.Response(200, content=PNG_MAGIC, headers={"content-type": "image/png"})

    async with client_for(handler) as client:
        fetched = await client.get("t1", kind="image")
        assert fetched.images
        assert await client.fetch_media(fetched.images[0].url) == PNG_MAGIC
    api, media = requests
    assert api.headers["authorization"] == "Bearer k"
    assert "authorization" not in media.headers


@pytest.mark.parametrize("status", [403, 404, 410])
async def test_a_media_error_names_the_url_without_its_query(status: int,
                                                             tmp_path: Path) -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.url.host == "svc":
            return httpx.Response(200, json=RECORD)
        return httpx.Response(status, text="<Error><Code>AccessDenied</Code></Error>")

    async with client_for(handler) as client:
        with pytest.raises(MediaError) as fetching:
            await client.fetch_media(f"https://cdn.example/a.png?{SECRET}")
        record = await client.get("t1", kind="image")
        # download fails the same way (a CDN's 403 is not a refused API key)
        with pytest.raises(MediaError) as downloading:
            await client.download(record, tmp_path)
    for error in (fetching.value, downloading.value):
        assert isinstance(error, genlab.GenlabError)
        assert not isinstance(error, genlab.APIError)
        assert error.status == status and error.url == "https://cdn.example/a.png"
        assert "s3cr3t" not in str(error) and "https://cdn.example/a.png" in str(error)
        assert f"HTTP {status}" in str(error) and "may have expired" in str(error)
        assert "API key" not in str(error)
    # Not retried (a 4xx will not change); download asked for fresh URLs once, then gave up.
    assert [r.url.host for r in requests] == ["cdn.example", "svc", "cdn.example", "svc",
                                              "cdn.example"]
    assert list(tmp_path.iterdir()) == []  # nothing partial left behind


async def test_media_is_retried_on_transient_trouble() -> None:
    steps = collections.deque([
        httpx.Response(503),
        httpx.ReadTimeout("slow"),
        httpx.Response(429, headers={"Retry-After": "0"}),
        httpx.Response(200, content=PNG_MAGIC),
    ])

    def handler(request: httpx.Request) -> httpx.Response:
        step = steps.popleft()
        if isinstance(step, Exception):
            raise step
        return step

    async with client_for(handler, max_retries=3) as client:
        assert await client.fetch_media("https://cdn.example/a.png") == PNG_MAGIC
    assert not steps
    outage = [httpx.Response(503)] * 3
    steps.extend(outage)
    async with client_for(handler, max_retries=2) as client:
        with pytest.raises(MediaError) as caught:
            await client.fetch_media("https://cdn.example/a.png")
    assert caught.value.status == 503 and not steps


async def test_network_trouble_becomes_a_media_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with client_for(handler, max_retries=1) as client:
        with pytest.raises(MediaError, match="ConnectError") as caught:
            await client.fetch_media(f"https://cdn.example/a.png?{SECRET}")
    assert caught.value.status is None and "s3cr3t" not in str(caught.value)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://cdn.example/a.png",
                                 "data:image/png;base64,AAAA", "javascript:alert(1)"])
async def test_only_http_media_is_fetched(url: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        pytest.fail(f"nothing should be requested, got {request.url}")

    async with client_for(handler) as client:
        with pytest.raises(MediaError, match="http"):
            await client.fetch_media(url)


async def test_media_larger_than_max_bytes_is_refused() -> None:
    body = b"x" * 5000

    def declared(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)  # with Content-Length

    async def chunks() -> Any:
        for _ in range(5):
            yield b"x" * 1000

    def streamed(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=chunks())  # chunked: no Content-Length

    for handler in (declared, streamed):
        async with client_for(handler) as client:
            with pytest.raises(MediaError, match="max_bytes=4096"):
                await client.fetch_media("https://cdn.example/big.mp4", max_bytes=4096)
            assert await client.fetch_media("https://cdn.example/big.mp4") == body
    assert MAX_MEDIA_BYTES == 64 * 1024 * 1024


async def test_download_follows_a_media_redirect(tmp_path: Path) -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.url.host == "svc":
            return httpx.Response(200, json=RECORD)
        if request.url.host == "cdn.example":
            return httpx.Response(307, headers={"location": "https://bucket.example/k/a.webp"})
        return httpx.Response(200, content=b"RIFF....WEBP")

    async with client_for(handler) as client:
        record = await client.get("t1", kind="image")
        paths = await client.download(record, tmp_path)
    assert [p.name for p in paths] == ["t1.webp", "t1.json"]  # the final URL names the type
    assert paths[0].read_bytes() == b"RIFF....WEBP"
    assert [("authorization" in r.headers) for r in requests] == [True, False, False]


def test_the_sync_client_fetches_media_over_http(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with Client(client_server.base_url, client_server.api_key, **client_options) as client:
        record = client.generate(IMAGE)
        assert record.images
        assert client.fetch_media(record.images[0].url).startswith(PNG_MAGIC)
        with pytest.raises(MediaError) as caught:
            client.fetch_media(client_server.base_url + "/media/no-such-task/image-0.png")
        assert caught.value.status == 404


# --- unreadable answers ----------------------------------------------------------------


async def test_an_unreadable_upload_answer_is_reported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"id": "u1"})

    async with client_for(handler) as client:
        with pytest.raises(UnreadableResponseError, match="no url") as caught:
            await client.upload(b"\x89PNG", "a.png")
    assert caught.value.status == 200 and '"id"' in caught.value.excerpt


# --- reference URLs: upload, data URI, or a public URL needed --------------------------


async def test_reference_urls_are_uploads_when_the_service_takes_them(
    client_async: AsyncClient,
) -> None:
    assert not client_async.supports_uploads  # a plain client: treated as the real service
    inline = await client_async.reference_url(png(), "frame.png", allow_data_uri=True)
    assert inline.startswith("data:image/png;base64,")
    client_async.supports_uploads = True
    url = await client_async.reference_url(png(), "frame.png", allow_data_uri=True)
    assert url.startswith("http://emulator/") and url.endswith("frame.png")
    assert (await client_async.fetch_media(url)) == png()
    video = await client_async.reference_url(png(), "clip.png", allow_data_uri=False)
    assert video.startswith("http://emulator/")  # uploads need no data URI permission


@pytest.mark.parametrize(
    ("filename", "allow", "words"),
    [
        ("frame.png", False, ["needs a public http(s) URL", "frame.png"]),
        ("clip.mp4", True, ["not an image", "needs a public http(s) URL"]),
        ("notes", True, ["not an image", "application/octet-stream"]),
    ],
)
async def test_without_uploads_a_public_url_is_needed(
    filename: str, allow: bool, words: list[str]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        pytest.fail(f"nothing should be sent, got {request.url}")

    async with client_for(handler) as client:
        with pytest.raises(InvalidParameterError) as caught:
            await client.reference_url(b"\x00\x01", filename, allow_data_uri=allow,
                                       field="reference_images")
    message = str(caught.value)
    assert all(word in message for word in words), message
    assert "reference_images" in message
    assert caught.value.errors[0].field == "reference_images"


def test_the_sync_client_picks_the_same_reference_urls(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    with Client(client_server.base_url, client_server.api_key, **client_options) as client:
        uri = client.reference_url(png(), "frame.png", allow_data_uri=True)
        assert uri == data_uri(png(), "frame.png")
        with pytest.raises(InvalidParameterError, match="public http"):
            client.reference_url(png(), "frame.png", allow_data_uri=False)
        client.supports_uploads = True
        assert client.aio.supports_uploads
        url = client.reference_url(png(), "frame.png", allow_data_uri=False)
        assert url.startswith(client_server.base_url)
        record = client.generate(model="video-f", prompt="", duration=3,
                                 reference_images=[{"url": url, "reference_type": "first_frame"}])
        assert record.succeeded


# --- data URIs and file names ----------------------------------------------------------


def test_data_uris_from_paths_bytes_and_explicit_types(tmp_path: Path) -> None:
    path = tmp_path / "frame.png"
    path.write_bytes(png())
    from_path = data_uri(path)
    assert from_path == data_uri(str(path)) == data_uri(png(), "frame.png")
    assert base64.b64decode(from_path.split(",", 1)[1]) == png()
    assert data_uri(b"\x00", mime="video/mp4") == "data:video/mp4;base64,AA=="
    assert data_uri(b"\x00", "a.png", mime="image/webp").startswith("data:image/webp;")
    assert data_uri(b"\x00").startswith("data:application/octet-stream;base64,")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("task_123", "task_123"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("..\\..\\windows\\win.ini", "_.._windows_win.ini"),
        (".hidden", "hidden"),
        ("..", "file"),
        (".", "file"),
        ("", "file"),
        ("a\x00b", "a_b"),
        ("C:/x", "C__x"),
    ],
)
def test_safe_filename_examples(name: str, expected: str) -> None:
    assert safe_filename(name) == expected


def test_safe_filename_bounds_long_names_and_keeps_the_extension() -> None:
    name = safe_filename("x" * 500 + ".mp4")
    assert len(name) == MAX_FILENAME and name.endswith(".mp4")
    assert len(safe_filename("y" * 500)) == MAX_FILENAME
    assert safe_filename("///", default="task") == "___"
    assert safe_filename("...", default="../task") == "_task"


@given(st.text(max_size=400), st.text(max_size=20))
def test_safe_filename_never_leaves_its_folder(name: str, default: str) -> None:
    safe = safe_filename(name, default)
    assert safe and len(safe) <= MAX_FILENAME
    assert not safe.startswith(".") and safe not in (".", "..")
    assert not any(bad in safe for bad in ("/", "\\", "\x00", ":"))
    folder = Path("/srv/out")
    assert (folder / safe).resolve().parent == folder.resolve()
