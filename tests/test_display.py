"""What genlab shows: every card escapes what came from a person or a service, colours follow
JupyterLab's light and dark themes (with fallbacks elsewhere), and one sniffer tells what a
media file is, for downloads and for what is embedded alike."""

from __future__ import annotations

import html.parser
import re
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from genlab import display, report
from genlab.client import Outcome, ReusedRecord, Task
from genlab.client._media import extension_for
from genlab.client.journal import Reused, SubmitEntry
from genlab.history import DisplayFrame, History
from genlab.media import SNIFF_BYTES, Result, sniff
from genlab.media.card import MEDIA_CSS
from genlab.report import summary_html

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
QUOTE = "' onmouseover='alert(1)"
HOSTILE = f"{SCRIPT}{IMG}{QUOTE}"


class Parsed(html.parser.HTMLParser):
    """Elements and attributes as a browser would build them, and the text it would show."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.unsafe: list[str] = []
        self.text: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # A card's own images are the media it was given (a service link, a data URI);
        # any other image is one the payload made.
        source = dict(attrs).get("src") or ""
        if tag == "script" or (tag == "img" and not source.startswith(("https://x/", "data:"))):
            self.unsafe.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.unsafe.append(f"<{tag} {name}>")
            if value is not None:
                self.text.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def assert_shown_as_text(markup: str, *payloads: str) -> None:
    parsed = Parsed(markup)
    assert parsed.unsafe == [], markup
    shown = "".join(parsed.text)
    for payload in payloads:
        assert payload in shown, (payload, markup)


# --- escaping, card by card -----------------------------------------------------------------


def _record(**fields: object) -> Result:
    return Result.model_validate({"task_id": "t1", "status": "succeeded", **fields})


CARDS = {
    "Task": lambda: Task(task_id=HOSTILE, model=HOSTILE)._repr_html_(),
    "Result, succeeded": lambda: _record(
        task_id=HOSTILE, model=HOSTILE, images=[{"url": "https://x/a.png"}],
        request={"model": HOSTILE, "prompt": HOSTILE, "style": HOSTILE}, note=HOSTILE,
        mismatches=(HOSTILE,),
    )._repr_html_(),
    "Result, not kept: the service's links": lambda: _record(
        model="video-b", videos=[{"url": f"https://x/v.mp4?sig={HOSTILE}",
                                  "cover_url": f"https://x/c.png?{HOSTILE}",
                                  "last_frame_url": f"https://x/{HOSTILE}.png"}],
        adjusted=(HOSTILE,),
    )._repr_html_(),
    "Result, failed": lambda: _record(
        task_id=HOSTILE, status="failed", model=HOSTILE,
        error={"code": HOSTILE, "message": HOSTILE},
    )._repr_html_(),
    "Result, unknown status": lambda: _record(status=HOSTILE)._repr_html_(),
    "Outcome, refused": lambda: Outcome(  # a repr, cut short: the payloads are shorter
        request={"model": IMG}, error=ValueError(SCRIPT)
    )._repr_html_(),
    "ReusedRecord": lambda: ReusedRecord.model_validate({
        **_record(model=HOSTILE).model_dump(),
        "reused": Reused(HOSTILE, datetime(2026, 5, 1, tzinfo=UTC), 800),
    })._repr_html_(),
    "display.card": lambda: display.card(HOSTILE, HOSTILE, [HOSTILE], HOSTILE),
    "display.badge": lambda: display.badge(HOSTILE) + display.status_badge(HOSTILE),
    "display.text": lambda: display.text(HOSTILE, display.MUTED, cls=HOSTILE),
    "display.lines": lambda: display.lines([HOSTILE, HOSTILE]),
    "display.table": lambda: display.table(
        {"prompt": HOSTILE}, [{"prompt": HOSTILE}], wrapped={"prompt"}
    ),
    "report.summary_html": lambda: summary_html(
        pd.DataFrame({"runs": [1]}, index=pd.Index([HOSTILE], name=HOSTILE))
    ),
}


SHOWN = {"Outcome, refused": (IMG, SCRIPT)}


@pytest.mark.parametrize("name", list(CARDS))
def test_every_card_shows_hostile_text_as_text(name: str) -> None:
    assert_shown_as_text(CARDS[name](), *SHOWN.get(name, (HOSTILE,)))


def test_the_history_card_and_table_escape_prompts_errors_and_the_location(
    tmp_path: Path,
) -> None:
    history = History(tmp_path / f"{IMG}.sqlite")
    try:
        entry = history.submit_started(SubmitEntry(
            body={"model": "image-b", "prompt": HOSTILE}, model="image-b", kind="image",
            mode="text-to-image", credits=10, submitted_at=datetime.now(UTC),
        ))
        history.submit_accepted(entry, Task(task_id="t1", model="image-b", kind="image"))
        history.status_changed(_record(
            model="image-b", kind="image", status="failed", error={"code": "E", "message": IMG}
        ))
        assert_shown_as_text(history._repr_html_(), IMG, SCRIPT)
        assert_shown_as_text(history.df()._repr_html_(), HOSTILE, IMG)
    finally:
        history.close()


def test_a_data_frame_in_a_cell_escapes_text_cells_and_labels_but_keeps_number_formats() -> None:
    frame = DisplayFrame(pd.DataFrame(
        {HOSTILE: [HOSTILE, None], "credits": pd.array([800, None], dtype="Int64")},
        index=pd.Index([IMG, "b"]),
    ))
    page = frame._repr_html_()
    assert page is not None
    assert_shown_as_text(page, HOSTILE, IMG)
    assert ">800<" in page and ">–<" in page and "&lt;NA&gt;" not in page


# --- theme -----------------------------------------------------------------------------------

# JupyterLab 4's values for the variables genlab uses (theme-light-extension and
# theme-dark-extension, variables.css). rgba text is blended onto the theme's background.
LIGHT = {
    "ui-font-color1": "rgba(0,0,0,0.87)", "ui-font-color2": "rgba(0,0,0,0.54)",
    "ui-font-color3": "rgba(0,0,0,0.38)", "content-font-color1": "rgba(0,0,0,0.87)",
    "content-link-color": "#0d47a1", "error-color1": "#d32f2f", "border-color2": "#e0e0e0",
    "layout-color1": "#ffffff", "layout-color2": "#eeeeee",
}
DARK = {
    "ui-font-color1": "rgba(255,255,255,0.87)", "ui-font-color2": "rgba(255,255,255,0.54)",
    "ui-font-color3": "rgba(255,255,255,0.38)", "content-font-color1": "rgba(255,255,255,1)",
    "content-link-color": "#64b5f6", "error-color1": "#f44336", "border-color2": "#424242",
    "layout-color1": "#212121", "layout-color2": "#424242",
}
OUTSIDE = "outside JupyterLab"
THEMES = {"light": LIGHT, "dark": DARK, OUTSIDE: {}}
VAR = re.compile(r"^var\(--jp-([a-z0-9-]+), (#[0-9a-f]{6})\)$")
TEXT_COLOURS = ("TEXT", "CONTENT", "MUTED", "LINK", "ERROR")


def _rgb(value: str, under: tuple[float, float, float]) -> tuple[float, float, float]:
    if value.startswith("#"):
        return (int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16))
    r, g, b, a = (float(x) for x in value[5:-1].split(","))
    return (r * a + under[0] * (1 - a), g * a + under[1] * (1 - a), b * a + under[2] * (1 - a))


def _contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    def luminance(rgb: tuple[float, float, float]) -> float:
        c = [x / 255 for x in rgb]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _resolve(
    colour: str, theme: dict[str, str], under: tuple[float, float, float]
) -> tuple[float, float, float]:
    match = VAR.match(colour)
    assert match, colour
    return _rgb(theme.get(match[1], match[2]), under)


def test_every_theme_colour_is_a_jupyterlab_variable_with_a_fallback() -> None:
    for name, colour in display.THEME.items():
        match = VAR.match(colour)
        assert match, f"{name} = {colour}"
        assert match[1] in LIGHT and match[1] in DARK, f"{name}: --jp-{match[1]}"


@pytest.mark.parametrize("theme", list(THEMES))
def test_text_reads_on_the_page_in_both_themes_and_outside(theme: str) -> None:
    values = THEMES[theme]
    page = _resolve(display.BACKGROUND, values, (255, 255, 255))
    for name in TEXT_COLOURS:
        shown = _resolve(display.THEME[name], values, page)
        # 4.5:1 for text; JupyterLab's own dark-theme error red gives 4.4:1.
        least = 4.3 if name == "ERROR" else 4.5
        assert _contrast(shown, page) >= least, f"{name} on the {theme} page"
    faint = _resolve(display.FAINT, values, page)
    assert _contrast(faint, page) >= 2.0, f"FAINT on the {theme} page"  # a dash, not text


def test_badges_read_on_any_page() -> None:
    white = (255.0, 255.0, 255.0)
    assert display.ON_BADGE == "white"
    for name, colour in display.BADGES.items():
        assert _contrast(white, _rgb(colour, white)) >= 4.5, name
    assert set(display.STATUS_COLOURS.values()) <= set(display.BADGES.values())


COLOURED = re.compile(
    r"(?<![-\w])(?:color|background|border(?:-top|-bottom|-left|-right)?):\s*"
    r"(?:\d+px solid\s+)?([^;'\"]+)"
)


def test_cards_and_tables_take_every_colour_from_the_theme() -> None:
    colours = {*display.THEME.values(), *display.BADGES.values(), display.ON_BADGE}
    checked = 0
    for name, card in CARDS.items():
        page = card().replace(MEDIA_CSS, "")  # the tiles' stylesheet: checked below
        for colour in COLOURED.findall(page):
            assert colour.strip() in colours, (name, colour, page)
            checked += 1
    assert checked >= 20  # the pattern does find the cards' colours
    # A video's letterbox is black in either theme; every other colour of the tiles is one.
    tiles = [c.strip() for c in COLOURED.findall(MEDIA_CSS)]
    assert tiles.count("#000") == 1 and set(tiles) - {"#000", "none"} <= colours


# --- the one sniffer -------------------------------------------------------------------------

SNIFFED = [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png", ".png"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg", ".jpg"),
    (b"GIF87a\x01\x00\x01\x00", "image/gif", ".gif"),
    (b"GIF89a\x01\x00\x01\x00", "image/gif", ".gif"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp", ".webp"),
    (b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00", "video/mp4", ".mp4"),
    (b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00", "video/mp4", ".mp4"),
    (b"\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00", "video/quicktime", ".mov"),
    # QuickTime without ftyp: the first box is the movie, its data, or padding.
    (b"\x00\x00\x6c\x5bmoov\x00\x00\x00\x6cmvhd", "video/quicktime", ".mov"),
    (b"\x00\x01\x00\x00mdat\x00\x00\x00\x00", "video/quicktime", ".mov"),
    (b"\x00\x00\x00\x08wide\x00\x01\x00\x00", "video/quicktime", ".mov"),
    (b"\x00\x00\x00\x08free\x00\x00\x00\x00", "video/quicktime", ".mov"),
    (b"\x00\x00\x00\x08skip\x00\x00\x00\x00", "video/quicktime", ".mov"),
    (b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01", "video/webm", ".webm"),
    (b"<!DOCTYPE html><html>", None, None),
    (b"RIFF\x24\x00\x00\x00WAVEfmt ", "audio/wav", ".wav"),
    (b"\x00\x00\x00\x08junk\x00\x00\x00\x00", None, None),
    (b"GIF8", None, None),
    (b"", None, None),
]


@pytest.mark.parametrize(("head", "mime", "extension"), SNIFFED)
def test_one_sniffer_names_every_format_by_type_and_extension(
    head: bytes, mime: str | None, extension: str | None
) -> None:
    found = sniff(head[:SNIFF_BYTES])  # the bytes a download keeps are enough
    assert (found or (None, None)) == (mime, extension)


@pytest.mark.parametrize(("head", "mime", "extension"), SNIFFED)
def test_downloads_name_files_by_the_same_sniffer(
    head: bytes, mime: str | None, extension: str | None
) -> None:
    # A CDN that says only "application/octet-stream", at a URL without a suffix.
    named = extension_for("application/octet-stream", "https://cdn.example/o/abc", ".bin", head)
    assert named == (extension or ".bin")


def test_reports_embed_quicktime_without_ftyp_as_a_video(tmp_path: Path) -> None:
    # Not decodable, so the original is embedded, as the QuickTime it is (it used to be
    # "media in an unrecognised format" here while downloads called it .mov).
    movie = tmp_path / "t1.mov"
    movie.write_bytes(b"\x00\x00\x00\x08wide\x00\x00\x00\x10mdat" + bytes(64))
    shown = report.embed_file(movie)
    assert shown.tag == "video" and shown.uri.startswith("data:video/quicktime;base64,")
