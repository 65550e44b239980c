"""Placeholder until the measured-facts module lands (replaced at merge)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class MediaInfo:
    kind: str | None = None
    mime: str | None = None
    extension: str | None = None
    bytes: int | None = None
    width: int | None = None
    height: int | None = None
    duration: float | None = None
    fps: float | None = None
    frames: int | None = None
    video_codec: str | None = None
    pix_fmt: str | None = None
    bit_depth: int | None = None
    profile: str | None = None
    audio_codec: str | None = None
    has_audio: bool = False
    images: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MediaInfo:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def probe(source: Any) -> MediaInfo:
    raise NotImplementedError
