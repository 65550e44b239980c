"""Kept media: where saved files live (a folder or a bucket), reading them back, what a file
is from its first bytes (:func:`sniff`) and its facts (:func:`probe`: size, duration, codecs),
and the provenance written inside each kept file (:func:`stamp`,
:func:`read_provenance`). The client saves through it; reports and widgets read through it.

Display-size previews (PyAV, Pillow) are in :mod:`genlab.media.preview`, which this package
does not import: the client uses ``genlab.media`` and stays light.

Example:
    >>> from genlab import media
    >>> media.media_join("s3://team-media/runs/", "t1.mp4")
    's3://team-media/runs/t1.mp4'
    >>> media.sniff(b"\\x00\\x00\\x00\\x08moov")
    Sniffed(mime='video/quicktime', extension='.mov')
"""

from __future__ import annotations

from genlab.media._info import DECODE_PIXELS, MediaInfo, MediaProbeError, probe
from genlab.media._provenance import (
    MAX_PROVENANCE_BYTES,
    PROVENANCE_FORMATS,
    PROVENANCE_SCHEMA,
    ValidatedRequest,
    provenance_for,
    read_provenance,
    stamp,
    stamp_file,
)
from genlab.media._result import Result
from genlab.media._sniff import (
    AUDIO_SUFFIXES,
    CONTENT_TYPES,
    IMAGE_SUFFIXES,
    MEDIA_SUFFIXES,
    SNIFF_BYTES,
    VIDEO_SUFFIXES,
    Sniffed,
    by_extension,
    sniff,
)
from genlab.media._storage import (
    MEDIA_ENV,
    Location,
    copy_media,
    is_remote,
    kept_beside,
    media_join,
    media_location,
    media_name,
    media_size,
    read_media,
    shown_url,
    store_files,
)

__all__ = [
    "AUDIO_SUFFIXES",
    "CONTENT_TYPES",
    "DECODE_PIXELS",
    "IMAGE_SUFFIXES",
    "MAX_PROVENANCE_BYTES",
    "MEDIA_ENV",
    "MEDIA_SUFFIXES",
    "PROVENANCE_FORMATS",
    "PROVENANCE_SCHEMA",
    "Result",
    "SNIFF_BYTES",
    "VIDEO_SUFFIXES",
    "Location",
    "MediaInfo",
    "MediaProbeError",
    "Sniffed",
    "ValidatedRequest",
    "by_extension",
    "copy_media",
    "is_remote",
    "kept_beside",
    "media_join",
    "media_location",
    "media_name",
    "media_size",
    "probe",
    "provenance_for",
    "read_media",
    "read_provenance",
    "shown_url",
    "sniff",
    "stamp",
    "stamp_file",
    "store_files",
]
