"""genlab: a notebook toolkit for asynchronous video and image generation.

Example:
    >>> import genlab
    >>> genlab.validate({"model": "image-d", "prompt": "a kite", "resolution": "512"}).kind
    'image'
"""

from __future__ import annotations

from genlab._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ErrorDetail,
    GenlabError,
    InvalidParameterError,
    InvalidPromptError,
    NotFoundError,
    RateLimitError,
    ServerError,
    SubmissionUncertainError,
    TaskFailedError,
    TaskTimeoutError,
)
from genlab.catalog import CATALOG, GenerationRequest, Mode, estimate_credits, validate

__version__ = "0.1.0"

__all__ = [
    "CATALOG",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "ErrorDetail",
    "GenerationRequest",
    "GenlabError",
    "InvalidParameterError",
    "InvalidPromptError",
    "Mode",
    "NotFoundError",
    "RateLimitError",
    "ServerError",
    "SubmissionUncertainError",
    "TaskFailedError",
    "TaskTimeoutError",
    "estimate_credits",
    "validate",
]
