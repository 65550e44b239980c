"""One owner for a generation's life: the client is one lifecycle with collaborators, tracks
each task only until it is handed over, and keeps no request body it no longer needs."""

from __future__ import annotations

import base64
import concurrent.futures
import inspect
import pathlib
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import genlab
import genlab.client
from genlab import AsyncClient, Client
from genlab.catalog import validate
from genlab.client._prepare import prepare
from genlab.client.journal import MemoryJournal

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64 * 1024)).decode()  # a 64 KB "image"


def service(reached: list[str] | None = None) -> httpx.MockTransport:
    """A service that accepts every submit and answers every query with success; ``reached``
    notes each request as it arrives."""
    count = [0]

    def handle(request: httpx.Request) -> httpx.Response:
        if reached is not None:
            reached.append(request.method)
        if request.method == "POST":
            count[0] += 1
            return httpx.Response(200, json={"task_id": f"t{count[0]}", "model": "image-b"})
        task_id = request.url.path.rsplit("/", 1)[-1]
        return httpx.Response(200, json={
            "task_id": task_id, "status": "succeeded", "model": "image-b",
            "created_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:05Z",
            "images": [{"url": f"https://cdn.example/{task_id}.png"}],
        })

    return httpx.MockTransport(handle)


def with_reference(prompt: str) -> dict[str, Any]:
    return {"model": "image-b", "prompt": prompt,
            "reference_images": [f"data:image/png;base64,{PNG}"]}


def test_the_clients_are_plain_classes_not_mixins() -> None:
    assert AsyncClient.__bases__ == (object,) and Client.__bases__ == (object,)
    for module in [m for name, m in sys.modules.items() if name.startswith("genlab.client")]:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                assert "Methods" not in cls.__name__ and "Mixin" not in cls.__name__, cls


async def test_a_finished_task_leaves_the_table_and_its_body_is_kept_in_short() -> None:
    journal = MemoryJournal()
    async with AsyncClient("http://service", "k", transport=service(), history=journal) as client:
        body = with_reference("a kite")
        task = await client.submit(body)
        assert len(client._life.table) == 1
        record = await client.wait(task)
        assert record.succeeded and len(client._life.table) == 0
        assert client._life.table.kind_of(task.task_id) == "image"  # a bare id still works
    kept = journal.entries()[0].entry.body
    assert len(kept["reference_images"][0]) < 200 and "kept in short" in kept["reference_images"][0]
    assert journal.request_of(task.task_id) is None  # not the body that was sent


async def test_a_reroll_of_a_task_whose_request_is_gone_says_what_to_do() -> None:
    async with AsyncClient("http://service", "k", transport=service()) as client:
        record = await client.generate(with_reference("a kite"))
        with pytest.raises(ValueError, match=r"pass the request itself: client.reroll\(\{"):
            await client.reroll(record)
        small = await client.generate({"model": "image-b", "prompt": "a small kite"})
        again = await client.reroll(small)  # a short body is kept: rerolled as it was
    assert again.task_id != small.task_id


def test_a_validated_request_is_taken_as_it_is() -> None:
    request = validate({"model": "image-b", "prompt": "a kite"})
    entry, checked = prepare(request, {})
    assert checked is request and entry.body == request.to_body()


def client_files_entered(
    submit: Callable[[Client], object], client: Client, reached: list[str]
) -> list[str]:
    """The genlab.client source files a call enters, on every thread it uses, until its
    request reaches the service."""
    root = pathlib.Path(genlab.client.__file__).parent
    entered: list[str] = []
    reached.clear()

    def profile(frame: Any, event: str, arg: Any) -> None:
        name = frame.f_code.co_filename
        if event == "call" and not reached and name.startswith(str(root)):
            short = pathlib.Path(name).name
            if short not in entered:
                entered.append(short)

    def on_every_thread(fn: Any) -> None:
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        client._runner.loop.call_soon_threadsafe(lambda: (fn(), done.set_result(None)))
        done.result(10)
        pool = client.aio._life.writer._pool
        assert pool is not None
        pool.submit(fn).result(10)
        fn()

    on_every_thread(lambda: sys.setprofile(profile))
    try:
        submit(client)
    finally:
        on_every_thread(lambda: sys.setprofile(None))
    return entered


def test_a_submit_goes_down_one_chain_from_the_facade_to_the_transport() -> None:
    reached: list[str] = []
    with Client("http://service", "k", transport=service(reached)) as client:
        client.submit(model="image-b", prompt="warm up")  # the journal's thread starts
        entered = client_files_entered(
            lambda c: c.submit(model="image-b", prompt="a kite"), client, reached
        )
    # One chain, top to bottom: facade, client, preparation, lifecycle ... transport; the
    # layers themselves are import-linter's "client-lifecycle" contract.
    assert reached == ["POST"]
    assert entered[:4] == ["_sync.py", "_async.py", "_prepare.py", "_lifecycle.py"]
    assert entered[-1] == "_transport.py"
