"""A video already at a preview's bitrate is embedded as it is: no encode before it shows."""

from __future__ import annotations

import io

import pytest

import genlab.media.preview as preview_module
from genlab import report
from genlab.emulator import samples
from genlab.media.preview import PREVIEW_AUDIO_KBPS, PREVIEW_VIDEO_KBPS


def test_a_low_bitrate_result_is_embedded_without_re_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import av

    encoded: list[int] = []

    def counting_encode(data: bytes, width: int) -> bytes:
        encoded.append(len(data))
        return data

    monkeypatch.setattr(preview_module, "_encode", counting_encode)

    data = samples.video()  # flat emulator frames: far under the preview bitrate
    with av.open(io.BytesIO(data)) as container:
        seconds = float(container.duration or 0) / 1_000_000
    budget = (PREVIEW_VIDEO_KBPS + PREVIEW_AUDIO_KBPS) * 1000 / 8 * seconds
    assert 0 < len(data) <= budget
    assert report.video_preview(data) is data  # the very bytes
    assert encoded == []  # nothing was decoded or encoded on the way to the screen


def test_a_high_bitrate_result_is_still_shrunk() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    buffer = io.BytesIO()
    from fractions import Fraction

    import av

    with av.open(buffer, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        stream.options = {"crf": "18", "preset": "ultrafast"}
        for i in range(24):
            frame = av.VideoFrame.from_ndarray(
                rng.integers(0, 255, (720, 1280, 3), dtype=np.uint8), format="rgb24"
            )
            frame.pts, frame.time_base = i, Fraction(1, 24)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    data = buffer.getvalue()
    shown = report.video_preview(data)
    assert len(shown) < len(data) / 4
