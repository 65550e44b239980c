"""genlab: a notebook toolkit for asynchronous video and image generation.

Example:
    >>> import genlab
    >>> genlab.validate({"model": "image-d", "prompt": "a kite", "resolution": "512"}).kind
    'image'
"""

from __future__ import annotations

import importlib
import typing
from typing import Any

from genlab._connect import connect
from genlab._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    CreditLimitError,
    ErrorDetail,
    GenlabError,
    InvalidParameterError,
    InvalidPromptError,
    MediaError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    RequestAdjustedWarning,
    ServerError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskNotFinishedError,
    TaskTimeoutError,
    UnreadableResponseError,
)
from genlab._inspect import Inspection, inspect
from genlab._version import __version__ as __version__
from genlab._wire import TaskError
from genlab.catalog import CATALOG, GenerationRequest, Mode, estimate_credits, validate
from genlab.client import AsyncClient, Budget, Client, ImageResult, Task, TaskRecord, VideoResult
from genlab.client.journal import Reused
from genlab.media import MediaInfo, Result

if typing.TYPE_CHECKING:
    from genlab.comparison import Comparison, compare
    from genlab.experiments import Verdict, experiment, prompt
    from genlab.history import History
    from genlab.rating import judge
    from genlab.report import Agreement, agreement, leaderboard
    from genlab.widgets import rate, studio

# Loaded on first use (PEP 562): they bring pandas, matplotlib, tqdm and ipywidgets, which a
# plain script using the client must not pay for.
_LAZY = {
    "Agreement": "genlab.report",
    "Comparison": "genlab.comparison",
    "History": "genlab.history",
    "agreement": "genlab.report",
    "compare": "genlab.comparison",
    "Verdict": "genlab.experiments",
    "experiment": "genlab.experiments",
    "judge": "genlab.rating",
    "leaderboard": "genlab.report",
    "prompt": "genlab.experiments",
    "rate": "genlab.widgets",
    "studio": "genlab.widgets",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'genlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "Agreement",
    "AsyncClient",
    "AuthenticationError",
    "Budget",
    "CATALOG",
    "Client",
    "Comparison",
    "ConfigurationError",
    "CreditLimitError",
    "ErrorDetail",
    "GenerationRequest",
    "GenlabError",
    "History",
    "ImageResult",
    "Inspection",
    "InvalidParameterError",
    "InvalidPromptError",
    "MediaError",
    "MediaInfo",
    "Mode",
    "NotFoundError",
    "QuotaExceededError",
    "RateLimitError",
    "RequestAdjustedWarning",
    "Result",
    "Reused",
    "ServerError",
    "SubmissionUncertainError",
    "Task",
    "TaskError",
    "TaskFailedError",
    "TaskNotFinishedError",
    "TaskRecord",
    "TaskTimeoutError",
    "UnreadableResponseError",
    "Verdict",
    "VideoResult",
    "agreement",
    "compare",
    "connect",
    "estimate_credits",
    "experiment",
    "inspect",
    "judge",
    "leaderboard",
    "prompt",
    "rate",
    "studio",
    "validate",
]
