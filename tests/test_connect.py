"""genlab.connect(): the embedded emulator when nothing is configured, the service otherwise;
and local files as references (uploads to the emulator, data URIs where allowed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import genlab
from genlab import emulator
from genlab.client import data_uri
from genlab.emulator._render import render_image
from genlab.history import History


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("GENLAB_BASE_URL", "GENLAB_API_KEY", "GENLAB_HISTORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def embedded(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[genlab.Client]:
    client = genlab.connect(poll_scale=0.05)
    yield client
    client.close()
    history = client.history
    if isinstance(history, History):
        history.close()


def test_connect_without_configuration_uses_the_embedded_emulator(
    clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with genlab.connect(poll_scale=0.05) as client:
        said = capsys.readouterr().out
        assert said.count("\n") == 1 and "embedded emulator" in said
        assert client.supports_uploads
        assert client.config.api_key.reveal() not in said
        record = client.generate(model="image-d", prompt="a kite", resolution="512")
        assert record.succeeded
        history = client.history
        assert isinstance(history, History)
        assert history.path == Path(".genlab/history.sqlite")
        assert (clean_env / ".genlab" / "history.sqlite").exists()
        assert history.df()["status"].tolist() == ["succeeded"]
        history.close()


def test_connect_uses_the_service_when_configured(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with emulator.start(api_key="configured-key-123", time_scale=0.02) as service:
        monkeypatch.setenv("GENLAB_BASE_URL", service.base_url)
        monkeypatch.setenv("GENLAB_API_KEY", "configured-key-123")
        with genlab.connect(history=False, poll_scale=0.05) as client:
            assert client.base_url == service.base_url and not client.supports_uploads
            assert capsys.readouterr().out == ""
            assert client.generate(model="image-b", prompt="x").succeeded
        assert len(service.ledger()) == 1


def test_connect_without_a_key_says_how_to_set_it(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GENLAB_BASE_URL", "http://127.0.0.1:9")
    with pytest.raises(genlab.GenlabError, match="GENLAB_API_KEY"):
        genlab.connect(history=False)


def test_uploaded_files_can_be_references(embedded: genlab.Client, tmp_path: Path) -> None:
    frame = tmp_path / "frame.png"
    frame.write_bytes(render_image(640, 480, lines=["first frame"]))
    url = embedded.upload(frame)
    assert url.startswith(embedded.base_url) and url.endswith("frame.png")
    record = embedded.generate(
        model="video-f",
        prompt="",
        duration=3,
        reference_images=[{"url": url, "reference_type": "first_frame"}],
    )
    assert record.succeeded and record.videos is not None
    assert (record.videos[0].width, record.videos[0].height) == (1280, 720)


def test_data_uris_work_where_the_model_allows_them(embedded: genlab.Client) -> None:
    uri = data_uri(render_image(720, 720, lines=["square"]), "square.png")
    assert uri.startswith("data:image/png;base64,")
    record = embedded.generate(
        model="video-c",
        prompt="",
        resolution="720P",
        duration=3,
        reference_images=[{"url": uri, "reference_type": "first_frame"}],
    )
    assert record.videos is not None and record.videos[0].width == record.videos[0].height
    with pytest.raises(genlab.InvalidParameterError, match="public http"):
        embedded.submit(
            model="video-f",
            prompt="x",
            reference_images=[{"url": uri, "reference_type": "first_frame"}],
        )


def test_non_media_uploads_are_refused_clearly(embedded: genlab.Client) -> None:
    with pytest.raises(genlab.InvalidParameterError, match="could not be read"):
        embedded.upload(b"just text", "notes.txt")
