"""Escaping: prompts and service-provided strings carrying HTML/JS render as text in every
HTML surface genlab has: the report functions, a Comparison's gallery, cell view and report
file, the History report, and the widgets (Studio, task card, history and compare panels).

Each piece of markup is parsed; the check is structural: no element or attribute came from a
payload (no ``<script>`` with ``alert(1)``, no ``on*=`` handler, no ``<img src=x>``), and the
payload is visible as text. A surface whose module is absent is skipped, saying which.
"""

from __future__ import annotations

import html
import html.parser
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import genlab
from genlab.emulator import EmulatorHandle, start

from ._support import KEY
from .figures import Figures, Section

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
QUOTE = "' onmouseover='alert(1)"
PROMPT = f"{SCRIPT} {IMG}"  # short enough to survive the history panel's 80 characters
WAIT = 120.0  # a safety net, not a timing assertion


class Parsed(html.parser.HTMLParser):
    """Elements, attributes and text of a piece of markup, as a browser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.unsafe: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            # genlab's own handlers (the copy button, bringing a new card into view) are
            # constant code; what must never happen is a payload's code becoming a handler.
            if name.startswith("on") and (value is None or "alert(1)" in value):
                self.unsafe.append(f"<{tag} {name}={value!r}>")
            if value is not None:
                self.text.append(value)  # alt, title: shown as text too
        if tag == "img" and dict(attrs).get("src") == "x":
            self.unsafe.append("<img src=x>")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and "alert(1)" in data:
            self.unsafe.append(f"<script>{data}</script>")
        self.text.append(data)


@dataclass
class Tally:
    surfaces: int = 0
    shown_as_text: int = 0
    unsafe: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def check(self, section: Section, where: str, markup: str, *expected: str) -> None:
        """Record one surface: nothing unsafe, and each ``expected`` payload shown as text."""
        parsed = Parsed()
        parsed.feed(markup)
        parsed.close()
        text = "\n".join(parsed.text)
        self.surfaces += 1
        self.unsafe += [f"{where}: {u}" for u in parsed.unsafe]
        missing = [p for p in expected if p not in text]
        self.shown_as_text += len(expected) - len(missing)
        self.unsafe += [f"{where}: payload {p!r} not shown as text" for p in missing]
        self.record(section)

    def record(self, section: Section) -> None:
        section.add("HTML surfaces checked", self.surfaces)
        section.add("payloads shown as text", self.shown_as_text)
        section.goal("payloads rendered as markup (or lost)", len(self.unsafe), "0",
                     not self.unsafe)
        section.add("surfaces skipped (module absent)", ", ".join(self.skipped) or "none")
        for problem in self.unsafe[:5]:
            section.note(problem)


TALLY = Tally()


@pytest.fixture
def section(figures: Figures) -> Section:
    return figures.section("escaping", "Escaping: HTML/JS in prompts and service strings")


def need(module: str, section: Section) -> Any:
    """The module, or a skip that says which surface is absent (never a silent pass)."""
    try:
        return pytest.importorskip(module, reason=f"{module} is absent: its surfaces not checked")
    except pytest.skip.Exception:
        TALLY.skipped.append(module)
        TALLY.record(section)
        raise


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorHandle]:
    with start(api_key=KEY, time_scale=0.01) as handle:
        yield handle


# --- the report functions, on a frame full of hostile strings ----------------------------


def test_report_functions_escape_every_field(section: Section) -> None:
    report = need("genlab.report", section)
    now = datetime.now(UTC)
    rows = [
        {"prompt": PROMPT, "model": SCRIPT, "status": "failed", "error": IMG, "task_id": QUOTE,
         "seconds": 1.5, "credits": 80, "tag": SCRIPT, "resolution": IMG,
         "submitted_at": now, "result_url": None, "width": None, "height": None},
        {"prompt": QUOTE, "model": IMG, "status": SCRIPT, "error": SCRIPT, "task_id": IMG,
         "seconds": 2.0, "credits": None, "tag": QUOTE, "resolution": SCRIPT,
         "submitted_at": now, "result_url": None, "width": None, "height": None},
    ]
    df = pd.DataFrame(rows)
    TALLY.check(section, "report.gallery_html", report.gallery_html(df, cols=["model",
                "resolution"]), SCRIPT, IMG, QUOTE)
    TALLY.check(section, "report.summary_html", report.summary_html(report.summarize(df)),
                SCRIPT, IMG)
    TALLY.check(section, "report.report_html",
                report.report_html(df, title=SCRIPT, intro=IMG), SCRIPT, IMG, QUOTE)
    section.assert_goals()


# --- a Comparison and a History against the emulator --------------------------------------


def test_comparison_and_history_reports_escape_prompts_and_errors(
    emulator: EmulatorHandle, tmp_path: Path, section: Section
) -> None:
    comparison = need("genlab.comparison", section)
    report = need("genlab.report", section)
    from genlab.history import History

    history = History(tmp_path / "history.sqlite")
    emulator.faults.update(fail_rate=0.5, seed=3)
    try:
        with genlab.Client(emulator.base_url, KEY, history=history, poll_scale=0.02) as client:
            cmp = comparison.compare(
                client, prompts=[PROMPT, QUOTE], models=["image-d", "image-b"],
                params={"resolution": ["512", SCRIPT]}, progress=False, quiet=True,
                tag=IMG,
            )
    finally:
        emulator.faults.update(fail_rate=0.0)
    statuses = set(cmp.df["status"])
    assert {"invalid"} <= statuses and statuses & {"succeeded", "failed"}, statuses
    TALLY.check(section, "Comparison.gallery()", cmp.gallery().data, SCRIPT, IMG, QUOTE)
    TALLY.check(section, "Comparison._repr_html_()", cmp._repr_html_())
    path = cmp.to_html(tmp_path / "comparison.html", title=SCRIPT)
    TALLY.check(section, "Comparison.to_html()", path.path.read_text(encoding="utf-8"),
                SCRIPT, IMG, QUOTE)
    written = report.write_report(history.df(), tmp_path / "history.html", title=IMG)
    TALLY.check(section, "report of history.df()", written.path.read_text(encoding="utf-8"),
                SCRIPT, IMG, QUOTE)
    history.close()
    section.assert_goals()


# --- the widgets, against a service whose own strings are hostile -------------------------


def hostile_service() -> httpx.MockTransport:
    """A service that answers with HTML/JS in its ids, statuses and error messages."""
    polls: dict[str, int] = {}

    def answer(request: httpx.Request) -> httpx.Response:
        created = "2026-01-01T00:00:00Z"
        if request.method == "POST" and request.url.path.endswith("/generate"):
            body = json.loads(request.content)
            task_id = f"task-{len(polls)}-{IMG}"
            polls[task_id] = 0
            return httpx.Response(200, json={"task_id": task_id, "model": body["model"],
                                             "created_at": created, "request_id": SCRIPT})
        task_id = request.url.path.rsplit("/", 1)[-1]
        polls[task_id] = polls.get(task_id, 0) + 1
        record: dict[str, Any] = {
            "task_id": task_id, "model": "image-d", "created_at": created,
            "completed_at": None, "images": None, "error": None, "request_id": QUOTE,
            "status": f"<b onmouseover=alert(1)>moderating</b>{SCRIPT}",
        }
        if polls[task_id] > 1:
            record |= {"status": "failed", "completed_at": created,
                       "error": {"code": SCRIPT, "message": f"refused: {IMG} {QUOTE}"}}
        return httpx.Response(200, json=record)

    return httpx.MockTransport(answer)


def html_values(widget: Any) -> Iterator[tuple[str, str]]:
    """Every HTML string shown anywhere in a widget tree (name, markup)."""
    import ipywidgets as widgets

    seen: set[int] = set()
    stack = [widget]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, widgets.HTML | widgets.HTMLMath):
            yield type(current).__name__, str(current.value)
        stack.extend(getattr(current, "children", ()) or ())


def test_widgets_escape_prompts_and_service_strings(
    emulator: EmulatorHandle, tmp_path: Path, section: Section
) -> None:
    need("ipywidgets", section)
    widgets_module = need("genlab.widgets", section)
    from genlab.history import History

    history = History(tmp_path / "history.sqlite")
    with genlab.Client("http://hostile.invalid", KEY, transport=hostile_service(),
                       history=history, poll_scale=0.01) as client:
        studio = widgets_module.Studio(client, model="image-d", media_dir=tmp_path / "media")
        studio.set(model="image-d", prompt=PROMPT, resolution="512")
        card = studio.submit()
        assert card.future is not None
        try:
            card.future.result(timeout=WAIT)
        except genlab.GenlabError:
            pass  # the failure is what the card shows
        assert card.wait_done(WAIT) and card.status == "failed", card.status
        studio.history_panel.refresh()
        for name, markup in html_values(studio):
            TALLY.check(section, f"Studio {name}", markup)
        TALLY.check(section, "TaskCard header", card.header.value, SCRIPT, IMG)
        TALLY.check(section, "TaskCard message (service error)", card.message.value,
                    IMG, QUOTE)
        TALLY.check(section, "TaskCard steps (service status)", card.steps.value, SCRIPT)
        TALLY.check(section, "HistoryPanel table", studio.history_panel.markup,
                    SCRIPT, IMG)
    # The compare panel, on the real emulator, with the prompt as the comparison's prompt.
    with genlab.Client(emulator.base_url, KEY, poll_scale=0.02) as client:
        studio = widgets_module.Studio(client, model="image-d", media_dir=tmp_path / "media2")
        studio.set(model="image-d", prompt=PROMPT, resolution="512")
        if studio.compare_panel is not None:
            studio.compare(["image-d", "image-b"]).result(timeout=WAIT)
            TALLY.check(section, "ComparePanel gallery", studio.compare_panel.gallery.value,
                        SCRIPT, IMG)
            TALLY.check(section, "ComparePanel status", studio.compare_panel.status.value)
    history.close()
    section.assert_goals()


def test_the_check_catches_markup_that_was_not_escaped() -> None:
    # The structural check must fail on raw payloads, or the tests above prove nothing.
    for raw in (f"<div>{SCRIPT}</div>", f'<img alt="{IMG}">', f"<span title='{QUOTE}'>x</span>",
                "<b onclick=alert(1)>x</b>"):
        parsed = Parsed()
        parsed.feed(raw)
        assert parsed.unsafe, raw
    escaped = Parsed()
    escaped.feed(f"<div title='{html.escape(QUOTE)}'>{html.escape(PROMPT)}</div>")
    assert not escaped.unsafe and PROMPT in "".join(escaped.text)
