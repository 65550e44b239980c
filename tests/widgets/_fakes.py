"""What the fake Studio clients of the widget tests share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genlab.catalog import RequestBase


def model_of(request_or_body: Mapping[str, Any] | RequestBase) -> str:
    """The model a fake client was asked for: the Studio hands over validated requests."""
    if isinstance(request_or_body, RequestBase):
        return request_or_body.model_name
    return str(request_or_body["model"])
