"""The Studio as a person meets it: what Compare sends, what follows across models, when
messages show, the task list, resuming a stopped card and theme-aware colours (headless).

Waits are bounded safety nets, never timing assertions.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

import genlab
from genlab.catalog import RequestBase
from genlab.client import BudgetQuote, TaskRecord
from genlab.client.journal import MemoryJournal, TaskJournal
from genlab.widgets import Studio, TaskCard

from ._fakes import model_of

WAIT = 120.0


def _walk(widget: widgets.Widget) -> Iterator[widgets.Widget]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _errors_shown(studio: Studio) -> list[str]:
    """Every error line the person can see, one entry per occurrence."""
    found = []
    for part in _walk(studio):
        if isinstance(part, widgets.HTML) and "genlab-error" in part.value:
            if getattr(part, "layout", None) is not None and part.layout.display == "none":
                continue
            found += re.findall(r"&#9888; ([^<]*)", part.value)
    return found


# --- Compare sends the form's settings ------------------------------------------------------


def test_compare_sends_the_forms_settings_not_defaults(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a red kite", resolution="480P", duration=4)
    panel = studio.compare_panel
    assert not any(isinstance(w, widgets.SelectMultiple) for w in _walk(panel))
    panel.chips["video-a"].value = True  # chips: one click each, no Ctrl-click
    panel.chips["image-b"].value = True
    assert panel.chosen == ["video-a", "image-b"]
    assert "resolution=480P" in panel.plan_note.value and "duration=4" in panel.plan_note.value
    assert "image-b has no duration: dropped for it" in panel.plan_note.value
    comparison = studio.compare(["video-a", "video-f"]).result(timeout=WAIT)
    assert studio.tabs.selected_index == 1
    rows = comparison.df.set_index("model")
    assert rows.loc["video-a", "resolution"] == "480P" and rows.loc["video-a", "duration"] == 4
    assert rows.loc["video-f", "duration"] == 4
    record = comparison.records[0]
    assert record is not None and record.videos is not None
    assert (record.videos[0].height, record.videos[0].duration) == (480, 4)


# --- fields follow the person ---------------------------------------------------------------


def test_shared_fields_follow_and_model_fields_stay(studio: Studio) -> None:
    studio.set(model="video-c", prompt="an old prompt")
    studio.set(model="video-b")
    seed = studio.form.fields["extra_params"].fields["seed"]
    seed.control.value = "7"
    studio.set(model="video-a")
    prompt = studio.form.fields["prompt"].control
    prompt.value = "a fox in the snow"  # typed by the person
    studio.form.fields["duration"].control.value = 12
    studio.model_picker.value = "video-c"
    assert studio.body["prompt"] == "a fox in the snow"  # not video-c's old prompt
    assert studio.body["duration"] == 12
    studio.model_picker.value = "video-b"
    assert studio.body["prompt"] == "a fox in the snow"
    assert studio.body["extra_params"] == {"seed": 7}  # video-b's own field kept its value
    studio.kind_picker.value = "image"
    assert studio.body["prompt"] == "a fox in the snow"
    assert "duration" not in studio.body


def test_a_value_a_model_cannot_hold_leaves_its_own(studio: Studio) -> None:
    studio.set(model="video-a", prompt="waves", duration=30)
    studio.set(model="video-c")
    slider = studio.form.fields["duration"].control
    assert slider.max < 30 and slider.value == 5  # video-c's own default stands
    assert studio.body["prompt"] == "waves"


# --- messages: once, after touch or Submit --------------------------------------------------


def test_messages_wait_for_a_touch_or_submit_and_show_once(studio: Studio) -> None:
    studio.select("video-a")
    assert studio.submit_button.disabled
    assert _errors_shown(studio) == []  # a fresh form is not red
    assert "To submit, fill in: Prompt" in studio.hint.value
    prompt = studio.form.fields["prompt"].control
    prompt.value = "x"
    prompt.value = ""
    assert _errors_shown(studio) == ["video-a: prompt must not be empty"]
    assert studio.hint.value == ""


def test_submit_reveals_every_message_once(studio: Studio) -> None:
    studio.select("image-a")
    assert _errors_shown(studio) == []
    with pytest.raises(genlab.InvalidParameterError):
        studio.submit()
    shown = _errors_shown(studio)
    assert shown and len(shown) == len(set(shown))
    assert "image-a: quality is required; choose one of low, medium, high" in shown
    assert "required: choose one" not in studio.form.fields["quality"].message.value


def test_a_required_choice_starts_neutral_with_a_hint(studio: Studio) -> None:
    studio.select("image-a")
    row = studio.form.fields["quality"]
    assert "required: choose one" in row.message.value
    assert "genlab-hint" in row.message.value and "genlab-error" not in row.message.value
    row.control.value = "low"
    assert row.message.value == ""


def test_reset_flashes_nothing(studio: Studio) -> None:
    studio.set(model="video-a", prompt="")
    assert _errors_shown(studio)
    seen: list[str] = []
    for part in _walk(studio):
        if isinstance(part, widgets.HTML):
            part.observe(lambda change: seen.append(change["new"]), "value")
    studio.reset()
    assert not [value for value in seen if "genlab-error" in value]
    assert _errors_shown(studio) == []


# --- the task list --------------------------------------------------------------------------


class SlowClient:
    """A StudioClient whose tasks run until a wait is resumed; then they succeed."""

    base_url = "memory://slow"
    supports_uploads = False
    budget = None
    budget_remaining = None
    budget_remaining_today = None

    def budget_quote(self, request_or_body: Mapping[str, Any] | RequestBase, /) -> BudgetQuote:
        return BudgetQuote(None)  # no budget: nothing refused

    def __init__(self) -> None:
        self.history: TaskJournal = MemoryJournal()
        self.resumed: list[str] = []

    def generate_future(
        self,
        request_or_body: Mapping[str, Any] | RequestBase,
        /,
        *,
        on_update: Callable[[TaskRecord], object] | None = None,
        reuse: bool | None = None,
    ) -> concurrent.futures.Future[TaskRecord]:
        record = TaskRecord(task_id=f"task-{len(self.resumed)}", status="processing",
                            model=model_of(request_or_body))
        if on_update is not None:
            on_update(record)
        return concurrent.futures.Future()  # never resolves by itself

    def find_reusable(self, request_or_body: Mapping[str, Any], /) -> None:
        return None  # no history of results: nothing to reuse

    def wait_future(
        self, task: TaskRecord, *, on_update: Callable[[TaskRecord], object] | None = None
    ) -> concurrent.futures.Future[TaskRecord]:
        self.resumed.append(task.task_id)
        future: concurrent.futures.Future[TaskRecord] = concurrent.futures.Future()
        future.set_result(TaskRecord(task_id=task.task_id, status="succeeded", model=task.model,
                                     images=[{"url": "memory://x.png"}]))
        return future

    def download(self, record: TaskRecord, directory: str | os.PathLike[str]) -> list[Path]:
        return []

    def reference_url(
        self, data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
    ) -> str:
        raise genlab.InvalidParameterError("no files here")


def test_stop_waiting_then_resume(tmp_path: Path) -> None:
    client = SlowClient()
    studio = Studio(client, model="image-b", media_dir=tmp_path)
    studio.set(prompt="a kite")
    card = studio.submit()
    assert card.status == "processing" and not card.stop_button.disabled
    card.stop_button.click()
    assert card.status == "stopped" and card.done
    assert card.stop_button.description == "Resume waiting" and not card.stop_button.disabled
    card.stop_button.click()
    assert card.wait_done(WAIT)
    assert client.resumed == ["task-0"] and card.status == "succeeded"
    assert card.stop_button.disabled
    assert card.stop_button.layout.display == "none"  # a finished card has nothing to stop


def test_cards_newest_first_fold_close_and_clear_finished(tmp_path: Path) -> None:
    client = SlowClient()
    studio = Studio(client, model="image-b", media_dir=tmp_path)
    studio.set(prompt="a kite")
    first, second, third = studio.submit(), studio.submit(), studio.submit()
    assert list(studio.card_box.children) == [third, second, first]
    assert studio.card_box.layout.max_height and "auto" in studio.card_box.layout.overflow
    assert "3 tasks, newest first; 3 running" in studio.tasks.count.value
    assert studio.clear_button.disabled  # nothing has ended
    second.fold_button.click()
    assert second.folded and second.body_box.layout.display == "none"
    second.fold_button.click()
    assert not second.folded
    third.close_button.click()
    assert list(studio.card_box.children) == [second, first] and third not in studio.cards
    first.stop()
    assert not studio.clear_button.disabled
    assert studio.clear_finished() == [first]
    assert list(studio.card_box.children) == [second]
    assert "1 task, newest first; 1 running" in studio.tasks.count.value


def test_history_and_compare_are_tabs_beside_the_cards(studio: Studio) -> None:
    assert studio.tabs in studio.children
    assert list(studio.tabs.titles) == ["Tasks", "Compare models", "History"]
    assert studio.tabs.children == (studio.tasks, studio.compare_panel, studio.history_panel)
    assert studio.card_box in studio.tasks.children


def test_cards_embed_a_compact_preview_that_enlarges(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox", duration=2, resolution="480P")
    card = studio.submit()
    assert card.future is not None
    card.future.result(timeout=WAIT)
    assert card.wait_done(WAIT)
    assert ('<video controls playsinline autoplay muted preload="auto" '
            'src="data:video/mp4;base64,') in card.media.value
    assert "genlab-zoom" in card.media.value and "enlarge" in card.media.value
    assert "original:" in card.media.value


# --- theme ---------------------------------------------------------------------------------


def test_text_colours_come_from_the_theme(studio: Studio) -> None:
    studio.set(model="video-c", prompt="")
    studio.set(reference_images=["https://example.com/a.png"])
    card = TaskCard(studio.client, studio.body, media_dir=studio.media_dir)
    hard = re.compile(r"(?<![-\w])color:\s*#")  # a text colour not taken from a variable
    for part in [*_walk(studio), *_walk(card)]:
        if isinstance(part, widgets.HTML):
            assert not hard.search(part.value), part.value
        for trait in ("border", "border_left"):
            value = getattr(getattr(part, "layout", None), trait, None)
            if value:
                assert "var(--jp-" in value, value
