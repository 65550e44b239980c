"""genlab's version, written once: the package metadata, the User-Agent and reports read it."""

from __future__ import annotations

__version__ = "0.1.0"
