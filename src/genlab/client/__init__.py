"""genlab's client: an async HTTP client, its synchronous facade, polling, retries, downloads.

Example:
    import genlab
    with genlab.Client() as client:
        record = client.generate(model="image-b", prompt="a red kite")
        client.download(record, "out/")

In a notebook ``await`` works directly::

    async with genlab.AsyncClient() as client:
        outcomes = await client.map(requests, concurrency=4)
"""

from __future__ import annotations

from genlab._errors import ConfigurationError
from genlab.client._async import AsyncClient
from genlab.client._config import (
    API_KEY_ENV,
    BASE_URL_ENV,
    ClientConfig,
    Secret,
    resolve_config,
)
from genlab.client._download import extension_for
from genlab.client._journal import JournalEntry, MemoryJournal, SubmitEntry, TaskJournal
from genlab.client._polling import PollSchedule
from genlab.client._sync import Client
from genlab.client._types import (
    ImageResult,
    Outcome,
    Task,
    TaskError,
    TaskRecord,
    TaskStatus,
    VideoResult,
)
from genlab.client._uploads import data_uri

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "AsyncClient",
    "Client",
    "ClientConfig",
    "ConfigurationError",
    "ImageResult",
    "JournalEntry",
    "MemoryJournal",
    "Outcome",
    "PollSchedule",
    "Secret",
    "SubmitEntry",
    "Task",
    "TaskError",
    "TaskJournal",
    "TaskRecord",
    "TaskStatus",
    "VideoResult",
    "data_uri",
    "extension_for",
    "resolve_config",
]
