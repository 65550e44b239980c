"""ipywidgets views of genlab: the Studio, per-model forms, task cards, the history table,
the rater and the rating page (``genlab app --rate``).

Importing this module needs ``ipywidgets`` (``pip install genlab[notebook]``); ``import genlab``
alone never imports it.

Example:
    import genlab
    client = genlab.connect()
    genlab.studio(client)        # the same as genlab.widgets.studio(client)

The widgets are views: their state lives in traitlets, and what they need from the client is
written down in :class:`StudioClient`. A task card draws its task's controller
(``card.task``: it submits, waits, keeps and downloads); the Studio's model and the values
that follow the person are its ``state``. Work that would block the kernel runs on the shared
:class:`Background` pool and updates the widgets only by assigning their traits.
"""

from __future__ import annotations

from genlab.jupyter import keep_widget_state
from genlab.widgets._background import Background
from genlab.widgets._card import TaskCard
from genlab.widgets._compare import ComparePanel
from genlab.widgets._form import ModelForm
from genlab.widgets._history import HistoryPanel
from genlab.widgets._protocols import StudioClient
from genlab.widgets._rater import Rater, rate
from genlab.widgets._rating_page import RatingPage, rating_page
from genlab.widgets._references import ReferenceList
from genlab.widgets._studio import Studio, studio

__all__ = [
    "Background",
    "ComparePanel",
    "HistoryPanel",
    "ModelForm",
    "Rater",
    "RatingPage",
    "ReferenceList",
    "Studio",
    "StudioClient",
    "TaskCard",
    "keep_widget_state",
    "rate",
    "rating_page",
    "studio",
]
