"""A result shows itself in a notebook cell: in a real Jupyter kernel, ``client.generate(...)``
shows one live line while it waits, which ends as one line, and the result is then its card
(its image embedded, the prompt, the settings); Ctrl-C while waiting says in one line how to
resume."""

from __future__ import annotations

import base64
import queue
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

SETUP = textwrap.dedent("""
    import os, genlab
    os.chdir({folder!r})
    client = genlab.connect(time_scale=0.05)
""")


@pytest.fixture(scope="module")
def manager() -> Iterator[KernelManager]:
    started = KernelManager(kernel_name="python3")
    started.start_kernel()
    yield started
    started.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel(manager: KernelManager, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    folder = tmp_path_factory.mktemp("cells")
    run(client, SETUP.format(folder=str(folder)))
    yield client
    client.stop_channels()


def run(client: Any, code: str, timeout: float = 180) -> list[dict[str, Any]]:
    """Execute ``code``; every iopub message of it, until the kernel is idle again."""
    msg_id = client.execute(code)
    messages = []
    while True:
        try:
            message = client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from the kernel in {timeout} s") from None
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return messages


def html_of(messages: list[dict[str, Any]], kind: str) -> list[str]:
    return [m["content"]["data"].get("text/html", "") for m in messages
            if m["msg_type"] == kind]


def test_a_generate_shows_a_live_line_then_one_card(kernel: Any) -> None:
    messages = run(kernel, 'client.generate(model="image-b", prompt="a <b>kite</b> at dusk")')
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert errors == []
    lines = html_of(messages, "display_data")
    assert len(lines) == 1 and "image-b · task task_" in lines[0]
    # The line ends as one line, in plain text (no glyph a font may lack), never as a card.
    ended = html_of(messages, "update_display_data")[-1]
    assert "succeeded in" in ended and "genlab-record" not in ended and "⏳" not in ended
    # The result is the cell's value: its one card, the image embedded, the prompt escaped.
    (result,) = [m["content"]["data"] for m in messages if m["msg_type"] == "execute_result"]
    card = result["text/html"]
    assert card.count("genlab-record") == 1 and '<img src="data:image/png;base64,' in card
    assert "a &lt;b&gt;kite&lt;/b&gt; at dusk" in card
    png = card.split('<img src="data:image/png;base64,', 1)[1].split('"', 1)[0]
    assert base64.b64decode(png).startswith(b"\x89PNG")
    assert not [m for m in messages if m["msg_type"] == "stream" and
                m["content"]["name"] == "stderr"]


def test_a_record_shown_again_is_its_card_with_the_kept_media(kernel: Any) -> None:
    run(kernel, 'record = client.generate(model="image-b", prompt="a kite", progress=False)')
    messages = run(kernel, "record")
    (result,) = [m["content"]["data"] for m in messages if m["msg_type"] == "execute_result"]
    assert '<img src="data:image/png;base64,' in result["text/html"]
    kept = run(kernel, "print([os.path.basename(p) for p in record.kept])")
    (printed,) = [m["content"]["text"] for m in kept if m["msg_type"] == "stream"]
    assert printed.strip().endswith(".json']") and ".png'" in printed


def test_ctrl_c_while_waiting_says_how_to_resume_in_one_line(
    kernel: Any, manager: KernelManager
) -> None:
    msg_id = kernel.execute(
        'task = client.submit(model="video-a", prompt="a long wait", duration=30, '
        'resolution="1080P")\n'
        "client.wait(task)"
    )
    # interrupt once the live line shows: the wait has begun
    seen = []
    while True:
        message = kernel.get_iopub_msg(timeout=120)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(message)
        if message["msg_type"] == "display_data":
            break
    manager.interrupt_kernel()  # the notebook's stop button
    while True:
        message = kernel.get_iopub_msg(timeout=120)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(message)
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            break
    (error,) = [m["content"] for m in seen if m["msg_type"] == "error"]
    assert error["ename"] == "Interrupted"
    # One line: the exception's report, and no logged warning saying it again.
    assert not [m for m in seen if m["msg_type"] == "stream" and "interrupted" in
                m["content"].get("text", "")]
    assert len(error["traceback"]) == 1
    assert "resume with client.wait('task_" in error["traceback"][0]


def test_a_map_outcome_shows_as_a_grid_of_cards(kernel: Any) -> None:
    messages = run(kernel, 'client.map([{"model": "image-b", "prompt": "kite one"}, '
                           '{"model": "image-b", "prompt": "kite two"}, '
                           '{"model": "image-b", "prompt": "x", "aspect_ratio": "7:3"}])')
    (result,) = [m["content"]["data"] for m in messages if m["msg_type"] == "execute_result"]
    page = result["text/html"]
    assert "genlab-records" in page and page.count("genlab-record'") == 2
    assert page.count('<img src="data:image/png;base64,') == 2
    assert "InvalidParameterError" in page  # the third request's error, in its own cell
