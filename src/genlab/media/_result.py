"""One result: a task's record with what made it and what it delivered.

A :class:`Result` is the :class:`~genlab.TaskRecord` the service answered, carrying besides:
the request as the catalog validated it (every field, defaults included), its price, the
files the client kept, the measured facts of each kept media file, and whether that is what
was asked. ``generate``, ``wait``, ``get``, a reused result, the outcomes of ``map`` and
``compare`` and ``History.record()`` all hand one over; :func:`genlab.catalog.result_of`
builds it. Nothing about it is read back from disk to show it, and it has no hidden display
state: each display of it (``_repr_html_``, ``_mime_``) draws the same card
(:func:`genlab.media.card.result_html`).

Example:
    >>> r = Result(task_id="t1", status="succeeded", model="image-b",
    ...            request={"model": "image-b", "prompt": "a red kite"}, credits=40)
    >>> r.prompt, r.credits, r.as_asked
    ('a red kite', 40, None)
    >>> r.model_dump()["task_id"], "request" in r.model_dump()
    ('t1', False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from genlab._wire import TaskRecord
from genlab.media._info import MediaInfo
from genlab.media._storage import media_name

if TYPE_CHECKING:
    from PIL.Image import Image


class Result(TaskRecord):
    """A task's record with the request that made it, its price, its kept files and the
    facts of its media (see the module docstring). The wire fields dump as before: what is
    added here is the client's knowledge, not the service's answer.

    Example:
        >>> result = Result(task_id="t1", status="succeeded", model="image-b",
        ...                 request={"model": "image-b", "prompt": "a kite"})
        >>> result.task_id, result.prompt
        ('t1', 'a kite')
    """

    request: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)
    """The request as validated, every default filled in; None for a request sent unchecked
    (a model the catalog does not know) or a task only known by its id."""
    credits: int | None = Field(default=None, exclude=True, repr=False)
    """What the task costs by the catalog's price list; None when no price is known."""
    media: tuple[MediaInfo, ...] = Field(default=(), exclude=True, repr=False)
    """The measured facts of each kept result file (not covers or last frames), in order."""
    mismatches: tuple[str, ...] = Field(default=(), exclude=True, repr=False)
    """How the media differ from the request, one phrase each (``"asked 10 s, got 5.0 s"``)."""
    adjusted: tuple[str, ...] = Field(default=(), exclude=True, repr=False)
    """The values the catalog changed in what was asked, as the interface allows, one phrase
    each (``"resolution: asked 2K; image-b makes 1K only"``): ``request`` holds the values
    sent, and ``as_asked`` judges the media against those."""
    note: str | None = Field(default=None, exclude=True, repr=False)
    """A line said with the result (which earlier task a reused result is)."""

    @property
    def prompt(self) -> str | None:
        """The request's prompt, when it has one."""
        value = (self.request or {}).get("prompt")
        return value if isinstance(value, str) else None

    @property
    def as_asked(self) -> bool | None:
        """True when the measured media match the request (as sent: see ``adjusted``), False
        when they do not, None when there is nothing to compare (not kept, not measured, or
        no request)."""
        if not self.media or self.request is None:
            return None
        return not self.mismatches

    @property
    def paths(self) -> tuple[str, ...]:
        """The kept result files: media, covers and last frames, without the JSON sidecar."""
        return tuple(p for p in self.kept if not media_name(p).endswith(".json"))

    def frames(self, count: int = 4) -> list[Image]:
        """``count`` frames spread evenly over the kept video (first and last included), as
        RGB Pillow images, for judges that look (``genlab.judge``); a kept image gives
        itself. Decoded with PyAV when called (the client never imports it).

        Raises:
            ValueError: nothing kept to look at (a result not kept, or no picture in it).

        Example:
            pictures = result.frames(4)     # [<PIL.Image.Image mode=RGB size=1280x720>, ...]
        """
        from genlab.media._frames import frames  # PyAV and Pillow load only when asked

        return frames(self.paths, count)

    def _repr_html_(self) -> str:
        from genlab.media.card import result_html  # previews load only when a card is drawn

        return result_html(self)

    def _mime_(self) -> tuple[str, str]:
        """marimo's display protocol: the same card."""
        return "text/html", self._repr_html_()


__all__ = ["Result"]
