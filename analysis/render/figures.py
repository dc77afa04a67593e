"""Matplotlib figures for the book.  Every function returns a Figure built without
pyplot (no global state; renders with Agg anywhere), so notebooks stay thin."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..core.schemes import CAUSES, CLEAN, LABELS
from ..across_runs.tables import LADDER_METRICS, LABEL_NAMES, METRIC_NAMES, ladder_table, tail_share_table
from .axes import tidy_log

# One colour per label, used by every figure (clean = a gap with no primary cause).
COLOURS = {
    "prefill": "#4C72B0",
    "preempt": "#C44E52",
    "graph": "#DD8452",
    "gc": "#8172B3",
    "tok": "#55A868",
    "kernel": "#B0B0B0",
    "residual": "#E5D8BD",
    "os": "#937860",
    "sched": "#8C8C8C",
    CLEAN: "#D9D9D9",
}
HIST_ORDER = [CLEAN] + CAUSES  # stacking order: the bulk at the bottom


def stack_shares(ax, x, shares: pd.DataFrame) -> None:
    """Stacked bars at positions ``x``, one bar per row of ``shares`` and one layer per
    column (a label, stacked in column order), each label in its colour (grey without one)
    and named as the tables name it."""
    bottom = np.zeros(len(shares))
    for lab in shares.columns:
        height = shares[lab].to_numpy(dtype=float)
        ax.bar(x, height, bottom=bottom, color=COLOURS.get(lab, "#CCCCCC"), label=LABEL_NAMES.get(lab, lab))
        bottom += height


def cause_histogram_figure(data, bins: int | Sequence[float] = 60, log_counts: bool = True,
                           title: str | None = None) -> Figure:
    """Stacked histogram of gaps by primary cause on a log ITL axis.

    ``data``: partition_run's frame (fine log-spaced bins) or a summary dict (the
    article's coarse bins, from its ``hist``)."""
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.add_subplot()
    if isinstance(data, pd.DataFrame):
        gap = data["gap_ms"].to_numpy()
        if np.isscalar(bins):
            lo = max(gap[gap > 0].min(), 1e-3)
            bins = np.geomspace(lo, gap.max() * 1.0001, int(bins) + 1)
        cause = data["cause"].astype(str).to_numpy()
        ax.hist([gap[cause == c] for c in HIST_ORDER], bins=bins, stacked=True,
                color=[COLOURS[c] for c in HIST_ORDER], label=HIST_ORDER)
    else:
        rows = data["hist"]
        top = max(data.get("itl_max", 800) * 1.2, 1600)
        left = np.array([max(r["lo"], 1.0) for r in rows], float)  # log axis: 0-5 drawn from 1 ms
        right = np.array([min(r["hi"], top) for r in rows], float)
        bottom = np.zeros(len(rows))
        for c in HIST_ORDER:
            h = np.array([r[c] for r in rows], float)
            ax.bar(left, h, width=right - left, bottom=bottom, align="edge",
                   color=COLOURS[c], label=c, edgecolor="white", linewidth=0.5)
            bottom += h
    ax.set_xscale("log")
    tidy_log(ax, "x")
    if log_counts:
        ax.set_yscale("log")
    ax.set_xlabel("inter-token gap (ms)")
    ax.set_ylabel("gaps")
    ax.legend(title="primary cause", fontsize=8, ncols=2)
    if title:
        ax.set_title(title)
    return fig


def ladder_figure(summaries, metrics: Sequence[str] = LADDER_METRICS,
                  order: Sequence[str] | None = None, title: str | None = None) -> Figure:
    """ITL percentiles per rung: median across runs, with the min-max band."""
    table = ladder_table(summaries, metrics, order)
    x = np.arange(len(table))
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for m in metrics:
        line, = ax.plot(x, table[(m, "median")], marker="o", label=METRIC_NAMES.get(m, m))
        ax.fill_between(x, table[(m, "min")], table[(m, "max")], color=line.get_color(), alpha=0.18)
    ax.set_yscale("log")
    tidy_log(ax, "y")
    ax.set_xticks(x, [str(r) for r in table.index], rotation=25, ha="right")
    ax.set_xlabel("rung of the fix ladder")
    ax.set_ylabel("inter-token latency (ms)")
    ax.legend(title="median [min-max] across runs", fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    if title:
        ax.set_title(title)
    return fig


def tail_composition_figure(summaries, order: Sequence[str] | None = None,
                            which: str = "tail_share", title: str | None = None) -> Figure:
    """Median share of tail time by label, per rung, as stacked bars (percent).
    Medians are taken label by label, so a bar need not reach exactly 100%."""
    table = tail_share_table(summaries, order, which=which) * 100
    x = np.arange(len(table))
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.add_subplot()
    stack_shares(ax, x, table[LABELS])
    ax.set_xticks(x, [str(r) for r in table.index], rotation=25, ha="right")
    ax.set_xlabel("rung of the fix ladder")
    ax.set_ylabel("share of tail time (%)" if which == "tail_share" else "share of gap time (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    if title:
        ax.set_title(title)
    return fig
