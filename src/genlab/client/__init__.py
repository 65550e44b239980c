"""genlab's client: an async HTTP client and its synchronous facade, built around one
lifecycle per generation (validate once, reuse or reserve, send once, poll, hand over).

This package's names are the user's API. What a history implements (the journal protocols and
the records it keeps) is the documented interface :mod:`genlab.client.journal`.

Example:
    import genlab
    with genlab.Client() as client:
        record = client.generate(model="image-b", prompt="a red kite")
        client.download(record, "out/")   # or "s3://bucket/prefix/"

In a notebook ``await`` works directly::

    async with genlab.AsyncClient() as client:
        outcomes = await client.map(requests, concurrency=4)
"""

from __future__ import annotations

from genlab.client._async import AsyncClient, ClientOptions
from genlab.client._budget import Budget
from genlab.client._config import (
    API_KEY_ENV,
    BASE_URL_ENV,
    ClientConfig,
    ConfigOptions,
    ImageResult,
    Outcome,
    Task,
    TaskRecord,
    TaskStatus,
    VideoResult,
)
from genlab.client._pacing import FixedPacing
from genlab.client._protocols import Labels, PastResult
from genlab.client._purse import BudgetQuote
from genlab.client._reuse import ReusedRecord
from genlab.client._sync import Client
from genlab.client._uploads import data_uri

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "AsyncClient",
    "Budget",
    "BudgetQuote",
    "Client",
    "ClientConfig",
    "ClientOptions",
    "ConfigOptions",
    "FixedPacing",
    "ImageResult",
    "Labels",
    "Outcome",
    "PastResult",
    "ReusedRecord",
    "Task",
    "TaskRecord",
    "TaskStatus",
    "VideoResult",
    "data_uri",
]
