"""genlab.compare: the grid, money first, statuses per cell, and the views a user looks at."""

from __future__ import annotations

import asyncio
import html
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from matplotlib.figure import Figure

import genlab
from genlab import emulator
from genlab.comparison import Comparison, CreditLimitError, plan
from genlab.history import History

KEY = "compare-test-key-123"
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    h = History(tmp_path_factory.mktemp("history") / "history.sqlite")
    yield h
    h.close()


@pytest.fixture(scope="module")
def client(server: emulator.EmulatorHandle, history: History) -> Iterator[genlab.Client]:
    with genlab.Client(
        server.base_url, KEY, history=history, poll_scale=0.02, wait_timeout=60
    ) as c:
        yield c


def billed(server: emulator.EmulatorHandle) -> int:
    return len(server.ledger())


@pytest.fixture(scope="module")
def grid(
    server: emulator.EmulatorHandle, client: genlab.Client, history: History
) -> tuple[Comparison, int]:
    """2 prompts x (video-a, image-d) x resolution [480P, 512]: each model refuses one value."""
    before = billed(server)
    cmp = genlab.compare(
        client,
        prompts=["a red fox in the snow", SCRIPT],
        models=["video-a", "image-d"],
        params={"resolution": ["480P", "512"], "duration": 3},
        history=history,
        tag="grid-1",
        progress=False,
    )
    return cmp, billed(server) - before


def cell(cmp: Comparison, model: str, resolution: str) -> pd.DataFrame:
    df = cmp.df
    return df[(df["model"] == model) & (df["resolution"] == resolution)]


def test_the_grid_has_one_row_per_run_with_its_status(grid: tuple[Comparison, int]) -> None:
    cmp, _ = grid
    assert len(cmp.df) == 2 * 2 * 2
    assert cmp.df["prompt"].tolist().count(SCRIPT) == 4
    assert set(cell(cmp, "video-a", "480P")["status"]) == {"succeeded"}
    assert set(cell(cmp, "image-d", "512")["status"]) == {"succeeded"}
    assert set(cell(cmp, "video-a", "512")["status"]) == {"invalid"}
    assert set(cell(cmp, "image-d", "480P")["status"]) == {"invalid"}
    ok = cmp.df[cmp.df["status"] == "succeeded"]
    assert ok["task_id"].notna().all() and ok["result_url"].notna().all()
    assert (ok["seconds"] > 0).all()
    assert cell(cmp, "video-a", "480P")["width"].tolist() == [854, 854]
    assert cell(cmp, "video-a", "480P")["media_seconds"].tolist() == [3.0, 3.0]
    assert cell(cmp, "image-d", "512")["height"].tolist() == [512, 512]


def test_invalid_runs_carry_the_catalogs_message_and_are_never_billed(
    grid: tuple[Comparison, int],
) -> None:
    cmp, sent = grid
    with pytest.raises(genlab.InvalidParameterError) as refused:
        genlab.validate({"model": "video-a", "prompt": "x", "resolution": "512", "duration": 3})
    invalid = cell(cmp, "video-a", "512")
    assert invalid["error"].tolist() == [refused.value.message] * 2
    assert invalid["task_id"].isna().all() and invalid["credits"].isna().all()
    assert sent == 4  # the ledger saw exactly the valid runs
    assert html.escape(refused.value.message) in cmp.gallery().data


def test_swept_params_are_columns_and_scalars_apply_only_where_a_model_has_the_field(
    grid: tuple[Comparison, int],
) -> None:
    cmp, _ = grid
    assert cmp.swept == ("resolution",)
    assert {"resolution", "duration"} <= set(cmp.df.columns)
    assert cell(cmp, "video-a", "480P")["duration"].tolist() == [3, 3]
    assert cmp.df.loc[cmp.df["model"] == "image-d", "duration"].isna().all()  # no such field


def test_credits_are_estimated_per_run_and_summed_per_model(
    grid: tuple[Comparison, int],
) -> None:
    cmp, _ = grid
    assert cell(cmp, "video-a", "480P")["credits"].tolist() == [240, 240]  # 3 s x 80
    assert cmp.estimate == 480
    summary = cmp.summary()
    assert list(summary.index) == ["video-a", "image-d"]
    video = summary.loc["video-a"]
    assert (video["runs"], video["succeeded"], video["invalid"], video["credits"]) == (4, 2, 2, 480)
    assert video["success_rate"] == 1.0
    assert video["p50_seconds"] <= video["p95_seconds"]
    image = summary.loc["image-d"]
    assert pd.isna(image["credits"]) and image["unpriced"] == 2
    shown = cmp._repr_html_()  # what a cell shows for `cmp`
    assert cmp.money_line in shown and "<th>video-a</th><td>4</td>" in shown


def test_the_gallery_embeds_videos_and_images(grid: tuple[Comparison, int]) -> None:
    cmp, _ = grid
    page = cmp.gallery()
    assert page._repr_html_() == page.data
    assert "<video" in page.data and "data:video/mp4;base64," in page.data
    assert "<img" in page.data and "data:image/" in page.data
    assert "http://127.0.0.1" not in page.data
    assert "resolution=480P" in page.data  # the swept parameter heads its columns


def test_to_html_writes_one_self_contained_escaped_file(
    grid: tuple[Comparison, int], tmp_path: Path
) -> None:
    cmp, _ = grid
    path = cmp.to_html(tmp_path / "report" / "grid.html")
    assert path == tmp_path / "report" / "grid.html"
    assert sorted(p.name for p in path.path.parent.iterdir()) == ["grid.html"]
    text = path.path.read_text(encoding="utf-8")
    assert "http://127.0.0.1" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script>alert(1)" not in text
    assert "data:video/mp4;base64," in text and 'src="data:image/png;base64,' in text
    assert cmp.money_line in text


def test_plot_shows_latency_and_credits(grid: tuple[Comparison, int]) -> None:
    figure = grid[0].plot()
    assert isinstance(figure, Figure) and len(figure.axes) == 2
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["video-a", "image-d"]


def test_runs_are_tagged_in_the_clients_history(
    grid: tuple[Comparison, int], history: History
) -> None:
    cmp, _ = grid
    tagged = history.df(tag="grid-1")
    assert sorted(tagged["task_id"]) == sorted(cmp.df["task_id"].dropna())
    assert set(cmp.df["tag"]) == {"grid-1"}


def test_the_money_line_is_printed(
    server: emulator.EmulatorHandle, client: genlab.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    genlab.compare(
        client,
        "a heron",
        ["video-a", "image-d"],
        {"duration": [2, 3], "resolution": ["480P", "512"]},
        progress=False,
    )
    line = capsys.readouterr().out.strip()
    # video-a: 2 valid (2 s and 3 s at 480P: 160 + 240), 2 invalid; image-d: one run per
    # resolution (it has no duration), 480P refused.
    assert line == (
        "6 runs (3 invalid): 3 to send: 400 credits estimated; 1 run has no published price")


def test_max_credits_refuses_before_anything_is_sent(
    server: emulator.EmulatorHandle, client: genlab.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    before = billed(server)
    with pytest.raises(CreditLimitError, match="raise max_credits") as refused:
        genlab.compare(
            client,
            ["a storm"],
            ["video-a"],
            {"duration": [10, 20], "resolution": "1080P"},
            max_credits=1_000,
        )
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, genlab.GenlabError)
    assert refused.value.estimate == 280 * 30
    assert capsys.readouterr().out.strip() == "2 runs: 8,400 credits estimated"
    assert billed(server) == before


def test_a_grid_with_only_invalid_runs_sends_nothing(
    server: emulator.EmulatorHandle, client: genlab.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    before = billed(server)
    cmp = genlab.compare(client, ["x"], ["video-b"], {"duration": 2}, quiet=True)
    assert cmp.df["status"].tolist() == ["invalid"]
    assert "duration" in cmp.df["error"].iloc[0]
    assert billed(server) == before
    assert capsys.readouterr().out == ""  # quiet: for widgets and worker threads
    assert cmp.money_line == "1 run (1 invalid): nothing to send"


def test_a_grid_without_any_price_says_so_instead_of_zero_credits() -> None:
    from genlab.comparison import plan

    assert plan(["a kite"], ["video-b", "video-c"], {}).money_line == (
        "2 runs: no published price, so no estimate")
    assert plan(["a kite"], ["video-b", "video-d"], {}).money_line == (
        "2 runs (1 invalid): 1 to send, with no published price, so no estimate")


def test_repeats_run_each_combination_again(client: genlab.Client) -> None:
    cmp = genlab.compare(client, "a kite", "image-d", {"resolution": "512"}, repeats=2,
                         progress=False)
    assert cmp.df["repeat"].tolist() == [1, 2]
    assert cmp.df["task_id"].nunique() == 2
    assert "#2" in cmp.gallery().data


def test_failed_tasks_are_reported_in_their_cell(
    server: emulator.EmulatorHandle, client: genlab.Client
) -> None:
    server.faults.fail_rate = 1.0
    try:
        cmp = genlab.compare(client, "doomed", "image-d", {"resolution": "512"}, progress=False)
    finally:
        server.faults.fail_rate = 0.0
    row = cmp.df.iloc[0]
    assert row["status"] == "failed" and row["error"] and pd.notna(row["task_id"])
    assert cmp.summary().loc["image-d", "failed"] == 1
    page = cmp.gallery().data
    assert "failed" in page and html.escape(row["error"]) in page


def test_a_wait_that_runs_out_is_reported_as_timeout(client: genlab.Client) -> None:
    # The deadline is far shorter than any render, so the wait cannot end in success.
    cmp = genlab.compare(client, "slow", "video-a", {"duration": 2, "resolution": "480P"},
                         timeout=0.001, progress=False)
    row = cmp.df.iloc[0]
    assert row["status"] == "timeout" and pd.notna(row["task_id"])
    assert "client.wait(" in row["error"]  # says how to resume
    assert cmp.summary().loc["video-a", "other"] == 1


def test_download_dir_saves_results_and_the_gallery_reads_them(
    client: genlab.Client, history: History, tmp_path: Path
) -> None:
    cmp = genlab.compare(client, "a lantern", "video-a",
                         {"duration": 2, "resolution": "480P"},
                         download_dir=tmp_path, progress=False)
    paths = cmp.df["paths"].iloc[0]
    assert [Path(p).suffix for p in paths] == [".mp4", ".png", ".json"]
    assert all(Path(p).exists() for p in paths)
    recorded = history.df().set_index("task_id").loc[cmp.df["task_id"].iloc[0], "paths"]
    assert Path(paths[0]).name in recorded

    def offline(url: str) -> bytes:
        raise AssertionError(f"fetched {url} although the file is saved")

    assert "data:video/mp4;base64," in cmp.gallery(fetch=offline).data


def test_the_progress_bar_can_be_shown_or_hidden(
    client: genlab.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    genlab.compare(client, "a kite", "image-d", {"resolution": "512"})
    assert "1/1" in capsys.readouterr().err
    genlab.compare(client, "a kite", "image-d", {"resolution": "512"}, progress=False)
    assert capsys.readouterr().err == ""


def test_sweeps_skip_models_without_the_field_and_lists_of_lists_sweep_list_fields() -> None:
    grid = plan(["waves"], ["video-a", "video-b", "image-d"], {"duration": [3, 4]})
    runs = [(r.model, r.values["duration"], r.invalid is None) for r in grid.runs]
    assert runs == [
        ("video-a", 3, True),
        ("video-a", 4, True),
        ("video-b", 3, False),  # video-b starts at 4 s
        ("video-b", 4, True),
        ("image-d", None, True),  # no duration field: one run, not two equal ones
    ]
    frame = [{"url": "https://example.com/a.png", "reference_type": "first_frame"}]
    one = plan("go", "video-a", {"reference_images": frame})
    assert one.swept == () and len(one.runs) == 1
    two = plan("go", "video-a", {"reference_images": [frame, []]})
    assert two.swept == ("reference_images",) and len(two.runs) == 2


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"models": ["video-z"]}, "unknown model"),
        ({"params": {"durration": 5}}, "not a field"),
        ({"params": {"prompt": ["a", "b"]}}, "prompts="),
        ({"params": {"duration": []}}, "nothing to sweep"),
        ({"repeats": 0}, "repeats"),
        ({"prompts": []}, "at least one prompt"),
        ({"concurrency": 0}, "concurrency"),
    ],
)
def test_a_wrong_grid_is_refused_before_anything_runs(
    server: emulator.EmulatorHandle,
    client: genlab.Client,
    arguments: dict[str, Any],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = billed(server)
    options: dict[str, Any] = {"prompts": ["x"], "models": ["video-a"], **arguments}
    with pytest.raises(ValueError, match=message):
        genlab.compare(client, **options)
    assert billed(server) == before and capsys.readouterr().out == ""


def test_history_must_be_the_one_the_client_records_into(
    client: genlab.Client, tmp_path: Path
) -> None:
    other = History(tmp_path / "other.sqlite")
    try:
        with pytest.raises(ValueError, match="Client\\(history=history\\)"):
            genlab.compare(client, "x", "image-d", history=other, tag="t")
    finally:
        other.close()


def test_an_async_client_is_refused(server: emulator.EmulatorHandle) -> None:
    aclient = genlab.AsyncClient(server.base_url, KEY)
    try:
        with pytest.raises(TypeError, match="genlab.Client"):
            genlab.compare(aclient, "x", "image-d")  # type: ignore[arg-type]
    finally:
        asyncio.run(aclient.aclose())


def test_compare_comparison_and_history_are_exported() -> None:
    import genlab.comparison

    assert genlab.compare is genlab.comparison.compare
    assert genlab.Comparison is Comparison
    assert genlab.History is History
    assert {"compare", "Comparison", "History"} <= set(genlab.__all__)


def test_importing_genlab_does_not_import_the_notebook_stack() -> None:
    code = (
        "import genlab, sys; "
        "heavy = [m for m in ('pandas', 'matplotlib', 'tqdm', 'ipywidgets') "
        "if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_media_reach_a_comparison_only_through_its_fetch(grid: tuple[Comparison, int]) -> None:
    cmp, _ = grid
    again = plan(["a red fox in the snow", SCRIPT], ["video-a", "image-d"],
                 {"resolution": ["480P", "512"], "duration": 3})
    # No fetch and no files (kept files would be read from disk): no HTTP of its own.
    bare = Comparison(cmp.df.assign(paths=None), grid=again, records=cmp.records)
    page = bare.gallery().data
    assert "<video" not in page and "<img" not in page
    assert page.count("not saved; pass fetch=client.fetch_media") == 4
