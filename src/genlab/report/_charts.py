"""Charts of a run table: latency and credits per model."""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from genlab.history import summarize

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _label(key: object) -> str:
    """A group key as a tick label: plain text, never mathtext.

    A ``$`` in a tag or prompt would otherwise start a formula (or fail to parse one), so it
    is escaped; matplotlib draws ``\\$`` as a dollar sign.

    Example:
        >>> print(_label(("video-a", "$5 budget")))
        video-a · \\$5 budget
    """
    parts = key if isinstance(key, tuple) else (key,)
    text = " · ".join("–" if pd.isna(p) else str(p) for p in parts)
    return text.replace("$", r"\$")


@functools.cache  # one class, made on first use so that importing genlab.report stays light
def _figure_class() -> type[Figure]:
    from matplotlib.figure import Figure

    class SummaryFigure(Figure):
        """A Figure that notebooks display as a PNG without pyplot or an inline backend."""

        def _repr_png_(self) -> bytes:
            return figure_png(self)

    return SummaryFigure


def _note(ax: Axes, x: float, text: str) -> None:
    ax.annotate(
        text, (x, 0), xytext=(0, 4), textcoords="offset points",
        rotation=90, ha="center", va="bottom", fontsize=8, color="#555",
    )


def plot_summary(df: pd.DataFrame, by: str | Sequence[str] = "model") -> Figure:
    """Two charts side by side: p50/p95 latency per model, and credits per model.

    Works on a Comparison's ``df`` or any History slice. The figure is made without pyplot,
    so it never opens a window, never needs a GUI backend and is not shown twice in a
    notebook; it displays itself as a PNG when a cell returns it, and
    ``fig.savefig("x.png")`` saves it.

    Example:
        fig = plot_summary(history.df(since="2026-11-01"))
        fig.savefig("latency.png")

    Example:
        >>> import pathlib, tempfile, genlab
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> len(plot_summary(history.df()).axes) >= 1
        True
        >>> history.close()
    """
    import numpy as np

    summary = summarize(df, by)
    labels = [_label(k) for k in summary.index]
    x = np.arange(len(labels))
    fig = _figure_class()(figsize=(max(7.0, 2.0 + 1.1 * len(labels)), 3.8), layout="constrained")
    latency, spend = fig.subplots(1, 2)
    group = "model" if by == "model" else "group"

    p50 = summary["p50_seconds"].to_numpy(dtype="float64", na_value=np.nan)
    p95 = summary["p95_seconds"].to_numpy(dtype="float64", na_value=np.nan)
    latency.bar(x - 0.2, np.nan_to_num(p50), 0.4, label="p50", color="#4c72b0")
    latency.bar(x + 0.2, np.nan_to_num(p95), 0.4, label="p95", color="#dd8452")
    for i in np.flatnonzero(np.isnan(p50)):
        _note(latency, x[i], "no successes")
    latency.set_title(f"Latency per {group}, created → completed", fontsize=10)
    latency.set_ylabel("seconds")
    latency.legend(loc="best", fontsize=8)

    credits = summary["credits"].to_numpy(dtype="float64", na_value=np.nan)
    unpriced = summary["unpriced"].to_numpy(dtype="int64")
    spend.bar(x, np.nan_to_num(credits), 0.6, color="#55a868")
    for j in np.flatnonzero(unpriced):
        _note(spend, x[j], f"{unpriced[j]} without a price")
    spend.set_title(f"Credits per {group}, published prices", fontsize=10)
    spend.set_ylabel("credits")

    for ax in (latency, spend):
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        if not labels:
            ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center")
    return fig


def figure_png(fig: Figure, dpi: int = 100) -> bytes:
    """A figure as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def plot_spend(spend_df: pd.DataFrame) -> Figure:
    """Credits per group from ``history.spend(by=...)``: spent, estimated for unpriced runs,
    and saved by reuse, side by side (labels are plain text, never mathtext).

    Example:
        fig = plot_spend(history.spend(by="day"))
        fig.savefig("spend.png")

    Example:
        >>> import pathlib, tempfile, genlab
        >>> from genlab.report import spend_of
        >>> history = genlab.History(pathlib.Path(tempfile.mkdtemp()) / "history.sqlite")
        >>> len(plot_spend(spend_of(history.df())).axes) >= 1
        True
        >>> history.close()
    """
    import numpy as np

    key = str(spend_df.columns[0]) if len(spend_df.columns) else "group"
    labels = [_label(k) for k in spend_df[key]] if key in spend_df.columns else []
    x = np.arange(len(labels))
    fig = _figure_class()(figsize=(max(6.0, 2.0 + 0.9 * len(labels)), 3.6), layout="constrained")
    ax = fig.subplots()
    bars = (("credits", "spent", "#55a868", -0.27), ("estimated", "estimated (unpriced)",
            "#dd8452", 0.0), ("credits_saved", "saved by reuse", "#4c72b0", 0.27))
    for column, name, colour, shift in bars:
        if column in spend_df.columns:
            values = spend_df[column].to_numpy(dtype="float64", na_value=np.nan)
            ax.bar(x + shift, np.nan_to_num(values), 0.27, label=name, color=colour)
    if "unpriced" in spend_df.columns:
        unpriced = spend_df["unpriced"].to_numpy(dtype="int64", na_value=0)
        for j in np.flatnonzero(unpriced):
            _note(ax, x[j], f"{unpriced[j]} without a price")
    ax.set_title(f"Credits per {_label(key)}", fontsize=10)
    ax.set_ylabel("credits")
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if labels:
        ax.legend(loc="best", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center")
    return fig
