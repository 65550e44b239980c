"""genlab's client: an async HTTP client, its synchronous facade, polling, retries, downloads,
media fetching, and the one place local files become data URIs, uploads and safe file names.

Example:
    import genlab
    with genlab.Client() as client:
        record = client.generate(model="image-b", prompt="a red kite")
        client.download(record, "out/")   # or "s3://bucket/prefix/" (see read_media)

In a notebook ``await`` works directly::

    async with genlab.AsyncClient() as client:
        outcomes = await client.map(requests, concurrency=4)
"""

from __future__ import annotations

from genlab._errors import ConfigurationError
from genlab.client._async import AsyncClient
from genlab.client._budget import Budget, Unpriced, day_limit_error
from genlab.client._config import (
    API_KEY_ENV,
    BASE_URL_ENV,
    ClientConfig,
    ClientOptions,
    ConfigOptions,
    Secret,
    resolve_config,
)
from genlab.client._download import extension_for
from genlab.client._durations import DurationModel, DurationSample, Work
from genlab.client._files import data_uri, safe_filename
from genlab.client._forecast import Prediction
from genlab.client._media import MAX_MEDIA_BYTES
from genlab.client._polling import PollSchedule
from genlab.client._reuse import PastResult, Reused, ReusedRecord, ReusedTask
from genlab.client._sync import Client
from genlab.client._types import (
    ImageResult,
    Outcome,
    RequestLike,
    Task,
    TaskError,
    TaskRecord,
    TaskRef,
    TaskStatus,
    VideoResult,
)
from genlab.client.journal import (
    JournalEntry,
    MemoryJournal,
    SpendJournal,
    SubmitEntry,
    TaskJournal,
)

# Kept media belong to genlab.media; these names stay importable from here for now.
from genlab.media import (
    MEDIA_ENV,
    is_remote,
    media_join,
    media_location,
    media_name,
    media_size,
    read_media,
)

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "MAX_MEDIA_BYTES",
    "MEDIA_ENV",
    "AsyncClient",
    "Budget",
    "Client",
    "ClientConfig",
    "ClientOptions",
    "ConfigOptions",
    "ConfigurationError",
    "DurationModel",
    "DurationSample",
    "ImageResult",
    "JournalEntry",
    "MemoryJournal",
    "Outcome",
    "PastResult",
    "PollSchedule",
    "Prediction",
    "RequestLike",
    "Reused",
    "ReusedRecord",
    "ReusedTask",
    "Secret",
    "SpendJournal",
    "SubmitEntry",
    "Task",
    "TaskError",
    "TaskJournal",
    "TaskRecord",
    "TaskRef",
    "TaskStatus",
    "Unpriced",
    "VideoResult",
    "Work",
    "data_uri",
    "day_limit_error",
    "extension_for",
    "is_remote",
    "media_join",
    "media_location",
    "media_name",
    "media_size",
    "read_media",
    "resolve_config",
    "safe_filename",
]
