"""The Studio's saved prompts as a person meets them: under the prompt field, "Save as new
version" keeps the text as the next version of a named prompt, "Load" puts a version's text
back into the field; what the history holds, what the list shows and what the line says.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import genlab
from genlab.emulator import EmulatorHandle
from genlab.widgets import Studio


@pytest.fixture
def history(tmp_path: Path) -> Iterator[genlab.History]:
    kept = genlab.History(tmp_path / "history.sqlite")
    yield kept
    kept.close()


@pytest.fixture
def studio(emulator: EmulatorHandle, history: genlab.History, tmp_path: Path) -> Iterator[Studio]:
    with genlab.Client(emulator.base_url, emulator.api_key, history=history) as client:
        yield Studio(client, model="video-a", media_dir=tmp_path / "media")


def _prompt_field(studio: Studio) -> str:
    value = studio.form.fields["prompt"].control.value  # what the person sees in the box
    assert isinstance(value, str)
    return value


def _type(studio: Studio, text: str) -> None:
    studio.form.fields["prompt"].control.value = text  # as typing does


def _listed(studio: Studio) -> list[str]:
    return [label for label, _ in studio.prompt_versions.version_picker.options]


def _rows(history: genlab.History) -> list[list[object]]:
    frame = history.prompts()[["name", "version", "parent", "template"]]
    return [[n, int(v), None if pd.isna(p) else int(p), t]
            for n, v, p, t in frame.itertuples(index=False)]


def test_the_control_sits_under_the_prompt_field_in_every_model(studio: Studio) -> None:
    for model in ("video-a", "image-b", "video-d"):
        studio.select(model)
        children = list(studio.form.children)
        prompt_row = studio.form.fields["prompt"]
        assert children[children.index(prompt_row) + 1] is studio.prompt_versions


def test_save_makes_version_one_then_revisions(studio: Studio, history: genlab.History) -> None:
    control = studio.prompt_versions
    _type(studio, "a red kite over dunes")
    control.name_box.value = "kite"
    control.save_button.click()
    assert control.said == "Saved kite v1, the first version of a new prompt."
    assert _listed(studio) == ["kite v1"]
    assert list(control.name_box.options) == ["kite"]

    _type(studio, "a red kite soaring over dunes at dusk")
    control.save_button.click()
    assert control.said == "Saved kite v2, revised from v1."
    assert _listed(studio) == ["kite v2", "kite v1"]  # newest first, and picked
    assert control.version_picker.value == 2
    assert _rows(history) == [
        ["kite", 1, None, "a red kite over dunes"],
        ["kite", 2, 1, "a red kite soaring over dunes at dusk"],
    ]

    control.save_button.click()  # the same text again: nothing new
    assert control.said == "kite v2 already has this text: nothing new was saved."
    assert len(history.prompts()) == 2


def test_load_puts_a_versions_text_into_the_field(studio: Studio,
                                                 history: genlab.History) -> None:
    history.save_prompt("kite", "a red kite")
    history.save_prompt("kite", "a red kite over dunes, 35 mm")
    history.set_prompt_alias("kite", "best", 2)
    control = studio.prompt_versions
    control.name_box.value = "kite"
    assert _listed(studio) == ["kite v2 (best)", "kite v1"]

    control.version_picker.value = 1
    control.load_button.click()
    assert _prompt_field(studio) == "a red kite"
    assert studio.body["prompt"] == "a red kite"
    assert control.said == "Loaded kite v1 into the prompt."

    control.version_picker.value = 2
    control.load_button.click()
    assert _prompt_field(studio) == "a red kite over dunes, 35 mm"
    assert control.said == "Loaded kite v2 (best) into the prompt."
    # A loaded text follows the person to the next model, as typed text does.
    studio.select("image-b")
    assert _prompt_field(studio) == "a red kite over dunes, 35 mm"


def test_a_version_with_variables_is_not_loaded(studio: Studio,
                                                history: genlab.History) -> None:
    genlab.prompt("A {subject} over {place}", name="kite", history=history)
    _type(studio, "what I was writing")
    control = studio.prompt_versions
    control.name_box.value = "kite"
    control.load_button.click()
    assert _prompt_field(studio) == "what I was writing"
    assert "kite v1 has variables (subject, place)" in control.said
    assert "genlab.prompt('kite@1').fill(subject=..., place=...)" in control.said
    assert "genlab-error" in control.message.value


@pytest.mark.parametrize(("name", "text", "said"), [
    ("", "a red kite", "name the prompt first"),
    ("kite@2", "a red kite", "a prompt's name must be text without '@'"),
    ("kite", "   ", "write a prompt first"),
    ("kite", "a {subject} at dusk", "saves no text with { or }"),
])
def test_save_refuses_what_it_cannot_keep(studio: Studio, history: genlab.History,
                                          name: str, text: str, said: str) -> None:
    control = studio.prompt_versions
    _type(studio, text)
    control.name_box.value = name
    control.save_button.click()
    assert said in control.said
    assert "genlab-error" in control.message.value
    assert history.prompts().empty
    assert _prompt_field(studio) == text  # the text is left as it was


def test_names_and_texts_are_escaped(studio: Studio, history: genlab.History) -> None:
    control = studio.prompt_versions
    _type(studio, "<img src=x onerror=alert(1)>")
    control.name_box.value = "<b>kite</b>"
    control.save_button.click()
    assert "<b>kite</b>" not in control.message.value
    assert control.said == "Saved <b>kite</b> v1, the first version of a new prompt."
    assert _rows(history) == [["<b>kite</b>", 1, None, "<img src=x onerror=alert(1)>"]]


def test_a_saved_prompt_made_in_the_studio_fills_in_code(studio: Studio,
                                                         history: genlab.History) -> None:
    _type(studio, "a red kite over dunes")
    studio.prompt_versions.save("kite")
    kite = genlab.prompt("kite", history=history)
    assert kite.variables == ()
    assert kite.fill() == "a red kite over dunes"


def test_without_a_history_a_line_says_how_to_keep_one(emulator: EmulatorHandle,
                                                       tmp_path: Path) -> None:
    with genlab.Client(emulator.base_url, emulator.api_key) as client:  # in-memory journal
        studio = Studio(client, media_dir=tmp_path / "media")
    control = studio.prompt_versions
    assert "Saved prompts need a genlab History" in control.said
    assert "genlab.connect()" in control.said
    assert control.save_button not in _walk(control)


def _walk(widget: object) -> list[object]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += _walk(child)
    return found
