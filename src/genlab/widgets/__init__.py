"""ipywidgets views of genlab: the Studio, per-model forms, task cards and the history table.

Importing this module needs ``ipywidgets`` (``pip install genlab[notebook]``); ``import genlab``
alone never imports it.

Example:
    import genlab
    from genlab.widgets import Studio
    client = genlab.connect()
    Studio(client)          # or: client.studio()
"""

from __future__ import annotations

from genlab.widgets._card import TaskCard
from genlab.widgets._compare import ComparePanel
from genlab.widgets._form import ModelForm
from genlab.widgets._history import HistoryPanel
from genlab.widgets._references import LocalFiles, ReferenceList, uploads_supported
from genlab.widgets._studio import Studio

__all__ = [
    "ComparePanel",
    "HistoryPanel",
    "LocalFiles",
    "ModelForm",
    "ReferenceList",
    "Studio",
    "TaskCard",
    "uploads_supported",
]
