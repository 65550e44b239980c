"""The six video models, one module each: fields, bounds, roles, modes, media and prices."""

from __future__ import annotations

from genlab.catalog._video.video_a import VideoA
from genlab.catalog._video.video_b import VideoB, VideoBParams
from genlab.catalog._video.video_c import VideoC, VideoCParams
from genlab.catalog._video.video_d import VideoD, VideoDParams
from genlab.catalog._video.video_e import VideoE, VideoEVideoReference
from genlab.catalog._video.video_f import VideoF

__all__ = [
    "VideoA",
    "VideoB",
    "VideoBParams",
    "VideoC",
    "VideoCParams",
    "VideoD",
    "VideoDParams",
    "VideoE",
    "VideoEVideoReference",
    "VideoF",
]
