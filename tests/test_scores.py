"""The built-in scorers, each against media made to show what it measures, and user scorers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from genlab.media import MediaInfo, Result
from genlab.media import scores as scores_module
from genlab.media.scores import SCORERS, score

WIDTH, HEIGHT, FPS, SECONDS = 160, 90, 25, 2


def _texture(seed: int = 1, width: int = WIDTH + 200, height: int = HEIGHT) -> np.ndarray:
    """A scene with detail at several scales (what a camera or a generator delivers)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    grey = 120 + 50 * np.sin(xx / 7.0) * np.cos(yy / 5.0) + rng.normal(0, 20, (height, width))
    return np.clip(np.stack([grey, grey * 0.8 + 20, 220 - grey * 0.7], axis=-1), 0, 255)


def _clip(path: Path, frame_at: Callable[[int], np.ndarray], *, seconds: int = SECONDS,
          preset: str = "ultrafast", crf: str = "18", muxer: dict[str, str] | None = None
          ) -> Path:
    """An H.264 clip; ``preset="veryfast"`` has B-frames, some of which nothing refers to."""
    import av

    with av.open(str(path), mode="w", options=muxer) as out:
        stream: Any = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = {"crf": crf, "preset": preset}
        for i in range(FPS * seconds):
            frame = av.VideoFrame.from_ndarray(frame_at(i).astype(np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


def _result(*paths: Path, **fields: Any) -> Result:
    return Result(task_id=f"t-{paths[0].stem}" if paths else "t-none", status="succeeded",
                  model="video-a", kept=tuple(str(p) for p in paths), **fields)


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("clips")
    scene = _texture()
    black = np.zeros((HEIGHT, WIDTH, 3))
    bright = np.full((HEIGHT, WIDTH, 3), 235.0)
    return {
        "still": _clip(folder / "still.mp4", lambda i: scene[:, :WIDTH]),
        "moving": _clip(folder / "moving.mp4", lambda i: scene[:, 3 * i:3 * i + WIDTH]),
        "black": _clip(folder / "black.mp4", lambda i: black),
        "flashing": _clip(folder / "flashing.mp4", lambda i: bright if i % 2 else black),
    }


def test_a_still_video_scores_no_motion_and_is_frozen(clips: dict[str, Path]) -> None:
    scores = score(_result(clips["still"]), ["motion", "frozen", "flicker", "black"])
    assert scores["motion"] is not None and scores["motion"] < 0.005
    assert scores["frozen"] is not None and scores["frozen"] > 0.9
    assert scores["flicker"] is not None and scores["flicker"] > 0.99
    assert scores["black"] == 0.0


def test_a_moving_clip_scores_motion_clearly_above_the_still_one(
    clips: dict[str, Path],
) -> None:
    moving = score(_result(clips["moving"]), ["motion", "frozen"])
    still = score(_result(clips["still"]), ["motion"])
    assert moving["motion"] is not None and still["motion"] is not None
    assert moving["motion"] > 0.03
    assert moving["motion"] > 10 * still["motion"]
    assert moving["frozen"] == 0.0  # every frame differs from the one before


def test_a_black_clip_scores_black_one(clips: dict[str, Path]) -> None:
    assert score(_result(clips["black"]), ["black"]) == {"black": 1.0}


def test_a_clip_alternating_bright_and_dark_frames_flickers(clips: dict[str, Path]) -> None:
    flashing = score(_result(clips["flashing"]), ["flicker", "black", "frozen"])
    assert flashing["flicker"] is not None and flashing["flicker"] < 0.3
    assert flashing["black"] == pytest.approx(0.5, abs=0.05)  # every other frame is black
    assert flashing["frozen"] == 0.0


def test_a_blurred_image_scores_lower_sharpness_than_the_sharp_one(tmp_path: Path) -> None:
    from PIL import Image, ImageFilter

    sharp = Image.fromarray(_texture(2, 640, 360).astype(np.uint8))
    sharp.save(tmp_path / "sharp.png")
    sharp.filter(ImageFilter.GaussianBlur(3)).save(tmp_path / "blurred.png")
    sharp_score = score(_result(tmp_path / "sharp.png"), ["sharpness"])["sharpness"]
    blurred_score = score(_result(tmp_path / "blurred.png"), ["sharpness"])["sharpness"]
    assert sharp_score is not None and blurred_score is not None
    assert blurred_score < sharp_score / 5


def _fresh_scores(path: Path) -> dict[str, float | None]:
    scores_module._clear_cache()
    return score(_result(path), list(SCORERS))


@pytest.mark.parametrize("muxer", [None, {"movflags": "frag_keyframe+empty_moov"}],
                         ids=["mp4", "fragmented mp4"])
def test_an_mp4_scores_the_same_when_opening_it_decodes_no_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, muxer: dict[str, str] | None) -> None:
    scene = _texture(width=WIDTH + 400)
    clip = _clip(tmp_path / "pan.mp4", lambda i: scene[:, 3 * i:3 * i + WIDTH], seconds=4,
                 preset="veryfast", muxer=muxer)
    quick = _fresh_scores(clip)
    monkeypatch.setattr(scores_module, "_BOXED", frozenset())  # probed in full, as other containers
    assert _fresh_scores(clip) == quick
    assert quick["motion"] is not None and quick["motion"] > 0.01  # measured, over the clip


def test_frames_nothing_refers_to_are_measured_as_when_decoded_in_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Those frames skip the deblocking filter; no other frame is predicted from them, so the
    # difference stays in them. Compressed hard enough that the filter matters: skipping it on
    # every frame moves motion by 2 % and sharpness by 4 % here.
    scene = _texture(width=WIDTH + 400)
    clip = _clip(tmp_path / "pan.mp4", lambda i: scene[:, 3 * i:3 * i + WIDTH], seconds=4,
                 preset="veryfast", crf="28")
    quick = _fresh_scores(clip)
    monkeypatch.setattr(scores_module, "_LOOP_FILTER", "default")  # every frame deblocked
    full = _fresh_scores(clip)
    assert quick["frozen"] == full["frozen"] and quick["black"] == full["black"]
    for name in ("motion", "flicker", "sharpness"):
        assert quick[name] == pytest.approx(full[name], rel=0.005), name


def test_a_video_has_a_sharpness_too(clips: dict[str, Path]) -> None:
    still, black = (score(_result(clips[n]), ["sharpness"])["sharpness"] for n in
                    ("still", "black"))
    assert still is not None and still > 100
    assert black == 0.0


def test_an_image_has_no_motion_and_is_black_or_not(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (320, 180), (3, 3, 3)).save(tmp_path / "dark.png")
    Image.fromarray(_texture(3).astype(np.uint8)).save(tmp_path / "scene.jpg")
    names = list(SCORERS)
    dark = score(_result(tmp_path / "dark.png"), names)
    scene = score(_result(tmp_path / "scene.jpg"), names)
    for shown in (dark, scene):
        assert shown["motion"] is None and shown["flicker"] is None
        assert shown["frozen"] is None
    assert dark["black"] == 1.0 and scene["black"] == 0.0


def test_covers_and_sidecars_are_not_scored(tmp_path: Path, clips: dict[str, Path]) -> None:
    from PIL import Image

    Image.new("RGB", (160, 90)).save(tmp_path / "t1_cover.jpg")  # black: would count
    (tmp_path / "t1.json").write_text("{}")
    result = _result(clips["still"], tmp_path / "t1_cover.jpg", tmp_path / "t1.json")
    assert score(result, ["black"]) == {"black": 0.0}


def test_a_result_with_nothing_kept_scores_none() -> None:
    assert score(_result(), list(SCORERS)) == dict.fromkeys(SCORERS)


def test_as_asked_comes_from_the_media_facts(clips: dict[str, Path]) -> None:
    facts = (MediaInfo(kind="video", width=WIDTH, height=HEIGHT, duration=2.0),)
    request = {"model": "video-a", "prompt": "waves", "duration": 2}
    right = _result(clips["still"], request=request, media=facts)
    wrong = _result(clips["still"], request=request, media=facts,
                    mismatches=("asked 10 s, got 2.0 s",))
    assert score(right, ["as_asked"]) == {"as_asked": 1.0}
    assert score(wrong, ["as_asked"]) == {"as_asked": 0.0}
    assert score(_result(clips["still"]), ["as_asked"]) == {"as_asked": None}  # not measured


def test_a_user_function_plugs_in_by_its_name(clips: dict[str, Path]) -> None:
    def frames_kept(result: Result) -> int:
        return len(result.paths)

    scores = score(_result(clips["still"]), ["black", frames_kept])
    assert scores == {"black": 0.0, "frames_kept": 1.0}


def test_a_scorer_that_raises_scores_none_and_says_why(
    clips: dict[str, Path], caplog: pytest.LogCaptureFixture,
) -> None:
    def clip_score(result: Result) -> float:
        raise RuntimeError("no weights here")

    def words(result: Result) -> str:
        return "many"

    with caplog.at_level(logging.WARNING, logger="genlab"):
        scores = score(_result(clips["still"]), [clip_score, words, "motion"])
    assert scores["clip_score"] is None and scores["words"] is None
    assert scores["motion"] is not None  # the others still ran
    assert "clip_score" in caplog.text and "no weights here" in caplog.text
    assert "words" in caplog.text and "not a number" in caplog.text


def test_a_file_that_is_not_media_scores_none(tmp_path: Path,
                                              caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "t9.mp4").write_bytes(b"not a video at all")
    with caplog.at_level(logging.WARNING, logger="genlab"):
        assert score(_result(tmp_path / "t9.mp4"), ["motion"]) == {"motion": None}
    assert "motion" in caplog.text


def test_a_misspelt_scorer_or_two_with_one_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown scorer 'moton': the built-in ones are"):
        score(_result(), ["moton"])
    with pytest.raises(ValueError, match="two scorers are named '<lambda>'"):
        score(_result(), [lambda r: 1, lambda r: 2])
    with pytest.raises(TypeError, match="a scorer is a built-in's name or a function"):
        score(_result(), [3])  # type: ignore[list-item]
