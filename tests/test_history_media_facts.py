"""What a history keeps of each result's media: the measured facts and whether they are what
was asked, on SQLite and PostgreSQL, in ``df()``, ``record()``, the lookups reuse makes and the
summaries; and an older history opened by this version keeps its rows and gains the columns.

The journal calls are those the client makes, in its order: submit, accept, status changes,
then ``results_saved`` with the facts measured of the kept files.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlalchemy as sa

from genlab.catalog import content_address, result_of, validate
from genlab.client import Outcome, Task, TaskRecord
from genlab.client._prepare import submit_entry
from genlab.comparison import Comparison
from genlab.comparison._compare import _frame, _row
from genlab.comparison._plan import plan
from genlab.history import History, summarize
from genlab.history._schema import HEAD
from genlab.media import MediaInfo, Result

DAY = datetime(2027, 3, 2, 9, tzinfo=UTC)
ASKED = {"model": "video-a", "prompt": "a kite", "duration": 2, "resolution": "480P"}
AS_ASKED = MediaInfo(kind="video", mime="video/mp4", extension=".mp4", bytes=182_004,
                     width=854, height=480, duration=2.04, fps=24.0, frames=49,
                     video_codec="h264", pix_fmt="yuv420p", bit_depth=8, profile="High")
SHORT = MediaInfo(kind="video", mime="video/mp4", extension=".mp4", bytes=95_310,
                  width=854, height=480, duration=1.0, fps=24.0, frames=24,
                  video_codec="hevc", audio_codec="aac", has_audio=True)
FACTS = ["media_width", "media_height", "media_duration", "media_fps", "media_frames",
         "video_codec", "audio_codec", "has_audio", "media_bytes", "as_asked", "mismatches"]


def judged(media: list[MediaInfo]) -> tuple[str, ...]:
    """How the client judges the kept media against the request (genlab.catalog)."""
    return result_of(TaskRecord(task_id="x", status="succeeded"), ASKED, media=media).mismatches


def column(df: pd.DataFrame, name: str) -> dict[str, Any]:
    """``df[name]`` by task id, as Python values (True, False, pd.NA, ...)."""
    return dict(zip(df["task_id"].tolist(), df[name].tolist(), strict=True))


def run(history: History, task_id: str, body: dict[str, Any], at: datetime,
        kept: list[Path | str] | None = None, media: list[MediaInfo] | None = None) -> None:
    """One task as the client journals it: submitted, accepted, succeeded, kept."""
    request = validate(body)
    made = replace(submit_entry(request), submitted_at=at, address=content_address(request))
    entry_id = history.submit_started(made)
    history.submit_accepted(entry_id, Task(task_id=task_id, model=request.model_name,
                                           kind=request.kind))
    media_key = "videos" if request.kind == "video" else "images"
    history.status_changed(TaskRecord.read({
        "task_id": task_id, "status": "succeeded", "model": request.model_name,
        "created_at": at.isoformat(), "completed_at": (at + timedelta(seconds=12)).isoformat(),
        media_key: [{"url": f"https://media.example/{task_id}", "width": 854, "height": 480,
                     "duration": 2.0}],
    }, request.kind))
    if kept is not None:
        if media is None:
            history.results_saved(task_id, kept)  # the form of a journal caller before facts
        else:
            history.results_saved(task_id, kept, media, judged(media))


@pytest.fixture
def history(history_location: str) -> Any:
    opened = History(history_location)
    yield opened
    opened.close()


def test_df_shows_the_first_files_facts_and_whether_it_is_as_asked(
    history: History, tmp_path: Path
) -> None:
    run(history, "t-good", ASKED, DAY, [tmp_path / "t-good.mp4", tmp_path / "t-good.json"],
        [AS_ASKED])
    run(history, "t-short", ASKED, DAY + timedelta(minutes=1), [tmp_path / "t-short.mp4"],
        [SHORT])
    run(history, "t-unmeasured", ASKED, DAY + timedelta(minutes=2), ["s3://bucket/t.mp4"])
    run(history, "t-not-kept", ASKED, DAY + timedelta(minutes=3))

    frame = history.df()
    assert column(frame, "as_asked") == {
        "t-good": True, "t-short": False, "t-unmeasured": pd.NA, "t-not-kept": pd.NA}
    assert column(frame, "has_audio") == {
        "t-good": False, "t-short": True, "t-unmeasured": pd.NA, "t-not-kept": pd.NA}
    df = frame.set_index("task_id")
    assert set(FACTS) <= set(df.columns) and "media_facts" not in df.columns
    assert str(df["as_asked"].dtype) == "boolean" and str(df["has_audio"].dtype) == "boolean"
    assert str(df["media_width"].dtype) == "Int64"
    assert str(df["media_duration"].dtype) == "Float64"
    good, short = df.loc["t-good"], df.loc["t-short"]
    assert (good["media_width"], good["media_height"], good["media_frames"]) == (854, 480, 49)
    assert good["media_duration"] == pytest.approx(2.04) and good["media_fps"] == 24.0
    assert (good["video_codec"], good["media_bytes"]) == ("h264", 182_004)
    assert good["mismatches"] is pd.NA and good["audio_codec"] is pd.NA
    assert (short["video_codec"], short["audio_codec"]) == ("hevc", "aac")
    assert short["mismatches"] == "asked 2 s, got 1.0 s; asked no audio, got an audio track"
    for unknown in ("t-unmeasured", "t-not-kept"):  # never measured: unknown, not False
        assert df.loc[unknown, FACTS].isna().all(), unknown
    # Printed as a notebook shows it: a dash where nothing is known, never <NA>.
    printed = repr(history.df()[["task_id", "as_asked", "mismatches"]])
    assert "<NA>" not in printed and "asked 2 s, got 1.0 s" in printed


def test_a_later_save_without_facts_keeps_the_measured_ones(
    history: History, tmp_path: Path
) -> None:
    run(history, "t-1", ASKED, DAY, [tmp_path / "t-1.mp4"], [SHORT])
    history.results_saved("t-1", ["s3://bucket/t-1.mp4"])  # e.g. client.download again
    row = history.df().iloc[0]
    assert history.df()["as_asked"].tolist() == [False] and row["media_duration"] == 1.0
    assert json.loads(row["paths"]) == [str(tmp_path / "t-1.mp4"), "s3://bucket/t-1.mp4"]
    # New facts replace the old ones (the result kept again and measured again).
    history.results_saved("t-1", [tmp_path / "t-1b.mp4"], [AS_ASKED], ())
    assert history.df()["as_asked"].tolist() == [True]


def test_record_is_a_result_with_the_stored_facts_and_request(
    history: History, tmp_path: Path
) -> None:
    kept = [tmp_path / "t-1.mp4", tmp_path / "t-1.json"]
    run(history, "t-1", ASKED, DAY, kept, [SHORT])
    result = history.record("t-1")
    assert isinstance(result, Result)
    assert result.media == (SHORT,)  # every fact, as measured at keep time: nothing probed
    assert not any(p.exists() for p in kept)  # (the files are not even there)
    assert result.mismatches == ("asked 2 s, got 1.0 s", "asked no audio, got an audio track")
    assert result.as_asked is False
    assert result.prompt == "a kite" and result.credits == 160
    assert result.request is not None and result.request["resolution"] == "480P"
    # The request as validated: what was sent and every default (e.g. generate_audio).
    assert result.request == {**validate(ASKED).model_dump(mode="json", exclude_none=True),
                              "model": "video-a"}
    assert result.request["generate_audio"] is False
    assert result.kept == tuple(str(p) for p in kept)
    assert result.results[0].url == "https://media.example/t-1"
    run(history, "t-2", ASKED, DAY, None)
    unmeasured = history.record("t-2")
    assert unmeasured is not None and unmeasured.media == () and unmeasured.as_asked is None
    assert history.record("t-unknown") is None


def test_record_keeps_the_stored_phrases_when_the_catalog_no_longer_takes_the_request(
    history: History, tmp_path: Path
) -> None:
    run(history, "t-1", ASKED, DAY, [tmp_path / "t-1.mp4"], [SHORT])
    # The body as an older catalog took it: a model since withdrawn.
    history.query("UPDATE tasks SET request = :r WHERE task_id = 't-1'",
                  {"r": json.dumps({**ASKED, "model": "video-retired"})})
    result = history.record("t-1")
    assert result is not None and result.request is not None
    assert result.request["model"] == "video-retired"
    assert result.mismatches == judged([SHORT]) and result.as_asked is False


def test_reuse_lookups_carry_the_facts(history: History, tmp_path: Path) -> None:
    run(history, "t-1", ASKED, DAY, [tmp_path / "t-1.mp4"], [SHORT])
    (found,) = history.find_results(content_address(validate(ASKED)))
    assert found.media == (SHORT,) and found.mismatches == judged([SHORT])
    assert found.as_asked is False


def test_every_files_facts_are_kept_for_a_result_of_several_images(
    history: History, tmp_path: Path
) -> None:
    body = {"model": "image-d", "prompt": "a kite", "resolution": "512"}
    images = [MediaInfo(kind="image", mime="image/png", extension=".png", bytes=40_000 + i,
                        width=512, height=512) for i in range(2)]
    run(history, "t-img", body, DAY, [tmp_path / "a.png", tmp_path / "b.png"])
    request = validate(body)
    phrases = result_of(TaskRecord(task_id="t-img", status="succeeded"), request,
                        media=images).mismatches
    history.results_saved("t-img", [], images, phrases)
    result = history.record("t-img")
    assert result is not None and result.media == tuple(images)
    assert result.mismatches == ("asked 1 image, got 2",) and result.as_asked is False
    row = history.df().iloc[0]
    assert row["media_bytes"] == 40_000 and row["media_width"] == 512  # the first file's
    assert history.df()["has_audio"].tolist() == [False]
    assert row["mismatches"] == "asked 1 image, got 2"


# --- summaries --------------------------------------------------------------------------


def test_history_summary_gives_each_models_share_delivered_as_asked(
    history: History, tmp_path: Path
) -> None:
    image = {"model": "image-d", "prompt": "a kite", "resolution": "512"}
    run(history, "v-1", ASKED, DAY, [tmp_path / "v-1.mp4"], [AS_ASKED])
    run(history, "v-2", ASKED, DAY, [tmp_path / "v-2.mp4"], [SHORT])
    run(history, "v-3", ASKED, DAY, [tmp_path / "v-3.mp4"], [AS_ASKED])
    run(history, "v-4", ASKED, DAY)  # not kept: not counted either way
    run(history, "i-1", image, DAY, ["s3://bucket/i-1.png"])  # kept, never measured
    summary = history.summary()
    assert summary.loc["video-a", "as_asked"] == pytest.approx(2 / 3)
    assert summary.loc["video-a", "runs"] == 4
    assert summary.loc["image-d", "as_asked"] is pd.NA  # nothing known, not 0 %
    shown = summary._repr_html_()
    assert "67%" in shown and "as_asked" in shown
    assert "67%" in repr(summary)


def test_a_table_without_facts_summarizes_with_an_unknown_share() -> None:
    runs = pd.DataFrame({"model": ["video-a"], "status": ["succeeded"], "task_id": ["t1"]})
    assert summarize(runs).loc["video-a", "as_asked"] is pd.NA


def test_comparison_summary_gives_each_models_share_delivered_as_asked() -> None:
    grid = plan(["a kite", "a boat"], ["video-a", "image-d"],
                {"duration": 2, "resolution": ["480P", "512"]})
    rows, records = [], []
    facts = {  # per (prompt, model): the kept media the client measured, None when not kept
        ("a kite", "video-a"): [AS_ASKED], ("a boat", "video-a"): [SHORT],
        ("a kite", "image-d"): None, ("a boat", "image-d"): None,
    }
    for number, one in enumerate(grid.runs, 1):
        outcome = None
        if one.request is not None:
            media = facts[(one.prompt, one.model)]
            record = result_of(
                TaskRecord(task_id=f"t{number}", status="succeeded", model=one.model),
                one.request, media=media, kept=["x.mp4"] if media else ())
            outcome = Outcome(request=one.body, task=Task(task_id=f"t{number}",
                              model=one.model, kind=one.request.kind), record=record)
            records.append(record)
        else:
            records.append(None)
        rows.append(_row(number, one, outcome, None, None))
    cmp = Comparison(_frame(rows, grid.params), grid=grid, records=records)
    done = cmp.df[cmp.df["status"] == "succeeded"].set_index("prompt")
    video = done[done["model"] == "video-a"]
    assert video["as_asked"].to_dict() == {"a kite": True, "a boat": False}
    assert video.loc["a boat", "mismatches"] == "; ".join(judged([SHORT]))
    summary = cmp.summary()
    assert summary.loc["video-a", "as_asked"] == pytest.approx(0.5)
    assert summary.loc["image-d", "as_asked"] is pd.NA


# --- an older history -------------------------------------------------------------------


def test_a_v0003_history_gains_the_columns_and_keeps_its_rows(history_location: str) -> None:
    from alembic import command
    from alembic.config import Config

    from genlab.history._migrate import SCRIPTS

    engine = sa.create_engine(history_location.replace("postgresql://",
                                                       "postgresql+psycopg://", 1)
                              if history_location.startswith("postgresql://")
                              else f"sqlite:///{history_location}")
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    with engine.begin() as connection:  # the schema as genlab 0003 built it, and one run
        config.attributes["connection"] = connection
        command.upgrade(config, "0003")
        connection.execute(sa.text(
            "INSERT INTO tasks (task_id, model, kind, status, state, prompt, credits, "
            "submitted_at, created_at, completed_at, paths, request, entry_id, updated_at) "
            "VALUES ('t-old', 'video-a', 'video', 'succeeded', 'accepted', 'kept', 160, "
            "1700000000, 1700000001, 1700000013, :paths, :request, 'e-old', 1700000013)"),
            {"paths": json.dumps(["/runs/t-old.mp4"]), "request": json.dumps(ASKED)})
        columns = {c["name"] for c in sa.inspect(connection).get_columns("tasks")}
        assert "as_asked" not in columns
    engine.dispose()

    for _ in range(2):  # upgraded once; opening it again changes nothing
        history = History(history_location)
        try:
            assert history.query("SELECT version_num FROM alembic_version") == [
                {"version_num": HEAD}]
            df = history.df()
            assert df["task_id"].tolist() == ["t-old"] and df["prompt"].tolist() == ["kept"]
            assert df["credits"].tolist() == [160] and df["total_seconds"].tolist() == [12.0]
            assert set(FACTS) <= set(df.columns) and df.loc[0, FACTS].isna().all()
            old = history.record("t-old")
            assert old is not None and old.kept == ("/runs/t-old.mp4",)
            assert old.media == () and old.as_asked is None and old.prompt == "a kite"
        finally:
            history.close()
    # New facts land in the upgraded history.
    history = History(history_location)
    try:
        history.results_saved("t-old", [], [AS_ASKED], ())
        assert history.df()["as_asked"].tolist() == [True]
    finally:
        history.close()


def test_a_custom_journal_written_before_facts_is_still_called(tmp_path: Path) -> None:
    from genlab.client.journal import MemoryJournal, record_results

    class Old(MemoryJournal):
        def __init__(self) -> None:
            super().__init__()
            self.saved: list[tuple[str, list[Any]]] = []

        def results_saved(self, task_id: str, paths: Any) -> None:  # type: ignore[override]
            self.saved.append((task_id, list(paths)))

    old = Old()
    record_results(old, "t-1", [tmp_path / "t-1.mp4"], [SHORT], judged([SHORT]))
    assert old.saved == [("t-1", [tmp_path / "t-1.mp4"])]
    history = History(tmp_path / "h.sqlite")
    try:
        run(history, "t-1", ASKED, DAY)
        record_results(history, "t-1", [tmp_path / "t-1.mp4"], [SHORT], judged([SHORT]))
        assert history.df()["as_asked"].tolist() == [False]
    finally:
        history.close()
