"""Where the interface describes an effect on the media, the emulator produces it: kept source
audio, a visible watermark, seeds, huge character images, the media rules' decisions (MB,
duration tolerance, video-b's 480P/720P), and results usable as references at once.

Everything goes over real HTTP on loopback (``genlab.emulator.start``).
"""

from __future__ import annotations

import io
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import httpx
import numpy as np
import pytest
from PIL import Image

from genlab.catalog import MB, media_problems, plan_output, validate
from genlab.catalog._media import DURATION_TOLERANCE
from genlab.emulator import EmulatorHandle, samples, start
from genlab.emulator._kept import KeptAudio
from genlab.emulator._tasks import EmulatedTask, TaskBook
from genlab.media import MediaInfo, probe

KEY = "sk-genlab-faithful-91d2"
TONE_HZ = 1000.0


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorHandle]:
    with start(api_key=KEY, time_scale=0.005) as handle:
        yield handle


@pytest.fixture(scope="module")
def http(server: EmulatorHandle) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=60) as client:
        yield client


def upload(http: httpx.Client, name: str, data: bytes) -> str:
    answer = http.post("/v1/uploads", files={"file": (name, data)})
    assert answer.status_code == 200, answer.text
    url = answer.json()["url"]
    assert isinstance(url, str)
    return url


def finished(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    """Submit ``body`` and poll (bounded) until it succeeds; its record."""
    kind = "images" if body["model"].startswith("image") else "videos"
    answer = http.post(f"/v1/{kind}/generate", json=body)
    assert answer.status_code == 200, answer.text
    task_id = answer.json()["task_id"]
    deadline = time.monotonic() + 60
    for _ in range(2000):
        record: dict[str, Any] = http.get(f"/v1/{kind}/tasks/{task_id}").json()
        if record["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert record["status"] == "succeeded", record
    return record


def video_of(http: httpx.Client, body: dict[str, Any]) -> bytes:
    return httpx.get(finished(http, body)["videos"][0]["url"]).content


def first_frame(data: bytes) -> np.ndarray[Any, Any]:
    with av.open(io.BytesIO(data)) as container:
        frame = next(container.decode(video=0))
        return np.asarray(frame.to_ndarray(format="rgb24"), dtype=np.int16)


def dominant_hz(data: bytes) -> float | None:
    """The strongest frequency of a file's audio track; None without one."""
    with av.open(io.BytesIO(data)) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        rate = stream.rate
        samples_ = np.concatenate(
            [f.to_ndarray().mean(axis=0) for f in container.decode(stream)]
        )
    spectrum = np.abs(np.fft.rfft(samples_[: rate * 2]))
    return float(np.fft.rfftfreq(len(samples_[: rate * 2]), 1 / rate)[spectrum.argmax()])


# --- audio of the source -----------------------------------------------------------------


@pytest.fixture(scope="module")
def toned_clip(http: httpx.Client) -> str:
    return upload(http, "toned.mp4", samples.video(1280, 720, 4.0, tone_hz=TONE_HZ))


@pytest.mark.parametrize(
    ("extra", "kept"), [({"audio_setting": "origin"}, True), ({"audio_setting": "auto"}, False)]
)
def test_video_c_edit_with_origin_keeps_the_source_audio(
    http: httpx.Client, toned_clip: str, extra: dict[str, str], kept: bool
) -> None:
    body = {"model": "video-c", "prompt": "make it snow", "resolution": "720P",
            "extra_params": extra,
            "reference_videos": [{"url": toned_clip, "reference_type": "edit_source"}]}
    hz = dominant_hz(video_of(http, body))
    if kept:
        assert hz == pytest.approx(TONE_HZ, abs=5)
    else:
        assert hz is None


@pytest.mark.parametrize(("keep", "kept"), [(True, True), ("yes", True), (False, False)])
def test_video_e_keep_original_sound_keeps_the_source_audio(
    http: httpx.Client, toned_clip: str, keep: Any, kept: bool
) -> None:
    body = {"model": "video-e", "prompt": "make it snow",
            "reference_videos": [{"url": toned_clip, "reference_type": "edit_source",
                                  "keep_original_sound": keep}]}
    data = video_of(http, body)
    hz = dominant_hz(data)
    assert (hz == pytest.approx(TONE_HZ, abs=5)) if kept else hz is None
    if kept:
        with av.open(io.BytesIO(data)) as container:
            audio, video = container.streams.audio[0], container.streams.video[0]
            assert float(audio.duration * audio.time_base) == pytest.approx(
                float(video.duration * video.time_base), abs=0.1
            )


def test_kept_source_audio_is_removed_once_its_video_is_rendered(
    server: EmulatorHandle, http: httpx.Client, toned_clip: str
) -> None:
    folder = server.app.emulator.kept_audio.folder
    before = set(folder.glob("*.m4a"))
    body = {"model": "video-c", "prompt": "make it snow", "resolution": "720P",
            "extra_params": {"audio_setting": "origin"},
            "reference_videos": [{"url": toned_clip, "reference_type": "edit_source"}]}
    url = finished(http, body)["videos"][0]["url"]
    kept = set(folder.glob("*.m4a")) - before
    assert len(kept) == 1  # kept until the video is rendered
    first = httpx.get(url).content
    assert dominant_hz(first) == pytest.approx(TONE_HZ, abs=5)
    assert not next(iter(kept)).exists()  # the video carries it now
    assert httpx.get(url).content == first  # served from the store, unchanged
    key = url.split("/media/", 1)[1]
    stored = server.app.emulator.store.get(key)
    assert stored is not None
    stored.path.unlink()  # as if evicted: it cannot be rendered faithfully again
    gone = httpx.get(url)
    assert gone.status_code == 410
    assert gone.json()["error"]["code"] == "MEDIA_EXPIRED"


def test_kept_source_audio_goes_when_its_task_is_forgotten(tmp_path: Path) -> None:
    kept = KeptAudio(tmp_path / "inputs")
    now = [0.0]
    forgotten: list[str] = []

    def forget(task: EmulatedTask) -> None:
        forgotten.append(task.task_id)
        assert task.audio_source is not None
        kept.forget(task.audio_source)

    book = TaskBook(clock=lambda: now[0], max_tasks=1, on_forget=forget)
    request = validate({"model": "video-a", "prompt": "p", "duration": 2})
    tracks = [kept.keep(b"track", videos=1) for _ in range(2)]
    book.add(request=request, request_id="r", plan=plan_output(request), fails=False, lines=[],
             audio_source=tracks[0])
    now[0] = 1e9  # the first task has long finished
    book.add(request=request, request_id="r", plan=plan_output(request), fails=False, lines=[],
             audio_source=tracks[1])
    assert len(book) == 1 and len(forgotten) == 1
    assert not tracks[0].exists() and tracks[1].exists()
    kept.close()
    assert not (tmp_path / "inputs").exists()


# --- watermark and seed ------------------------------------------------------------------


def video_b(**extra: Any) -> dict[str, Any]:
    return {"model": "video-b", "prompt": "a paper boat", "duration": 4, "resolution": "480P",
            "aspect_ratio": "16:9", "generate_audio": False, "extra_params": extra}


def test_video_b_watermark_is_visible(http: httpx.Client) -> None:
    plain = first_frame(video_of(http, video_b(seed=7)))
    marked = first_frame(video_of(http, video_b(seed=7, watermark=True)))
    height, width, _ = plain.shape
    corner = (slice(0, height // 6), slice(width // 2, width))
    changed = np.abs(marked[corner] - plain[corner]).max(axis=2) > 60
    assert changed.sum() > 200  # strokes of white text on its dark outline
    rest = (slice(height // 3, height), slice(0, width))
    assert np.abs(marked[rest] - plain[rest]).mean() < 2  # only the corner is stamped


def test_video_b_same_seed_is_identical_and_other_seeds_differ(http: httpx.Client) -> None:
    one = video_of(http, video_b(seed=11))
    again = video_of(http, video_b(seed=11))
    other = video_of(http, video_b(seed=12))
    assert one == again
    # Other colours, and the seed shown in the text.
    assert np.abs(first_frame(one) - first_frame(other)).mean() > 3


# --- probing and media rules -------------------------------------------------------------


def huge_png(width: int, height: int) -> bytes:
    """A real 1-bit PNG of any size, built row by row (a few kB for a blank picture)."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    packer = zlib.compressobj(9)
    row = b"\0" + b"\xff" * ((width + 7) // 8)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


def test_video_d_takes_a_character_image_larger_than_pillows_bomb_limit(
    http: httpx.Client,
) -> None:
    png = huge_png(14000, 6400)
    info = probe(png, strict=True)
    assert (info.kind, info.extension, info.bytes, info.width, info.height) == (
        "image", ".png", len(png), 14000, 6400)
    body = {"model": "video-d", "prompt": "dance",
            "reference_images": [{"url": upload(http, "character.png", png)}],
            "reference_videos": [{"url": upload(http, "motion.mp4", samples.video(720, 720, 3.5))}]}
    assert http.post("/v1/videos/generate", json=body).status_code == 200


def test_video_b_reference_videos_must_be_480p_or_720p(http: httpx.Client) -> None:
    # 1000x410: inside the pixel-product range and the aspect range, yet below 480P.
    low = upload(http, "low.mp4", samples.video(1000, 410, 3.0))
    body = {"model": "video-b", "prompt": "p", "reference_videos": [{"url": low}],
            "reference_images": [{"url": upload(http, "a.png", samples.image(720, 720))}]}
    answer = http.post("/v1/videos/generate", json=body)
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert (
        "is 1000x410 (below 480P by its shorter side of 410 pixels); video-b accepts 480P or "
        "720P videos" in message
    )
    body["reference_videos"] = [{"url": upload(http, "ok.mp4", samples.video(720, 720, 3.0))}]
    assert http.post("/v1/videos/generate", json=body).status_code == 200


def test_a_megabyte_is_a_mebibyte_everywhere() -> None:
    rules = validate({"model": "video-c", "prompt": "p", "reference_images": [
        {"url": "https://x/a.png", "reference_type": "first_frame"}]}).media_requirements(
        "reference_images")
    assert rules is not None and rules.max_bytes == 10 * MB == 10 * 2**20
    exact = MediaInfo(kind="image", extension=".png", bytes=10 * MB, width=720, height=720)
    over = MediaInfo(kind="image", extension=".png", bytes=10 * MB + 1, width=720, height=720)
    assert media_problems("video-c", "reference_images[0]", exact, rules) == []
    assert media_problems("video-c", "reference_images[0]", over, rules) == [
        "video-c: reference_images[0] is 10.0 MB; the maximum is 10 MB"
    ]


@pytest.mark.parametrize(("seconds", "ok"), [(15.0 + DURATION_TOLERANCE, True), (15.06, False)])
def test_clip_durations_have_one_small_tolerance(seconds: float, ok: bool) -> None:
    rules = validate({"model": "video-b", "prompt": "p", "reference_images": [
        {"url": "https://x/a.png"}]}).media_requirements("reference_audios")
    assert rules is not None
    clip = MediaInfo(kind="audio", extension=".wav", bytes=1000, duration=seconds)
    assert (media_problems("video-b", "reference_audios[0]", clip, rules) == []) is ok


# --- results as references ---------------------------------------------------------------


def test_a_result_url_is_a_reference_at_once(http: httpx.Client) -> None:
    image = finished(http, {"model": "image-d", "prompt": "a lighthouse", "aspect_ratio": "1:1"})
    url = image["images"][0]["url"]  # never fetched: rendered when the reference is read
    body = {"model": "video-b", "prompt": "the light turns",
            "reference_images": [{"url": url, "reference_type": "first_frame"}]}
    answer = http.post("/v1/videos/generate", json=body)
    assert answer.status_code == 200, answer.text
    cover = finished(http, {"model": "video-b", "prompt": "x", "resolution": "480P"})
    still = Image.open(io.BytesIO(httpx.get(cover["videos"][0]["cover_url"]).content))
    assert still.size == (cover["videos"][0]["width"], cover["videos"][0]["height"])
