"""The synchronous Client: one runner thread, usable from a running event loop (a notebook
cell), from other threads (widget callbacks), with futures, and interruptible."""

from __future__ import annotations

import _thread
import asyncio
import concurrent.futures
import json
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from genlab import Client, ConfigurationError, TaskRecord, TaskTimeoutError
from genlab.client import FixedPacing
from genlab.client._sync import Interrupted
from genlab.emulator import EmulatorHandle

IMAGE = {"model": "image-b", "prompt": "a red kite"}
SLOW = {"model": "video-a", "prompt": "slow", "duration": 30, "resolution": "1080P"}


def runner_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "genlab-runner"]


@pytest.fixture
def client(client_server: EmulatorHandle, client_options: dict[str, Any]) -> Any:
    with Client(client_server.base_url, client_server.api_key, **client_options) as c:
        yield c


def test_generate_and_download_over_real_http(client: Client, tmp_path: Path) -> None:
    record = client.generate(model="video-a", prompt="a fox", duration=2, resolution="480P")
    assert record.succeeded and record.videos
    paths = client.download(record, tmp_path)
    assert [p.suffix for p in paths] == [".mp4", ".png", ".json"]
    assert json.loads(paths[-1].read_text())["request"]["prompt"] == "a fox"
    assert client.get(record.task_id).status == "succeeded"


def test_works_inside_a_running_event_loop_like_a_notebook_cell(client: Client) -> None:
    async def cell() -> TaskRecord:
        asyncio.get_running_loop()  # a loop is running here, as in Jupyter
        return client.generate(IMAGE)

    assert asyncio.run(cell()).succeeded


def test_works_from_other_threads_at_once(client: Client) -> None:
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        records = list(pool.map(lambda i: client.generate(IMAGE, prompt=f"kite {i}"), range(6)))
    assert all(r.succeeded for r in records)
    assert len({r.task_id for r in records}) == 6
    assert len(runner_threads()) == 1  # one runner thread per client, shared by every caller


def test_generate_future_does_not_block_and_reports_on_the_runner(client: Client) -> None:
    threads: set[str] = set()
    future = client.generate_future(
        IMAGE, on_update=lambda r: threads.add(threading.current_thread().name)
    )
    assert isinstance(future, concurrent.futures.Future)
    record = future.result(timeout=60)
    assert record.succeeded
    assert threads == {"genlab-runner"}
    task = client.submit(IMAGE)
    assert client.wait_future(task).result(timeout=60).task_id == task.task_id


def test_a_future_carries_the_same_errors(client: Client) -> None:
    future = client.generate_future(SLOW, timeout=0.05)
    with pytest.raises(TaskTimeoutError):
        future.result(timeout=60)


def test_map_returns_outcomes_in_order(client: Client) -> None:
    outcomes = client.map([{**IMAGE, "prompt": f"k{i}"} for i in range(5)], concurrency=2)
    assert [o.request["prompt"] for o in outcomes] == [f"k{i}" for i in range(5)]
    assert all(o.ok for o in outcomes)


def test_ctrl_c_while_waiting_names_the_task_and_keeps_it() -> None:
    # A service whose task runs until the test says otherwise: the interrupt always comes
    # while the wait is polling, however busy the machine.
    finished = threading.Event()

    def service(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t-long", "model": "video-a"})
        status = "succeeded" if finished.is_set() else "processing"
        body: dict[str, Any] = {"task_id": "t-long", "status": status, "model": "video-a"}
        if finished.is_set():
            body["videos"] = [{"url": "https://cdn.example/t.mp4"}]
        return httpx.Response(200, json=body)

    def interrupt_once(record: TaskRecord) -> None:  # on the runner: the wait has begun
        if record.status == "processing" and not finished.is_set():
            _thread.interrupt_main()

    # Python's own Ctrl-C handler, whatever an earlier test left installed; and a deadline,
    # so a lost interrupt fails this test instead of hanging the suite.
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with Client("http://svc", "k", transport=httpx.MockTransport(service),
                    pacing=FixedPacing(0.01)) as client:
            task = client.submit(model="video-a", prompt="a fox", duration=10)
            with pytest.raises(KeyboardInterrupt) as caught:
                client.wait(task, on_update=interrupt_once, timeout=120)
            notes = "\n".join(getattr(caught.value, "__notes__", []))
            assert task.task_id in notes and f"client.wait({task.task_id!r})" in notes
            assert isinstance(caught.value, Interrupted)  # a notebook shows only this line:
            assert caught.value._render_traceback_() == [f"genlab: stopped waiting; {notes}"]
            entries = client.history.entries()  # type: ignore[attr-defined]
            assert any(e.task_id == task.task_id for e in entries)
            finished.set()
            assert client.wait(task).succeeded  # the same Task object still works
    finally:
        signal.signal(signal.SIGINT, handler)


def test_calling_the_blocking_api_from_a_callback_is_refused_clearly(client: Client) -> None:
    def callback(record: TaskRecord) -> None:
        client.get(record)

    with pytest.raises(RuntimeError, match="runner thread"):
        client.generate(IMAGE, on_update=callback)


def test_close_stops_the_runner_and_is_idempotent(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    before = len(runner_threads())
    client = Client(client_server.base_url, client_server.api_key, **client_options)
    pending = client.generate_future(SLOW)
    assert len(runner_threads()) == before + 1
    client.close()
    client.close()
    assert client.closed and pending.cancelled()
    assert len(runner_threads()) == before
    with pytest.raises(RuntimeError, match="closed"):
        client.get("t1", kind="video")


def test_a_configuration_error_leaves_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GENLAB_API_KEY", raising=False)
    before = len(runner_threads())
    with pytest.raises(ConfigurationError):
        Client("http://x")
    assert len(runner_threads()) == before


def test_repr_masks_the_key(client: Client, client_key: str) -> None:
    assert client_key not in repr(client)
    assert "api_key='***'" in repr(client)


def _public(cls: type) -> dict[str, Any]:
    return {n: getattr(cls, n) for n in dir(cls) if not n.startswith("_")}


def test_the_facade_has_every_async_method_with_the_same_signature() -> None:
    import inspect

    from genlab import AsyncClient

    blocking, coroutines = _public(Client), _public(AsyncClient)
    for name, method in coroutines.items():
        if not inspect.iscoroutinefunction(method) or name == "aclose":
            continue
        assert name in blocking, f"Client has no {name}()"
        assert inspect.signature(blocking[name]) == inspect.signature(method), name
    for name in ("generate", "wait"):  # and the background twins take the same arguments
        assert inspect.signature(blocking[f"{name}_future"]) == inspect.signature(
            coroutines[name]
        )
    properties = {n for n, v in coroutines.items() if isinstance(v, property)}
    assert properties <= set(blocking), properties - set(blocking)


def test_a_closed_client_refuses_a_call_and_leaves_no_coroutine_behind(
    client_server: EmulatorHandle, client_options: dict[str, Any]
) -> None:
    # filterwarnings=error turns a coroutine that was never awaited into a failure here.
    import gc
    import warnings

    client = Client(client_server.base_url, client_server.api_key, **client_options)
    client.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in (lambda: client.find_reusable(IMAGE), lambda: client.generate(IMAGE),
                     lambda: client.generate_future(IMAGE)):
            with pytest.raises(RuntimeError, match="closed; create a new one"):
                call()
        gc.collect()


def test_a_call_the_runner_stops_before_starting_is_refused_not_leaked_or_hung() -> None:
    from genlab.client._sync import Runner

    runner, started, release, made = Runner(), threading.Event(), threading.Event(), []

    def busy_then_stop() -> None:  # the loop is busy, then stops with our call still queued
        started.set()
        release.wait(10)
        runner.loop.stop()

    async def work() -> int:
        return 1

    def make() -> Any:
        made.append(True)
        return work()

    runner.loop.call_soon_threadsafe(busy_then_stop)
    assert started.wait(10)
    threading.Timer(0.1, release.set).start()
    with pytest.raises(RuntimeError, match="closed; create a new one"):
        runner.run(make)
    assert made == []  # never made, so never left un-awaited
    runner.stop()
