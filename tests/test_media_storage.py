"""Media in object storage: downloads to ``s3://`` (and ``GENLAB_MEDIA``), read back by reports,
task cards and the Studio, against a real S3-compatible server on loopback (moto, see _s3.py)."""

from __future__ import annotations

import base64
import json
import logging
import re
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import genlab
from _s3 import S3, S3_KEY_ID, S3_SECRET
from genlab import report
from genlab.client import ReusedRecord
from genlab.client.journal import MemoryJournal
from genlab.emulator import EmulatorHandle
from genlab.history import History
from genlab.media import media_size, read_media
from genlab.widgets import Background, Studio

IMAGE = {"model": "image-d", "prompt": "a kite over the sea", "resolution": "512"}
VIDEO = {"model": "video-a", "prompt": "a fox at dusk", "duration": 2, "resolution": "480P"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WAIT = 60.0


class RecordingJournal(MemoryJournal):
    """The default journal, also keeping what ``results_saved`` was told."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[tuple[str, list[Any]]] = []

    def results_saved(self, task_id: str, paths: Sequence[Path | str]) -> None:
        self.saved.append((task_id, list(paths)))
        super().results_saved(task_id, paths)


@pytest.fixture
def client(
    client_server: EmulatorHandle, client_key: str, client_options: dict[str, Any]
) -> Iterator[genlab.Client]:
    with genlab.Client(
        client_server.base_url, client_key, history=RecordingJournal(), **client_options
    ) as c:
        yield c


def objects(s3: S3, prefix: str = "") -> dict[str, bytes]:
    """Every object under ``prefix`` in the test's bucket, read with boto3 (not genlab)."""
    api = s3.client()
    listed = api.list_objects_v2(Bucket=s3.bucket, Prefix=prefix).get("Contents", [])
    return {
        o["Key"]: api.get_object(Bucket=s3.bucket, Key=o["Key"])["Body"].read() for o in listed
    }


def embedded(page: str, kind: str) -> list[bytes]:
    pattern = rf'<{kind} [^>]*src="data:[^;]+;base64,([A-Za-z0-9+/=]+)"'
    return [base64.b64decode(m) for m in re.findall(pattern, page)]


def offline(url: str) -> bytes:
    raise AssertionError(f"fetched {url}")


# --- downloads into a bucket --------------------------------------------------------------


def test_download_to_s3_writes_media_and_sidecar_beside_it(
    client: genlab.Client, s3: S3
) -> None:
    record = client.generate(IMAGE)
    assert record.images
    urls = client.download(record, s3.url("runs/"))

    task = record.task_id
    assert urls == [s3.url(f"runs/{task}.png"), s3.url(f"runs/{task}.json")]
    stored = objects(s3, "runs/")
    assert set(stored) == {f"runs/{task}.png", f"runs/{task}.json"}
    original = client.fetch_media(record.images[0].url)
    assert stored[f"runs/{task}.png"] == original
    sidecar = json.loads(stored[f"runs/{task}.json"])
    assert sidecar["task_id"] == task and sidecar["model"] == "image-d"
    assert sidecar["files"] == [f"{task}.png"] and sidecar["request"]["prompt"] == IMAGE["prompt"]
    # read back through genlab's own helpers, as reports and widgets do
    assert read_media(urls[0]) == original and media_size(urls[0]) == len(original)
    # the journal (the history) is told the storage URLs, not local paths
    journal = client.history
    assert isinstance(journal, RecordingJournal)
    assert journal.saved == [(task, urls)]


def test_a_video_keeps_its_cover_and_the_history_stores_the_urls(
    client_server: EmulatorHandle, client_key: str, client_options: dict[str, Any],
    s3: S3, tmp_path: Path,
) -> None:
    history = History(tmp_path / "history.sqlite")
    try:
        with genlab.Client(client_server.base_url, client_key, history=history, keep=False,
                           **client_options) as client:  # only the copies below are saved
            record = client.generate(VIDEO)
            urls = client.download(record, s3.url("team/videos"))
        assert [u for u in urls if isinstance(u, Path)] == []
        names = {str(u).rsplit("/", 1)[1] for u in urls}
        task = record.task_id
        assert names == {f"{task}.mp4", f"{task}_cover.png", f"{task}.json"}
        assert set(objects(s3, "team/videos/")) == {f"team/videos/{n}" for n in names}
        (row,) = history.df().to_dict("records")
        assert json.loads(row["paths"]) == urls
        # a report built from the history shows the stored video, with no HTTP fetch
        page = report.report_html(history.df(), fetch=offline)
        (video,) = embedded(page, "video")
        assert video[4:8] == b"ftyp"
    finally:
        history.close()


def test_genlab_media_is_the_default_destination(
    client: genlab.Client, s3: S3, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GENLAB_MEDIA", s3.url("shared/"))
    record = client.generate(IMAGE)
    urls = client.download(record)
    assert urls == [s3.url(f"shared/{record.task_id}.png"),
                    s3.url(f"shared/{record.task_id}.json")]
    assert set(objects(s3, "shared/")) == {f"shared/{record.task_id}.png",
                                           f"shared/{record.task_id}.json"}
    # an explicit folder still wins, and a local one gives paths as before
    local = client.download(record, tmp_path)
    assert local == [tmp_path / f"{record.task_id}.png", tmp_path / f"{record.task_id}.json"]
    assert local[0].read_bytes() == read_media(urls[0])


async def test_the_async_client_passes_storage_options_to_the_store(
    client_server: EmulatorHandle, client_key: str, client_options: dict[str, Any],
    s3: S3, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3")  # only storage_options say where the server is
    options = {"client_kwargs": {"endpoint_url": s3.endpoint}}
    async with genlab.AsyncClient(client_server.base_url, client_key, **client_options) as c:
        record = await c.generate(IMAGE)
        urls = await c.download(record, s3.url("async"), storage_options=options)
    assert urls[0] == s3.url(f"async/{record.task_id}.png")
    assert objects(s3, "async/")[f"async/{record.task_id}.png"].startswith(PNG_MAGIC)


def test_a_reused_result_is_copied_from_the_bucket(
    client: genlab.Client, s3: S3, tmp_path: Path
) -> None:
    seeded = {"model": "video-b", "prompt": "a lighthouse", "duration": 4, "resolution": "480P",
              "extra_params": {"seed": 7}}
    first = client.generate(seeded)
    urls = client.download(first, s3.url("seeded"))
    again = client.generate(seeded)  # seeded: reuse applies, nothing is paid
    assert isinstance(again, ReusedRecord) and again.task_id == first.task_id
    assert list(again.reused.paths) == urls
    copies = client.download(again, tmp_path)
    assert [p.name for p in copies if isinstance(p, Path)] == [u.rsplit("/", 1)[1] for u in urls]
    assert copies[0].read_bytes() == read_media(urls[0])  # type: ignore[union-attr]


# --- reports, cards and the Studio read stored media -----------------------------------------


def test_media_html_embeds_files_from_the_bucket(client: genlab.Client, s3: S3) -> None:
    record = client.generate(IMAGE)
    urls = client.download(record, s3.url("tiles"))
    page = report.media_html(urls)
    assert embedded(page, "img") == [read_media(urls[0])]
    gone = s3.url("tiles/missing.png")
    assert "could not be read (not found)" in report.media_html([gone])


@pytest.fixture
def widgets_pool() -> Iterator[None]:
    yield
    Background.shared().shutdown()


def test_the_studio_saves_into_the_bucket_and_shows_the_media(
    client: genlab.Client, s3: S3, monkeypatch: pytest.MonkeyPatch, widgets_pool: None
) -> None:
    monkeypatch.setenv("GENLAB_MEDIA", s3.url("studio/"))
    studio = Studio(client)  # no media_dir: GENLAB_MEDIA
    assert studio.media_dir == s3.url("studio")
    studio.set(**IMAGE)
    card = studio.submit()
    assert card.future is not None
    record = card.future.result(timeout=WAIT)
    assert card.wait_done(WAIT), "the card never reached its final state"
    assert card.status == "succeeded", card.message.value
    task = record.task_id
    assert card.paths == [s3.url(f"studio/{task}/{task}.png"), s3.url(f"studio/{task}/{task}.json")]
    (shown,) = embedded(card.media.value, "img")
    assert shown == objects(s3, f"studio/{task}/")[f"studio/{task}/{task}.png"]


# --- errors: what is missing, and no credential ever shown ---------------------------------


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_import_and_local_downloads_never_import_fsspec(
    client_server: EmulatorHandle, client_key: str, tmp_path: Path
) -> None:
    done = _run(f"""
        import sys
        import genlab
        with genlab.Client({client_server.base_url!r}, {client_key!r}, poll_scale=0.02) as c:
            record = c.generate(model="image-d", prompt="a kite", resolution="512")
            paths = c.download(record, {str(tmp_path)!r})
            assert paths[0].read_bytes() == genlab.media.read_media(paths[0])
        print(sorted(m for m in sys.modules
                     if m.split(".")[0] in ("fsspec", "s3fs", "botocore", "aiobotocore")))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert len(list(tmp_path.iterdir())) == 2


def test_a_missing_backend_says_what_to_install(
    client_server: EmulatorHandle, client_key: str
) -> None:
    done = _run(f"""
        import sys
        sys.modules["s3fs"] = None  # as if genlab[team] were not installed
        import genlab
        with genlab.Client({client_server.base_url!r}, {client_key!r}, poll_scale=0.02) as c:
            record = c.generate(model="image-d", prompt="a kite", resolution="512")
            try:
                c.download(record, "s3://team-media/runs/")
            except genlab.ConfigurationError as exc:
                print(exc)
        try:
            genlab.media.read_media("s3://team-media/runs/t1.png")
        except genlab.ConfigurationError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("media at s3://team-media/runs")
        assert 'pip install "genlab[team]"' in line and "s3fs" in line


def test_an_unknown_protocol_is_refused_clearly(client: genlab.Client) -> None:
    with pytest.raises(genlab.ConfigurationError, match="not a storage URL genlab can use"):
        read_media("nosuchproto://bucket/t1.png")


def test_store_errors_name_the_url_and_never_a_credential(
    client: genlab.Client, s3: S3, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="genlab")
    record = client.generate(IMAGE)
    options = {"key": S3_KEY_ID, "secret": S3_SECRET,
               "client_kwargs": {"endpoint_url": s3.endpoint}}
    with pytest.raises(genlab.ConfigurationError) as refused:
        client.download(record, "s3://genlab-no-such-bucket/runs/", storage_options=options)
    message = str(refused.value)
    assert message.startswith(
        "could not store media at s3://genlab-no-such-bucket/runs: FileNotFoundError"
    )
    assert "bucket" in message and "credentials" in message  # says what to check
    with pytest.raises(genlab.MediaError, match=r"runs/absent\.png: not found$"):
        read_media(s3.url("runs/absent.png"), storage_options=options)
    with pytest.raises(genlab.MediaError) as missing:  # a version the bucket does not keep
        read_media(s3.url("runs/absent.png?versionId=sig-9f2"), storage_options=options)
    assert str(missing.value).startswith(f"could not fetch media {s3.url('runs/absent.png')}: ")
    messages = [
        message, repr(refused.value), str(missing.value), repr(missing.value),
        *(r.getMessage() for r in caplog.records if r.name.startswith("genlab")),
    ]
    for text in messages:
        assert S3_SECRET not in text and S3_KEY_ID not in text
        assert "sig-9f2" not in text
    for exc in (refused.value, missing.value):  # nor in the chain a traceback would print
        shown = "".join(traceback.format_exception(exc))
        assert S3_SECRET not in shown and S3_KEY_ID not in shown
