"""The Studio, driven through its widgets (headless: ipywidgets needs no frontend).

Controls are compared with the catalog for every model; mode changes, validation messages,
reference editing, extra params, submission against the in-thread emulator, rendering,
escaping and the history panel are exercised the way a user would, through the widgets.
Waits are bounded safety nets, never timing assertions.
"""

from __future__ import annotations

import ast
import concurrent.futures
import io
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

import genlab
from genlab.catalog import CATALOG, OMIT, Mode, RequestBase, form_fields
from genlab.client import BudgetQuote, TaskRecord
from genlab.client.journal import MemoryJournal, TaskJournal
from genlab.emulator import EmulatorHandle
from genlab.widgets import (
    Background,
    HistoryPanel,
    ReferenceList,
    Studio,
    StudioClient,
    TaskCard,
)
from genlab.widgets._fields import BoolField, ChoiceField, IntField, PromptField, TextField
from genlab.widgets._form import ExtraField
from genlab.widgets._shots import ShotList

from ._fakes import model_of

MODELS = list(CATALOG)
WAIT = 120.0  # a safety net for a busy machine, not an assertion
ROW_TYPES = {
    "prompt": PromptField,
    "enum": ChoiceField,
    "int": IntField,
    "bool": BoolField,
    "text": TextField,
    "references": ReferenceList,
    "extra": ExtraField,
    "shots": ShotList,
}


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (480, 480), (200, 40, 40)).save(out, format="PNG")
    return out.getvalue()


def _widget_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("genlab-widgets")]


def _finish(card: TaskCard) -> None:
    assert card.future is not None
    try:
        card.future.result(timeout=WAIT)
    except genlab.GenlabError:
        pass  # failures are asserted on the card
    assert card.wait_done(WAIT), "the card never reached its final state"


def _visible(studio: Studio) -> set[str]:
    return {name for name, row in studio.form.fields.items() if not row.hidden}


# --- controls follow the catalog ---------------------------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_every_field_has_its_control_and_no_other(studio: Studio, model: str) -> None:
    studio.set(model=model)
    cls = CATALOG[model]
    assert studio.model_picker.value == model
    assert studio.kind_picker.value == cls.KIND
    assert studio.form_box.children == (studio.form,)
    assert set(studio.form.fields) == set(cls.model_fields) - {"model"}
    for spec in form_fields(cls):
        row = studio.form.fields[spec.name]
        assert isinstance(row, ROW_TYPES[spec.kind]), spec.name
        control = getattr(row, "control", None)
        if control is not None:  # the catalog's label; the wire name opens the tooltip
            assert control.tooltip == f"{spec.name}: {spec.description}"
            if spec.kind not in ("enum", "extra"):
                assert control.description == spec.label
        if spec.kind == "enum":
            values = [v for _, v in control.options]
            assert [v for v in values if v is not OMIT] == list(spec.choices)
            assert (OMIT in values) == (spec.omittable or spec.required)
        if spec.kind == "int" and not spec.omittable:
            assert isinstance(control, widgets.IntSlider)
            assert (control.min, control.max, control.value) == (spec.min, spec.max, spec.default)
        if spec.kind == "bool":
            assert isinstance(control, widgets.Checkbox) and control.value == spec.default
        if spec.kind == "extra":
            assert isinstance(row, ExtraField)
            assert list(row.fields) == [s.name for s in spec.fields]
        if spec.kind == "references":
            assert isinstance(row, ReferenceList)
            assert f"(0 / {spec.max_items})" in row.title.value


@pytest.mark.parametrize("model", MODELS)
def test_the_catalog_example_through_the_form_is_valid(studio: Studio, model: str) -> None:
    example = {k: v for k, v in CATALOG[model].EXAMPLE.items() if k != "model"}
    studio.set(model=model, **example)
    assert studio.validation.valid, studio.validation.errors
    assert not studio.submit_button.disabled
    request = genlab.validate(studio.body)
    expected = genlab.validate(CATALOG[model].EXAMPLE)
    assert all(getattr(request, k) == getattr(expected, k) for k in example)
    assert studio.errors.value == ""


def test_css_hooks_for_styling_and_browser_tests(studio: Studio) -> None:
    studio.set(model="image-a", prompt="a kite")
    assert "genlab-studio" in studio._dom_classes
    assert "genlab-model-picker" in studio.model_picker._dom_classes
    assert "genlab-submit" in studio.submit_button._dom_classes
    for name, row in studio.form.fields.items():
        assert f"genlab-field-{name}" in row._dom_classes


def test_enums_with_few_short_options_are_toggle_buttons(studio: Studio) -> None:
    studio.set(model="video-a")
    assert isinstance(studio.form.fields["resolution"].control, widgets.ToggleButtons)
    studio.set(model="image-d")
    assert isinstance(studio.form.fields["aspect_ratio"].control, widgets.Dropdown)


def test_prompt_counter_counts_against_the_limit(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox")
    prompt = studio.form.fields["prompt"]
    assert isinstance(prompt, PromptField)
    assert "5 / 20000 characters" in prompt.counter.value
    studio.set(model="video-b", prompt="waves crash")
    assert "11 characters" in studio.form.fields["prompt"].counter.value
    assert " / " not in studio.form.fields["prompt"].counter.value


def test_optional_field_without_default_offers_default_and_omits_it(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox")
    control = studio.form.fields["aspect_ratio"].control
    assert control.options[0][0] == "(default)"
    assert "aspect_ratio" not in studio.body
    control.value = "9:16"
    assert studio.body["aspect_ratio"] == "9:16"
    control.value = OMIT
    assert "aspect_ratio" not in studio.body


def test_forms_are_built_once_and_keep_their_values(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox", duration=12)
    form = studio.form
    studio.set(model="image-b")
    studio.set(model="video-a")
    assert studio.form is form
    assert studio.body["duration"] == 12
    assert studio.form_box.children == (form,)


def test_the_prompt_follows_to_an_empty_form(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox")
    studio.set(model="video-f")
    assert studio.body["prompt"] == "a fox"


def test_the_kind_picker_switches_model(studio: Studio) -> None:
    studio.kind_picker.value = "image"
    assert CATALOG[studio.model].KIND == "image"
    assert set(studio.model_picker.options) == {m for m in MODELS if CATALOG[m].KIND == "image"}
    studio.model_picker.value = "image-c"
    assert studio.form.model == "image-c"


def test_set_refuses_what_the_controls_cannot_hold(studio: Studio) -> None:
    with pytest.raises(genlab.InvalidParameterError, match="no field 'n'"):
        studio.set(model="video-a", n=2)
    with pytest.raises(genlab.InvalidParameterError, match="from 2 to 30"):
        studio.set(duration=31)
    with pytest.raises(genlab.InvalidParameterError, match="choose one of 480P, 720P, 1080P"):
        studio.set(resolution="4K")
    with pytest.raises(ValueError, match="unknown model"):
        studio.set(model="video-z")


# --- mode awareness ----------------------------------------------------------------------


def test_a_first_frame_hides_aspect_ratio_on_video_c(studio: Studio) -> None:
    studio.set(model="video-c", prompt="a lighthouse", aspect_ratio="9:16")
    assert "aspect_ratio" in _visible(studio) and studio.body["aspect_ratio"] == "9:16"
    assert "text-to-video" in studio.mode_label.value
    frame = {"url": "https://example.com/a.png", "reference_type": "first_frame"}
    studio.set(reference_images=[frame])
    assert studio.form.fields["aspect_ratio"].layout.display == "none"
    assert "aspect_ratio" not in studio.body
    assert Mode.FIRST_FRAME.label in studio.mode_label.value
    assert "the output follows the first frame" in studio.form.hidden_note.value
    assert studio.validation.valid and not studio.submit_button.disabled
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    refs.remove(0)
    assert "aspect_ratio" in _visible(studio) and studio.body["aspect_ratio"] == "9:16"


def test_an_edit_source_hides_duration_on_video_c(studio: Studio) -> None:
    source = {"url": "https://example.com/v.mp4", "reference_type": "edit_source"}
    studio.set(model="video-c", prompt="make it snow", reference_videos=[source])
    assert _visible(studio) == set(studio.form.fields) - {"aspect_ratio", "duration"}
    assert "video edit" in studio.mode_label.value


def test_multi_shot_through_the_extra_params_controls(studio: Studio) -> None:
    studio.set(model="video-f", prompt="")
    extra = studio.form.fields["extra_params"]
    assert isinstance(extra, ExtraField)
    extra.fields["multi_shot"].control.value = True
    assert "multi-shot" in studio.mode_label.value
    assert studio.submit_button.disabled  # customize needs shots
    shots = extra.fields["multi_prompt"]
    assert isinstance(shots, ShotList)
    shots.add("a boat leaves", 2)
    shots.add("it reaches the island", 3)
    assert studio.body["extra_params"]["multi_prompt"] == [
        {"prompt": "a boat leaves", "duration": 2, "index": 0},
        {"prompt": "it reaches the island", "duration": 3, "index": 1},
    ]
    assert studio.validation.valid
    shots.remove(0)
    assert [s["index"] for s in studio.body["extra_params"]["multi_prompt"]] == [0]


# --- validation messages ----------------------------------------------------------------


def test_empty_prompt_on_video_a_disables_submit_with_the_catalog_message(
    studio: Studio,
) -> None:
    studio.set(model="video-a", prompt="")
    assert studio.submit_button.disabled
    message = "video-a: prompt must not be empty"
    assert message in studio.form.fields["prompt"].message.value
    assert message not in studio.errors.value  # each message once: under its field
    with pytest.raises(genlab.InvalidParameterError, match="prompt must not be empty"):
        studio.submit()
    studio.set(prompt="a fox")
    assert not studio.submit_button.disabled
    assert studio.form.fields["prompt"].message.value == ""


def test_too_long_prompt_is_reported_under_the_prompt(studio: Studio) -> None:
    studio.set(model="video-c", prompt="x" * 5001)
    assert studio.submit_button.disabled
    assert "prompt is 5001 characters; the maximum is 5000" in (
        studio.form.fields["prompt"].message.value
    )
    assert "5001 / 5000 characters" in studio.form.fields["prompt"].counter.value


def test_last_frame_without_first_frame(studio: Studio) -> None:
    last = {"url": "https://example.com/b.png", "reference_type": "last_frame"}
    studio.set(model="video-a", prompt="a fox", reference_images=[last])
    assert studio.submit_button.disabled
    assert "a last_frame requires a first_frame" in (
        studio.form.fields["reference_images"].message.value
    )
    assert "first and last frame" in studio.mode_label.value


def test_seed_typed_as_text_is_judged_by_the_catalog(studio: Studio) -> None:
    studio.set(model="video-b", prompt="waves")
    seed = studio.form.fields["extra_params"].fields["seed"]
    seed.control.value = "42"
    assert studio.body["extra_params"] == {"seed": 42}
    seed.control.value = "forty-two"
    assert studio.submit_button.disabled
    assert "seed must be an integer" in seed.message.value
    seed.control.value = ""
    assert "extra_params" not in studio.body and studio.validation.valid


def test_credits_are_estimated_live(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox", duration=5, resolution="720P")
    assert "800 credits estimated" in studio.credits_label.value
    studio.set(duration=10)
    assert "1,600 credits estimated" in studio.credits_label.value
    studio.set(model="video-b", prompt="waves")  # the words of every money line
    assert "no published price, so no estimate" in studio.credits_label.value


def test_notices_are_shown(studio: Studio) -> None:
    studio.set(model="video-c", prompt="waves", extra_params={"audio_setting": "origin"})
    assert "audio_setting only takes effect in video-edit mode" in studio.notices.value
    assert "changed:" not in studio.notices.value


def test_a_value_the_model_changes_is_said_in_the_studio_and_on_its_card(
    studio: Studio,
) -> None:
    # Editing and submitting raise no warning (the suite turns warnings into errors): the
    # Studio says it instead, by the form, and the task's card says it again.
    studio.set(model="image-b", prompt="a kite", resolution="2K")
    assert "changed: resolution: asked 2K; image-b makes 1K only" in studio.notices.value
    assert studio.validation.valid and studio.body["resolution"] == "2K"
    card = studio.submit()
    _finish(card)
    assert card.status == "succeeded", card.message.value
    assert "changed: resolution: asked 2K; image-b makes 1K only" in card.media.value
    studio.set(resolution="1K")
    assert "changed:" not in studio.notices.value


# --- reference media -------------------------------------------------------------------


def test_reference_list_roles_order_and_limits(studio: Studio) -> None:
    studio.set(model="video-c", prompt="character1 waves at character2")
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    refs.url.value = "https://example.com/one.png"
    refs.add_button.click()
    refs.add("https://example.com/two.png")
    assert refs.url.value == ""
    thumb, _url, role = refs.rows.children[0].children[:3]
    assert '<img src="https://example.com/one.png"' in thumb.value  # drawn by the browser
    assert list(role.options) == ["asset", "first_frame"]  # what video-c allows for images
    assert [i["url"].rsplit("/", 1)[1] for i in studio.body["reference_images"]] == [
        "one.png", "two.png"
    ]
    down = refs.rows.children[0].children[-2]
    down.click()
    assert [i["url"].rsplit("/", 1)[1] for i in studio.body["reference_images"]] == [
        "two.png", "one.png"
    ]
    assert refs.rows.children[0].children[-3].disabled  # the first cannot move up
    refs.rows.children[1].children[-1].click()  # remove
    assert len(studio.body["reference_images"]) == 1
    assert "Reference" in studio.mode_label.value or "reference" in studio.mode_label.value
    studio.set(model="video-d")
    one = studio.form.fields["reference_images"]
    assert isinstance(one, ReferenceList)
    one.add("https://example.com/character.png")
    assert one.full and one.add_button.disabled and one.upload.disabled
    # thumbnail, url, up, down, remove: one role only, so no role picker
    assert len(one.rows.children[0].children) == 5


def _upload(refs: ReferenceList, data: bytes, name: str) -> None:
    entry = {
        "name": name,
        "type": "image/png",
        "size": len(data),
        "content": memoryview(data),
        "last_modified": datetime.now(UTC),
    }
    refs.upload.value = (entry,)


def test_local_image_becomes_a_data_uri_where_the_model_allows_it(studio: Studio) -> None:
    assert not studio.client.supports_uploads  # a plain Client: treated as the real service
    studio.set(model="video-a", prompt="the fox runs")
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    _upload(refs, _png(), "frame.png")
    (item,) = studio.body["reference_images"]
    assert item["url"].startswith("data:image/png;base64,")
    # The button counts the uploaded files in the list, and keeps none of their bytes.
    assert [(f["name"], bytes(f["content"])) for f in refs.upload.value] == [("frame.png", b"")]
    thumb = refs.rows.children[0].children[0].value
    assert "data:image/jpeg;base64," in thumb  # a small thumbnail, not the 480 px original
    assert studio.validation.valid
    refs.remove(0)
    assert refs.upload.value == ()


def test_local_file_where_a_public_url_is_needed(studio: Studio) -> None:
    studio.set(model="video-b", prompt="waves")
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    _upload(refs, _png(), "frame.png")
    assert "reference_images" not in studio.body
    assert "needs a public http(s) URL" in refs.note.value
    with pytest.raises(genlab.InvalidParameterError, match="public"):
        studio.add_file("reference_images", _png(), "frame.png")


def test_local_file_goes_through_the_emulators_upload(
    client: genlab.Client, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    client.supports_uploads = True
    studio = Studio(client, media_dir=tmp_path)
    studio.set(model="video-b", prompt="the boat sails on")
    url = studio.add_file("reference_images", _png(), "frame.png", "first_frame")
    assert url.startswith(emulator.base_url)
    assert studio.body["reference_images"] == [{"url": url, "reference_type": "first_frame"}]
    assert "first frame" in studio.mode_label.value
    card = studio.submit()
    _finish(card)
    assert card.status == "succeeded", card.message.value


# --- submitting and rendering -----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "fields", "needle"),
    [
        ("video-a", {"prompt": "a fox", "duration": 2, "resolution": "480P"},
         '<video controls playsinline autoplay muted preload="auto" '
         'src="data:video/mp4;base64,'),
        ("image-d", {"prompt": "a kite", "resolution": "512"}, '<img src="data:image/png;base64,'),
    ],
)
def test_submit_renders_the_media_embedded(
    studio: Studio, model: str, fields: dict[str, Any], needle: str, tmp_path: Path
) -> None:
    studio.set(model=model, **fields)
    card = studio.submit()
    assert studio.cards == [card] and studio.card_box.children[0] is card
    _finish(card)
    assert card.status == "succeeded", card.message.value
    assert needle in card.media.value
    assert "succeeded" in card.badge.value and "succeeded" in card.steps.value
    assert not card.download_button.disabled
    paths = card.download(tmp_path / "out")
    assert paths and all(p.exists() for p in paths)
    assert str(paths[0]) in card.message.value
    code = card.show_code()
    assert card.code.layout.display is None
    assert code.startswith("record = client.generate(**{")
    assert ast.literal_eval(code[len("record = client.generate(**"):-1]) == studio.body


def test_a_failed_task_is_reported_on_the_card(
    studio: Studio, emulator: EmulatorHandle
) -> None:
    studio.set(model="image-b", prompt="a kite")
    emulator.app.emulator.faults.update(fail_rate=1.0)
    try:
        card = studio.submit()
        _finish(card)
    finally:
        emulator.app.emulator.faults.update(fail_rate=0.0)
    assert card.status == "failed"
    assert isinstance(card.error, genlab.TaskFailedError)
    assert "The task failed" in card.message.value and "GENERATION_FAILED" in card.message.value
    assert card.download_button.disabled


def test_prompt_and_service_errors_are_escaped(studio: Studio) -> None:
    evil = "<script>alert(1)</script>"
    url = f"http://127.0.0.1:9/{evil}.png"
    studio.set(model="video-a", prompt=evil, reference_images=[url])
    assert studio.validation.valid
    card = studio.submit()
    _finish(card)
    assert card.status == "error"
    assert isinstance(card.error, genlab.InvalidParameterError)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card.header.value
    assert "&lt;script&gt;" in card.message.value and "could not be fetched" in card.message.value
    for part in (card.header, card.message, card.steps, card.badge):
        assert "<script>" not in part.value


def test_a_card_from_code_on_a_closed_client_shows_the_error(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    client = genlab.Client(emulator.base_url, emulator.api_key)
    client.close()
    card = TaskCard(client, {"model": "image-b", "prompt": "a kite"}, media_dir=tmp_path)
    card.start()
    assert card.done and card.status == "error" and "closed" in card.message.value


# --- history -------------------------------------------------------------------------------


def test_history_panel_lists_filters_and_escapes(emulator: EmulatorHandle, tmp_path: Path) -> None:
    from genlab.history import DISPLAY_COLUMNS, History

    history = History(tmp_path / "history.sqlite")
    with genlab.Client(
        emulator.base_url, emulator.api_key, poll_scale=0.05, history=history
    ) as client:
        studio = Studio(client, media_dir=tmp_path)
        studio.set(model="image-b", prompt="<b>bold</b> kite")
        card = studio.submit()
        _finish(card)
        panel = studio.history_panel
        panel.refresh()
        assert card.record is not None and card.record.task_id in panel.markup
        for heading in DISPLAY_COLUMNS.values():  # the history's own column table
            assert f">{heading}<" in panel.table.value
        assert "&lt;b&gt;bold&lt;/b&gt; kite" in panel.markup
        assert "<b>bold</b>" not in panel.markup
        panel.set_filter(status="failed")
        assert "No tasks yet" in panel.markup and card.record.task_id not in panel.markup
        panel.set_filter(model="image-b", status="succeeded")
        assert card.record.task_id in panel.markup
        panel.model.value = "video-a"
        assert card.record.task_id not in panel.markup
    history.close()


def test_a_history_row_is_one_line_with_the_whole_text_in_its_tooltip() -> None:
    from genlab.widgets._history import row_html

    prompt = "A very long prompt about a lighthouse at dusk " * 6
    page = row_html({"prompt": prompt, "status": "failed", "credits": "",
                     "error_message": "GENERATION_FAILED: <i>it broke</i>", "task_id": "t1"})
    assert f"title='{prompt}'" in page  # whole, though PROMPT_SHOWN is shorter
    assert page.count("white-space:nowrap") >= 9 and "text-overflow:ellipsis" in page
    assert "title='no published price'><span" in page and ">–</span>" in page
    assert "&lt;i&gt;it broke&lt;/i&gt;" in page and "<i>it broke" not in page


def test_a_history_row_shows_a_short_time_and_a_long_id_cut_in_the_middle() -> None:
    from datetime import date

    from genlab.widgets._history import row_html

    task_id = "task_28a8c1f0e3b94d7e9b2f5a6c1d698a82e"
    day = date(2026, 11, 27)
    today = row_html({"submitted_at": "2026-11-27 13:52:07", "task_id": task_id}, day)
    assert "title='2026-11-27 13:52:07 UTC'><span class='genlab-time-full'>13:52:07<" in today
    assert "<span class='genlab-time-brief'>13:52</span>" in today  # for a narrow panel
    assert f"title='{task_id}'>task_28a8…698a82e</div>" in today
    older = row_html({"submitted_at": "2026-11-26 09:05:59", "task_id": "t1"}, day)
    assert ">11-26 09:05</span>" in older and "title='t1'>t1</div>" in older
    assert ">2025-11-26</span>" in row_html({"submitted_at": "2025-11-26 09:05:59"}, day)


def test_history_rows_open_to_their_card_and_the_panel_follows_new_work(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    from genlab.history import History

    history = History(tmp_path / "history.sqlite")
    with genlab.Client(
        emulator.base_url, emulator.api_key, poll_scale=0.05, history=history
    ) as client:
        studio = Studio(client, media_dir=tmp_path)
        panel = studio.history_panel
        # Work done outside the Studio shows when the History tab is opened.
        record = client.generate(model="image-b", prompt="a lantern", progress=False)
        assert record.task_id not in panel.markup
        studio.tabs.selected_index = 2
        assert record.task_id in panel.markup
        row = next(r for r in panel.rows if r.task_id == record.task_id)
        assert row.button.description == "Open" and not row.button.disabled
        row.button.click()
        assert row.button.description == "Close" and panel.card in panel.rows_box.children
        assert _eventually(lambda: "data:image/" in panel.card.value), panel.card.value
        assert "genlab-task" in panel.card.value and "a lantern" in panel.card.value
        row.button.click()
        assert panel.card not in panel.rows_box.children and row.button.description == "Open"
        # A comparison refreshes the panel when it ends.
        studio.tabs.selected_index = 1
        studio.set(model="image-b", prompt="a compared kite")
        comparison = studio.compare(["image-b", "image-d"]).result(timeout=WAIT)
        for task_id in comparison.df["task_id"]:
            assert _eventually(lambda t=task_id: t in panel.markup), task_id
    history.close()


def _eventually(check: Callable[[], bool]) -> bool:
    """Wait for ``check`` (work done on the widgets' pool), with a generous deadline."""
    done = threading.Event()
    deadline = datetime.now(UTC).timestamp() + WAIT
    while not check():
        if datetime.now(UTC).timestamp() > deadline:
            return False
        done.wait(0.05)
    return True


def test_history_panel_without_a_genlab_history(client: genlab.Client) -> None:
    panel = HistoryPanel(client.history)
    assert not panel.available
    assert "genlab History" in panel.table.value and "genlab History" in panel.markup


# --- compare, shortcut, imports ------------------------------------------------------------


def test_compare_shows_a_gallery(studio: Studio) -> None:
    studio.set(model="image-b", prompt="a paper kite")
    assert studio.compare_panel is not None
    future = studio.compare(["image-b", "image-d"])
    comparison = future.result(timeout=WAIT)
    assert len(comparison.df) == 2
    assert "data:image/" in studio.compare_panel.gallery.value
    # The cost line is said once (above the button); the status says how each model ended.
    assert "2 runs" in studio.compare_panel.plan_note.value
    assert "2 runs" not in studio.compare_panel.status.value
    status = studio.compare_panel.status.value
    assert "Done: 2 succeeded" in status
    for model in ("image-b", "image-d"):
        assert f"data-model='{model}'" in status
    assert status.count(">succeeded</span>") == 2


def test_compare_shows_each_models_status_while_it_runs() -> None:
    from genlab.comparison import plan
    from genlab.widgets._runboard import RunBoard

    board = RunBoard(plan(["a kite"], ["video-a", "video-b", "video-d"], {"duration": 4}))
    first = board.html()
    assert first.count(">sending</span>") == 2 and ">invalid</span>" in first
    assert board.seen(TaskRecord(task_id="t1", status="queued", model="video-b"))
    assert board.seen(TaskRecord(task_id="t2", status="processing", model="video-a"))
    assert not board.seen(TaskRecord(task_id="t2", status="processing", model="video-a"))
    assert board.seen(TaskRecord(task_id="t1", status="succeeded", model="video-b"))
    chips = re.findall(r"data-model='([^']+)'[^>]*><b>[^<]*</b> <span[^>]*>(\w+)<", board.html())
    assert chips == [("video-a", "processing"), ("video-b", "succeeded"), ("video-d", "invalid")]


def test_genlab_studio_shortcut(client: genlab.Client, tmp_path: Path) -> None:
    studio = genlab.studio(client, model="image-c", media_dir=tmp_path)
    assert isinstance(studio, Studio) and studio.model == "image-c"
    assert genlab.studio is genlab.widgets.studio
    assert not hasattr(client, "studio")


def test_studio_refuses_an_async_client(emulator: EmulatorHandle) -> None:
    with pytest.raises(TypeError, match="needs a genlab.Client"):
        Studio(genlab.AsyncClient(emulator.base_url, emulator.api_key))


def test_import_genlab_does_not_import_ipywidgets() -> None:
    code = "import sys, genlab; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the client the widgets need, and their background work -------------------------------


class MemoryClient:
    """A StudioClient without a service: every task succeeds at once with one saved video."""

    base_url = "memory://studio"
    supports_uploads = False
    budget = None
    budget_remaining = None
    budget_remaining_today = None

    def budget_quote(self, request_or_body: Mapping[str, Any] | RequestBase, /) -> BudgetQuote:
        return BudgetQuote(None)  # no budget: nothing refused

    def __init__(self, video: bytes, cover: bytes) -> None:
        self.history: TaskJournal = MemoryJournal()
        self.video, self.cover = video, cover

    def generate_future(
        self,
        request_or_body: Mapping[str, Any] | RequestBase,
        /,
        *,
        on_update: Callable[[TaskRecord], object] | None = None,
        reuse: bool | None = None,
    ) -> concurrent.futures.Future[TaskRecord]:
        record = TaskRecord(
            task_id="task-big", status="succeeded", model=model_of(request_or_body),
            videos=[{"url": "memory://task-big.mp4", "cover_url": "memory://task-big.png"}],
        )
        if on_update is not None:
            on_update(record)
        future: concurrent.futures.Future[TaskRecord] = concurrent.futures.Future()
        future.set_result(record)
        return future

    def find_reusable(self, request_or_body: Mapping[str, Any], /) -> None:
        return None  # no history of results: nothing to reuse

    def wait_future(
        self, task: TaskRecord, *, on_update: Callable[[TaskRecord], object] | None = None
    ) -> concurrent.futures.Future[TaskRecord]:
        future: concurrent.futures.Future[TaskRecord] = concurrent.futures.Future()
        future.set_result(task)
        return future

    def download(self, record: TaskRecord, directory: str | os.PathLike[str]) -> list[Path]:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        video, cover = folder / f"{record.task_id}.mp4", folder / f"{record.task_id}_cover.png"
        video.write_bytes(self.video)
        cover.write_bytes(self.cover)
        return [video, cover]

    def reference_url(
        self, data: bytes, filename: str, *, allow_data_uri: bool, field: str | None = None
    ) -> str:
        raise genlab.InvalidParameterError(f"{filename}: this test client takes no files")


def test_a_genlab_client_is_a_studio_client(client: genlab.Client) -> None:
    assert isinstance(client, StudioClient)
    assert isinstance(MemoryClient(b"", b""), StudioClient)


def test_background_reports_on_the_widgets_before_the_future_resolves() -> None:
    work = Background(max_workers=2)
    seen: list[object] = []
    try:
        assert work.run(lambda a, b: a + b, 2, 3, on_done=seen.append).result(WAIT) == 5
        assert seen == [5]
        failing = work.run(int, "five", on_error=seen.append)
        with pytest.raises(ValueError, match="five"):
            failing.result(WAIT)
        assert isinstance(seen[-1], ValueError)
    finally:
        work.shutdown()
    assert _widget_threads() == []


def test_one_clock_serves_every_card_and_stops_with_them() -> None:
    work = Background(max_workers=3, tick_seconds=0.01)
    counts = {"a": 0, "b": 0}
    until = {"a": threading.Event(), "b": threading.Event()}
    ticked = threading.Event()

    def clock(name: str) -> Callable[[], None]:
        def tick() -> None:
            counts[name] += 1
            if min(counts.values()) >= 3:
                ticked.set()

        return tick

    try:
        work.tick(clock("a"), until=until["a"])
        work.tick(clock("b"), until=until["b"])
        assert ticked.wait(WAIT)
        assert [t.name for t in _widget_threads()] == ["genlab-widgets-clock"]
        until["a"].set()
        until["b"].set()
        stopped = dict(counts)
        assert work.run(lambda: "still working").result(WAIT) == "still working"
        assert counts["a"] <= stopped["a"] + 1 and counts["b"] <= stopped["b"] + 1
    finally:
        work.shutdown()
    assert _widget_threads() == []


def test_a_video_over_the_reports_embed_limit_is_shown_by_its_cover(tmp_path: Path) -> None:
    from genlab.report import MAX_EMBED_BYTES

    video = b"\x00\x00\x00\x18ftypmp42" + bytes(MAX_EMBED_BYTES)
    studio = Studio(MemoryClient(video, _png()), model="video-a", media_dir=tmp_path)
    studio.set(prompt="a long take of the sea")
    card = studio.submit()
    _finish(card)
    assert card.status == "succeeded", card.message.value
    assert [p.name for p in card.paths] == ["task-big.mp4", "task-big_cover.png"]
    assert "<video" not in card.media.value
    assert "data:image/" in card.media.value  # the cover, in the video's place
    assert "task-big.mp4: video is 5.2 MB, too large to embed" in card.media.value
    assert not card.download_button.disabled


def test_compare_needs_a_blocking_genlab_client(tmp_path: Path) -> None:
    studio = Studio(MemoryClient(b"", _png()), model="image-b", media_dir=tmp_path)
    studio.set(prompt="a kite")
    assert studio.compare_panel is not None
    studio.compare_panel.choose(["image-b"])
    studio.compare_panel.button.click()
    assert "comparing needs a genlab.Client" in studio.compare_panel.status.value
    assert studio.compare_panel.future is None
