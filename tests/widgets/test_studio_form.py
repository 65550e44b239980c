"""The Studio's form as a person reads and fills it: human labels, values it refuses before
changing anything, typed numbers out of range, reference lists (file names, numbering, what
can be added), the copy button and a keystroke that lands just after a model switch.

Headless: widget values and the markup the browser would show. Waits are bounded safety nets.
"""

from __future__ import annotations

import ast
import html.parser
import io
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import ipywidgets as widgets
import pytest

import genlab
from genlab.catalog import CATALOG, form_fields
from genlab.emulator import EmulatorHandle
from genlab.widgets import ReferenceList, Studio, TaskCard
from genlab.widgets._card import request_code
from genlab.widgets._fields import IntField

WAIT = 120.0


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (480, 480), (30, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def _walk(widget: widgets.Widget) -> Iterator[widgets.Widget]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _shown_text(markup: str) -> str:
    """The text a browser shows for ``markup`` (tags dropped, entities decoded)."""
    parts: list[str] = []
    parser = html.parser.HTMLParser()
    parser.handle_data = parts.append  # type: ignore[method-assign]
    parser.feed(markup)
    return "".join(parts)


def _attributes(markup: str, tag: str) -> dict[str, str | None]:
    found: dict[str, str | None] = {}

    class Finder(html.parser.HTMLParser):
        def handle_starttag(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
            if name == tag and not found:
                found.update(attrs)

    Finder().feed(markup)
    return found


# --- 8: values the form cannot hold are refused before anything changes ------------------


def test_set_refuses_the_whole_call_before_changing_anything(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox", duration=10)
    before = dict(studio.body)
    with pytest.raises(genlab.InvalidParameterError) as caught:
        studio.set(prompt="a different prompt", resolution="480P", duration=40)
    error = caught.value
    assert error.code == "INVALID_PARAMETER"
    assert "video-a: duration must be from 2 to 30 for this model, got 40" in str(error)
    assert "Nothing in the form was changed" in str(error)
    assert [e.field for e in error.errors] == ["duration"]
    assert studio.body == before  # neither the prompt nor the resolution moved
    assert studio.form.fields["duration"].control.value == 10


def test_set_with_a_model_switch_is_refused_whole_too(studio: Studio) -> None:
    studio.set(model="video-a", prompt="a fox")
    with pytest.raises(genlab.InvalidParameterError, match="image-a has no field 'duration'"):
        studio.set(model="image-a", prompt="a kite", duration=5)
    assert studio.model == "video-a"  # not switched
    assert studio.model_picker.value == "video-a"
    assert studio.body["prompt"] == "a fox"


def test_every_problem_of_a_call_is_named(studio: Studio) -> None:
    with pytest.raises(genlab.InvalidParameterError) as caught:
        studio.set(model="video-a", duration=1, resolution="4K", n=3)
    assert sorted(e.field for e in caught.value.errors) == ["duration", "n", "resolution"]
    assert "3 problems in the request" in str(caught.value)


def test_a_typed_duration_out_of_range_goes_to_the_nearest_bound_and_says_so(
    studio: Studio,
) -> None:
    studio.set(model="video-a", prompt="a fox on a hill", duration=5)
    row = studio.form.fields["duration"]
    assert isinstance(row, IntField)
    row.entry.value = 40  # what the number box sends when a person types 40
    # The box and the slider agree, on the nearest value the model takes, and a line says so.
    assert row.entry.value == row.control.value == 30 and studio.body["duration"] == 30
    said = _shown_text(row.message.value)
    assert "duration must be from 2 to 30: 40 was set to 30" in said
    assert not studio.submit_button.disabled
    row.entry.value = 1  # below: the lowest
    assert row.entry.value == row.control.value == 2
    assert "1 was set to 2" in _shown_text(row.message.value)
    row.control.value = 12  # the next edit: the line goes
    assert row.entry.value == 12 and row.message.value == ""
    row.entry.value = 40
    row.entry.value = 7  # typed in range: the slider follows, the line goes
    assert row.control.value == 7 and row.message.value == ""


def test_the_slider_and_its_number_box_move_together(studio: Studio) -> None:
    studio.set(model="video-a")
    row = studio.form.fields["duration"]
    assert isinstance(row, IntField)
    row.control.value = 7
    assert row.entry.value == 7 and studio.body["duration"] == 7


# --- 9: labels a person reads; the wire name in the tooltip --------------------------------


@pytest.mark.parametrize("model", list(CATALOG))
def test_no_label_is_a_wire_name(studio: Studio, model: str) -> None:
    studio.set(model=model)
    shown: list[str] = []
    for part in _walk(studio.form):
        description = getattr(part, "description", "")
        if isinstance(part, widgets.Button):
            continue
        if description:
            shown.append(description)
        if isinstance(part, widgets.HTML) and "text-align:right" in part.value:
            shown.append(_shown_text(part.value))  # ToggleButtons' side labels
    assert shown
    assert not [label for label in shown if "_" in label], shown
    for spec in form_fields(CATALOG[model]):
        row = studio.form.fields[spec.name]
        tips = [getattr(p, "tooltip", None) or "" for p in _walk(row)]
        assert any(tip.startswith(f"{spec.name}: ") for tip in tips), (spec.name, tips)


def test_labels_come_from_the_catalog(studio: Studio) -> None:
    studio.set(model="video-b")
    fields = studio.form.fields
    assert fields["duration"].control.description == "Duration (s)"
    assert fields["generate_audio"].control.description == "Audio track"
    assert "<b>More options</b>" in fields["extra_params"].children[0].value
    studio.set(model="video-d")
    orientation = fields = studio.form.fields["extra_params"].fields["character_orientation"]
    assert "Orientation" in _shown_text(orientation.children[0].children[0].value)
    assert orientation.control.tooltip.startswith("character_orientation: ")


def test_the_seed_box_is_wide_enough_for_its_placeholder(studio: Studio) -> None:
    studio.set(model="video-b")
    seed = studio.form.fields["extra_params"].fields["seed"]
    assert isinstance(seed, IntField)
    placeholder = seed.control.placeholder
    assert placeholder == "(default) -1 to 4294967295"
    width = re.fullmatch(r"calc\(10em \+ (\d+)ch\)", seed.control.layout.width)
    assert width is not None and int(width[1]) > len(placeholder)


# --- 7: reference lists -------------------------------------------------------------------


def _upload(refs: ReferenceList, data: bytes, name: str) -> None:
    """What the browser sends when a person picks a file with the Upload button."""
    refs.upload.value = ({"name": name, "type": "image/png", "size": len(data),
                          "content": memoryview(data), "last_modified": datetime.now(UTC)},)


def test_an_uploaded_file_is_listed_by_its_name(
    client: genlab.Client, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    client.supports_uploads = True
    studio = Studio(client, media_dir=tmp_path)
    studio.set(model="video-b", prompt="the boat sails on")
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    _upload(refs, _png(), "harbour-at-dawn.png")
    (row,) = refs.rows.children
    label = row.children[1]
    assert "harbour-at-dawn.png" in _shown_text(label.value)
    assert emulator.base_url not in _shown_text(label.value)  # not the opaque URL
    url = studio.body["reference_images"][0]["url"]
    assert url.startswith(emulator.base_url) and url in label.tooltip
    assert "Upload file (1)" == f"{refs.upload.description} ({len(refs.upload.value)})"
    studio.reset()  # the counter resets with the list
    assert refs.upload.value == () and refs.collapsed


def test_messages_count_list_items_from_one_as_the_list_does(studio: Studio) -> None:
    studio.set(model="video-c", prompt="a lighthouse",
               reference_images=["https://example.com/a.png", "not a url"])
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    numbers = [_shown_text(r.children[1].value).split(".")[0] for r in refs.rows.children]
    assert numbers == ["1", "2"]
    said = _shown_text(refs.message.value)
    assert "item 2 of reference images: url 'not a url' is not an http(s) URL" in said
    assert "reference_images[1]" not in said


def test_where_no_local_file_can_be_sent_there_is_no_upload_button(studio: Studio) -> None:
    studio.set(model="video-b")  # needs public URLs; this client takes no uploads
    refs = studio.form.fields["reference_images"]
    assert isinstance(refs, ReferenceList)
    refs.expand()
    assert refs.upload not in list(_walk(refs))
    assert "public URL only: local files cannot be sent here" in _shown_text(refs.title.value)
    studio.set(model="video-c")  # takes images inline as data: URIs
    inline = studio.form.fields["reference_images"]
    assert isinstance(inline, ReferenceList)
    assert inline.upload in list(_walk(inline))
    assert "a public URL or a local image (sent inline)" in _shown_text(inline.title.value)
    assert "public URL only" not in _shown_text(inline.title.value)


# --- 6: empty reference lists take no room --------------------------------------------------


def test_empty_reference_lists_fold_into_one_line(studio: Studio) -> None:
    studio.set(model="video-a")
    form = studio.form
    lists = [form.fields[n] for n in ("reference_images", "reference_videos", "reference_audios")]
    assert all(isinstance(r, ReferenceList) and r.collapsed for r in lists)
    assert all(r.editor.layout.display == "none" for r in lists)  # type: ignore[union-attr]
    assert form.references_bar.layout.display is None
    buttons = [b.description for b in form.references_bar.children[1:]]
    assert buttons == ["Images", "Videos", "Audio"]
    images = lists[0]
    assert isinstance(images, ReferenceList)
    images.open_button.click()
    assert images.editor.layout.display is None
    assert images.open_button.layout.display == "none"
    studio.set(reference_images=["https://example.com/a.png"])
    assert not images.collapsed
    studio.reset()
    assert images.collapsed and images.open_button.layout.display is None


def test_the_bar_has_no_button_for_a_list_the_mode_hides(studio: Studio) -> None:
    studio.set(model="video-c", prompt="waves",
               reference_images=[{"url": "https://example.com/a.png",
                                  "reference_type": "first_frame"}])
    form = studio.form
    hidden = set(studio.validation.hidden)
    for name, row in form.fields.items():
        if isinstance(row, ReferenceList) and name in hidden:
            assert row.open_button.layout.display == "none"


# --- 12: Copy as code, and a keystroke that lands just after a model switch ----------------


def test_copy_as_code_carries_the_code_to_the_clipboard(client: genlab.Client) -> None:
    body = {"model": "image-b", "prompt": 'a "quoted" <kite> & a string'}
    card = TaskCard(client, body)
    markup = card.code_button.value
    button = _attributes(markup, "button")
    assert "navigator.clipboard.writeText" in (button["onclick"] or "")
    assert button["data-code"] == request_code(body)
    code = button["data-code"] or ""
    assert ast.literal_eval(code[len("record = client.generate(**"):-1]) == body
    assert "Copy as code" in _shown_text(markup)
    # The same code, selectable, for browsers that refuse to copy.
    assert request_code(body) in _shown_text(markup)


def test_typing_just_after_a_model_switch_goes_to_the_new_form(studio: Studio) -> None:
    studio.set(model="video-a", duration=10)
    old = studio.form
    studio.model_picker.value = "video-b"  # the switch reaches the kernel...
    studio.set(duration=12)
    # ...and a keystroke made in the old form, still on screen, arrives after it.
    old.fields["prompt"].control.value = "a fox in the snow"
    assert studio.model == "video-b"
    assert studio.body["prompt"] == "a fox in the snow"
    assert studio.body["duration"] == 12  # the old form's older duration does not come back
    studio.model_picker.value = "video-a"
    assert studio.body["prompt"] == "a fox in the snow"


def test_a_new_card_is_brought_into_view(studio: Studio) -> None:
    studio.set(model="image-b", prompt="a paper kite")
    card = studio.submit()
    reveal = _attributes(studio._reveal.value, "img")
    assert reveal["data-count"] == "1"
    assert "scrollIntoView" in (reveal["onerror"] or "")
    assert card.future is not None
    card.future.result(WAIT)
    second = studio.submit()
    assert _attributes(studio._reveal.value, "img")["data-count"] == "2"
    assert second.wait_done(WAIT)
