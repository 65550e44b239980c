"""What a person generates is kept the moment it succeeds: in the media store beside the
history, recorded in the history row, still there after the service's links expired and after
a restart; a save that fails never loses the task, and a crash mid-save loses nothing."""

from __future__ import annotations

import json
import logging
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import genlab
from _children import kill_after_first_line
from genlab.emulator import EmulatorHandle, start_profile
from genlab.history import History

IMAGE = {"model": "image-b", "prompt": "a kite kept"}
VIDEO = {"model": "video-a", "prompt": "a fox kept", "duration": 2, "resolution": "480P"}


def test_a_client_with_a_history_keeps_what_succeeds_beside_it(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path
) -> None:
    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                           **client_options) as client:
            record = client.generate(VIDEO)
        kept = [Path(p) for p in record.kept]
        assert [p.parent for p in kept] == [tmp_path / "media"] * 3
        assert [p.suffix for p in kept] == [".mp4", ".png", ".json"]  # video, cover, sidecar
        assert kept[0].read_bytes()[4:8] == b"ftyp" and kept[0].stat().st_size > 1000
        assert json.loads(kept[-1].read_text())["request"]["prompt"] == "a fox kept"
        (row,) = history.df().to_dict("records")
        assert row["status"] == "succeeded" and json.loads(row["paths"]) == list(record.kept)
    finally:
        history.close()


def test_by_default_results_are_kept_where_jupyter_serves_them_and_older_ones_still_found(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GENLAB_HISTORY", raising=False)
    monkeypatch.delenv("GENLAB_MEDIA", raising=False)
    history = History()  # .genlab/history.sqlite
    try:
        # Kept by an earlier genlab, inside the hidden .genlab/media.
        with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                           keep=Path(".genlab") / "media", **client_options) as client:
            old = client.generate(IMAGE)
        with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                           **client_options) as client:
            new = client.generate({**IMAGE, "prompt": "a kite kept where links open"})
            again = client.generate(IMAGE, reuse=True)  # the earlier result, from the history
            served = [client.download(record) for record in (old, again)]
    finally:
        history.close()
    # New results: in genlab-media/, a folder Jupyter's server serves (not a hidden one).
    assert {Path(p).parent for p in new.kept} == {Path("genlab-media")}
    assert all(Path(p).is_file() for p in new.kept)
    # Older files stay where they were, and are found there.
    assert {Path(p).parent for p in old.kept} == {Path(".genlab") / "media"}
    assert again.task_id == old.task_id
    for files in served:  # the kept files themselves, not copies fetched again
        assert {Path(p) for p in files} <= {Path(p) for p in old.kept} and files
        assert all(Path(p).is_file() for p in files)


def test_without_a_history_or_with_keep_false_nothing_is_kept(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with genlab.Client(client_server.base_url, client_server.api_key,
                       **client_options) as client:
        assert client.generate(IMAGE).kept == ()
    history = History(tmp_path / "h.sqlite")
    with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                       keep=False, **client_options) as client:
        assert client.generate(IMAGE).kept == ()
    history.close()
    assert list(tmp_path.rglob("*.png")) == []


def test_kept_files_outlive_the_links_and_a_restart(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with start_profile("cdn", api_key="k", time_scale=0.02, link_ttl=3) as service:
        history = History(tmp_path / "history.sqlite")
        with genlab.Client(service.base_url, "k", history=history, keep=store,
                           poll_scale=0.02) as client:
            record = client.generate(IMAGE)  # its links live 3 s: kept at once
            time.sleep(3.5)
            with pytest.raises(genlab.MediaError):
                client.fetch_media(record.images[0].url)
            served = client.download(record)  # the kept files, no fetch
            copied = client.download(record, tmp_path / "copy")
        history.close()
        assert [Path(p) for p in served] == [Path(p) for p in record.kept]
        assert [p.read_bytes() for p in copied] == [Path(p).read_bytes() for p in record.kept]
        # a new process: the history still points at the kept files
        again = History(tmp_path / "history.sqlite")
        (row,) = again.df().to_dict("records")
        again.close()
        assert all(Path(p).is_file() for p in json.loads(row["paths"]))
        assert Path(json.loads(row["paths"])[0]).parent == store


def test_a_save_that_fails_never_loses_the_task(
    client_options: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def service(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"task_id": "t1", "model": "image-b"})
        if request.url.host == "cdn.example":
            return httpx.Response(500)  # the media host is down
        return httpx.Response(200, json={
            "task_id": "t1", "status": "succeeded", "model": "image-b",
            "images": [{"url": "https://cdn.example/t1.png"}]})

    history = History(tmp_path / "history.sqlite")
    with genlab.Client("http://svc", "k", history=history, transport=httpx.MockTransport(
            service), **{**client_options, "max_retries": 1}) as client, \
            caplog.at_level(logging.WARNING, logger="genlab"):
        record = client.generate(IMAGE)
    (row,) = history.df().to_dict("records")
    history.close()
    assert record.succeeded and record.kept == ()
    assert row["status"] == "succeeded" and row["task_id"] == "t1" and not row["paths"]
    assert any("could not be kept" in r.getMessage() and "client.download(record)" in
               r.getMessage() for r in caplog.records)


KEEPER = textwrap.dedent("""
    import sys, genlab
    import genlab.client._lifecycle as lifecycle
    from genlab.history import History

    async def stalls(*args, **kwargs):  # the process dies here: succeeded, not yet kept
        print("keeping", flush=True)
        import asyncio
        await asyncio.sleep(3600)

    lifecycle.download_task = stalls
    location, base_url, key = sys.argv[1:4]
    with genlab.Client(base_url, key, history=History(location), poll_scale=0.02) as client:
        client.generate(model="image-b", prompt="a kite, killed while kept")
""")


def test_a_crash_between_succeeded_and_kept_loses_nothing(
    client_server: EmulatorHandle, tmp_path: Path
) -> None:
    location = str(tmp_path / "history.sqlite")
    line = kill_after_first_line(KEEPER, location, client_server.base_url,
                                 client_server.api_key, pause=0)
    assert line == "keeping"
    history = History(location)
    try:
        (row,) = history.df().to_dict("records")
        assert row["status"] != "succeeded"  # not journaled as done before it was kept
        with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                           poll_scale=0.02) as client:
            (outcome,) = history.resume(client, timeout=60)
        assert outcome.record is not None and outcome.record.succeeded
        kept = [Path(p) for p in outcome.record.kept]
        assert kept and kept[0].parent == tmp_path / "media" and kept[0].is_file()
        (row,) = history.df().to_dict("records")
        assert row["status"] == "succeeded" and json.loads(row["paths"]) == [
            str(p) for p in kept]
    finally:
        history.close()


def test_kept_files_carry_their_request_and_inspect_finds_them_anywhere(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path
) -> None:
    import shutil

    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                           **client_options) as client:
            image = client.generate(IMAGE)
            video = client.generate(VIDEO)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        for record, name in ((image, "renamed.png"), (video, "renamed.mp4")):
            copy = shutil.copy(record.kept[0], elsewhere / name)
            found = genlab.inspect(copy, history=history)
            assert found.found and found.source == "file"
            assert found.task_id == record.task_id and found.model == record.model
            assert found.history_row is not None
            assert found.history_row["task_id"] == record.task_id
        shown = genlab.inspect(elsewhere / "renamed.png", history=history)
        assert shown.prompt == IMAGE["prompt"]
        assert "resolution" in (shown.request or {})  # every field, with its defaults
        key = client_server.api_key
        for place in (*image.kept[:-1], *video.kept[:-1]):
            assert key.encode() not in Path(place).read_bytes()  # never the key
    finally:
        history.close()


def test_a_studio_card_shows_the_kept_files_not_a_temporary_copy(
    client_server: EmulatorHandle, client_options: dict[str, Any], tmp_path: Path
) -> None:
    from genlab.widgets import TaskCard

    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client(client_server.base_url, client_server.api_key, history=history,
                           **client_options) as client:
            card = TaskCard(client, IMAGE, media_dir=tmp_path / "cards").start()
            assert card.wait_done(120)
        assert card.record is not None and card.record.kept
        assert [str(p) for p in card.paths] == list(card.record.kept)
        assert "data:image/png;base64," in card.media.value
        assert not (tmp_path / "cards").exists()  # nothing saved twice
    finally:
        history.close()
