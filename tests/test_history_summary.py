"""One summary: History.summary() is genlab.report.summarize over the same rows, on every kind
of row a history holds (succeeded, failed, uncertain, refused, still sending; priced or not)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import genlab
from genlab import emulator, report
from genlab.client.journal import SubmitEntry
from genlab.history import SUMMARY_COLUMNS, History

KEY = "summary-test-key-91ab"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    """video-a: succeeded, uncertain, refused; image-d: succeeded, failed; image-b: sending."""
    h = History(tmp_path_factory.mktemp("summary") / "history.sqlite")
    with emulator.start(api_key=KEY, time_scale=0.02) as server, genlab.Client(
        server.base_url, KEY, history=h, poll_scale=0.05, wait_timeout=60
    ) as client:
        client.generate(model="video-a", prompt="a fox", duration=2, resolution="480P")
        client.generate(model="image-d", prompt="a kite", resolution="512")
        server.faults.fail_rate = 1.0
        try:
            client.generate(model="image-d", prompt="doomed", resolution="512",
                            raise_on_failure=False)
        finally:
            server.faults.fail_rate = 0.0
        server.faults.drop_rate = 1.0
        try:
            with pytest.raises(genlab.SubmissionUncertainError):
                client.submit(model="video-a", prompt="dropped", duration=2, resolution="480P")
        finally:
            server.faults.drop_rate = 0.0
    refused = SubmitEntry(body={"model": "video-a", "prompt": "too many"}, model="video-a",
                          kind="video", mode="text-to-video", credits=160,
                          submitted_at=datetime.now(UTC), resolution="480P", duration=2)
    h.submit_failed(h.submit_started(refused), "429 RATE_LIMITED: slow down")
    sending = SubmitEntry(body={"model": "image-b", "prompt": "cut off"}, model="image-b",
                          kind="image", mode="text-to-image", credits=None,
                          submitted_at=datetime.now(UTC))
    h.submit_started(sending)  # the process died while sending
    yield h
    h.close()


@pytest.mark.parametrize("by", ["model", ["model", "kind"], "status", "state"])
def test_history_summary_is_the_reports_summarize(history: History, by: str | list[str]) -> None:
    pdt.assert_frame_equal(history.summary(by=by), report.summarize(history.df(), by))


def test_filters_narrow_the_rows_summarized(history: History) -> None:
    pdt.assert_frame_equal(
        history.summary(model="video-a"), report.summarize(history.df(model="video-a"))
    )
    pdt.assert_frame_equal(
        history.summary(by="kind", status="succeeded"),
        report.summarize(history.df(status="succeeded"), by="kind"),
    )


def test_the_summary_has_the_reports_columns_and_counts(history: History) -> None:
    # Before one implementation, History.summary had tasks/succeeded/failed/uncertain/...;
    # the report's columns (its owner) won.
    summary = history.summary()
    assert list(summary.columns) == list(SUMMARY_COLUMNS) == list(report.SUMMARY_COLUMNS)
    assert list(summary.index) == ["video-a", "image-d", "image-b"]  # first appearance
    counts = summary[["runs", "succeeded", "failed", "invalid", "other", "unpriced"]]
    assert counts.loc["video-a"].tolist() == [3, 1, 0, 0, 2, 0]  # uncertain and refused
    assert counts.loc["image-d"].tolist() == [2, 1, 1, 0, 0, 2]
    assert counts.loc["image-b"].tolist() == [1, 0, 0, 0, 1, 1]  # still sending
    assert summary.loc["video-a", "success_rate"] == pytest.approx(1 / 3)
    assert summary.loc["video-a", "credits"] == 160  # only the accepted task was billed
    assert pd.isna(summary.loc["image-d", "credits"]) and pd.isna(summary.loc["image-b", "credits"])


def test_latency_percentiles_count_succeeded_runs_only(history: History) -> None:
    df = history.df(model="image-d")
    failed = df[df["status"] == "failed"]
    succeeded = df[df["status"] == "succeeded"]
    assert failed["total_seconds"].notna().all()  # the failure has a latency, left out
    p50 = history.summary().loc["image-d", "p50_seconds"]
    assert p50 == pytest.approx(succeeded["total_seconds"].iloc[0])
    assert pd.isna(history.summary().loc["image-b", "p50_seconds"])


def test_an_empty_history_summarizes_to_an_empty_table(tmp_path: Path) -> None:
    h = History(tmp_path / "empty.sqlite")
    try:
        summary = h.summary(by=["model", "resolution"])
        assert summary.empty and list(summary.columns) == list(SUMMARY_COLUMNS)
        assert list(summary.index.names) == ["model", "resolution"]
    finally:
        h.close()
