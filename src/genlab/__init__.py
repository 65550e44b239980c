"""genlab: a notebook toolkit for asynchronous video and image generation.

Example:
    >>> import genlab
    >>> genlab.validate({"model": "image-d", "prompt": "a kite", "resolution": "512"}).kind
    'image'
"""

from __future__ import annotations

import importlib
import sys
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

if typing.TYPE_CHECKING:
    from genlab.comparison import Comparison, compare
    from genlab.history import History
    from genlab.report import leaderboard
    from genlab.widgets import rate, studio

# Loaded on first use (PEP 562): they bring pandas, matplotlib, tqdm and ipywidgets, which a
# plain script using the client must not pay for.
_LAZY = {
    "Comparison": "genlab.comparison",
    "History": "genlab.history",
    "compare": "genlab.comparison",
    "leaderboard": "genlab.report",
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


def _record_html(record: TaskRecord) -> str | None:
    if record._shown_live:  # the wait's live line became this card already: once is enough
        record._shown_live = False
        return None
    from genlab.report import record_html  # loaded at the first record shown in a cell

    return record_html(record)


def _outcomes_html(outcomes: list[Any]) -> str:
    from genlab.report import outcomes_html

    return outcomes_html(outcomes)


def _show_records_in_notebooks() -> None:
    """In IPython, a task record in a cell shows its kept media, prompt and settings (one
    card, :func:`genlab.report.record_html`); scripts never load the report for it."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["text/html"]
    formatter.for_type_by_name("genlab._wire", "TaskRecord", _record_html)
    formatter.for_type_by_name("genlab.client._lifecycle", "Outcomes", _outcomes_html)


_show_records_in_notebooks()


__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
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
    "Mode",
    "NotFoundError",
    "QuotaExceededError",
    "RateLimitError",
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
    "VideoResult",
    "compare",
    "connect",
    "estimate_credits",
    "inspect",
    "leaderboard",
    "rate",
    "studio",
    "validate",
]
