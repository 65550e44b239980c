"""What the widgets need from a client, written down once.

A :class:`genlab.Client` has all of it; so may a test double or a client of another service.
The widgets call nothing else on the client they are given.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from genlab.catalog import RequestBase
from genlab.client import Budget, BudgetQuote, PastResult, TaskRecord
from genlab.client.journal import TaskJournal


@runtime_checkable
class StudioClient(Protocol):
    """The client surface of the Studio, its task cards, compare panel and reference editor.

    ``genlab.Client`` satisfies it; an ``AsyncClient`` does not (the widgets run tasks on a
    synchronous client's runner thread).

    Example:
        >>> import genlab
        >>> from genlab.widgets import StudioClient
        >>> with genlab.Client("http://localhost:1", "key") as client:
        ...     isinstance(client, StudioClient)
        True
    """

    @property
    def base_url(self) -> str:
        """The service's address, shown in the Studio's title."""

    @property
    def history(self) -> TaskJournal:
        """The journal the history panel reads (a :class:`genlab.History` to show rows)."""

    @property
    def supports_uploads(self) -> bool:
        """Whether local files can be uploaded (the reference editor says so)."""

    def generate_future(
        self,
        request_or_body: Mapping[str, Any] | RequestBase,
        /,
        *,
        on_update: Callable[[TaskRecord], object] | None = None,
        reuse: bool | None = None,
    ) -> concurrent.futures.Future[TaskRecord]:
        """Submit and wait in the background; ``on_update`` sees each new status; ``reuse``
        as in ``Client.generate``."""

    def find_reusable(self, request_or_body: Mapping[str, Any], /) -> PastResult | None:
        """The earlier result a reuse would return for this request, or None (blocking; it
        may probe one media link, so the widgets call it on a worker)."""

    @property
    def budget(self) -> Budget | None:
        """The budget, if any: the Studio shows what remains beside the estimate."""

    @property
    def budget_remaining(self) -> int | None:
        """Credits left in the session cap (None without one)."""

    @property
    def budget_remaining_today(self) -> int | None:
        """Credits left in the day cap today (None without one)."""

    def budget_quote(self, request_or_body: Mapping[str, Any] | RequestBase, /) -> BudgetQuote:
        """What a submit would reserve and whether the budget would refuse it, asked before
        the click (never a network or database call: the Studio asks at every edit)."""

    def wait_future(
        self,
        task: TaskRecord,
        *,
        on_update: Callable[[TaskRecord], object] | None = None,
    ) -> concurrent.futures.Future[TaskRecord]:
        """Wait for a known task in the background (a card's "Resume waiting")."""

    def download(self, record: TaskRecord, directory: str | os.PathLike[str]) -> list[Path | str]:
        """Save a succeeded task's media into ``directory``, a folder or a storage URL
        (blocking); local files come back as paths, remote ones as URLs."""

    def reference_url(
        self, data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
    ) -> str:
        """The URL to send for a local file: uploaded, inlined, or an error saying why not
        (``field`` names the reference list in it)."""
