"""Figures of the load sweep (book/regimes): the anatomy, the percentiles and the
signature against offered load, one panel per forward (and rung). Each marks this
build's operating point (load 1) and the loads at which this build's baseline
signature lies inside the article's band (the article's operating point, by its
signature)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..core.schemes import LABELS
from ..engine_link import BAND, FORWARDS
from ..across_runs.rungs import ADMIT_WATERMARK, BASELINE
from ..across_runs.tables import LABEL_NAMES, METRIC_NAMES
from .figures import COLOURS
from .axes import tidy_log

FORWARD_NAMES = {"article": "article forward", "fast": "fast forward"}
METRIC_COLOURS = {"itl_p50": "#4C72B0", "itl_p99": "#DD8452", "itl_p999": "#C44E52", "itl_max": "#333333"}


def article_span(frame: pd.DataFrame, forward: str) -> tuple[float, float] | None:
    """The loads whose median baseline preemptions per 60 s lie inside the article's band."""
    sel = frame[(frame["forward"] == forward) & (frame["rung"] == BASELINE)]
    med = sel.groupby("load")["preempt_per_min"].median()
    inside = med[(med >= BAND.low) & (med <= BAND.high)]
    return (float(inside.index.min()), float(inside.index.max())) if len(inside) else None


def _mark(ax, frame, forward):
    ax.axvline(1.0, color="black", linestyle="--", linewidth=0.8, label="this build's operating point")
    span = article_span(frame, forward)
    if span:
        lo, hi = span
        pad = 0.02
        ax.axvspan(lo - pad, hi + pad, color="#F2C14E", alpha=0.25, label="article's band (preemptions)")


def _panels(frame, rows):
    forwards = [f for f in FORWARDS if f in set(frame["forward"])]
    fig = Figure(figsize=(9, 3.4 * len(rows)), layout="constrained")
    axes = fig.subplots(len(rows), len(forwards), squeeze=False, sharex=True)
    return fig, axes, forwards


def anatomy_figure(frame: pd.DataFrame) -> Figure:
    """Median tail-time share by label against load, stacked; a panel per forward and rung."""
    rungs = [r for r in (BASELINE, ADMIT_WATERMARK) if r in set(frame["rung"])]
    fig, axes, forwards = _panels(frame, rungs)
    for i, rung in enumerate(rungs):
        for j, fwd in enumerate(forwards):
            ax = axes[i][j]
            sel = frame[(frame["forward"] == fwd) & (frame["rung"] == rung)]
            med = sel.groupby("load")[[f"tail_{lab}" for lab in LABELS]].median().sort_index()
            ax.stackplot(med.index, *[med[f"tail_{lab}"] for lab in LABELS],
                         colors=[COLOURS[lab] for lab in LABELS], labels=[LABEL_NAMES.get(lab, lab) for lab in LABELS])
            _mark(ax, frame, fwd)
            ax.set_ylim(0, 1)
            ax.set_title(f"{FORWARD_NAMES[fwd]}, {rung}", fontsize=10)
            ax.set_ylabel("share of tail time")
            ax.set_xlabel("offered load (x operating point)")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def percentiles_figure(frame: pd.DataFrame, rung: str = BASELINE) -> Figure:
    """p50, p99, p99.9 and max ITL against load (log axis): every seed's point, and a
    line through the medians; a panel per forward."""
    fig, axes, forwards = _panels(frame, [rung])
    for j, fwd in enumerate(forwards):
        ax = axes[0][j]
        sel = frame[(frame["forward"] == fwd) & (frame["rung"] == rung)]
        for m in METRIC_COLOURS:
            ax.scatter(sel["load"], sel[m], s=12, color=METRIC_COLOURS[m], alpha=0.6)
            med = sel.groupby("load")[m].median().sort_index()
            ax.plot(med.index, med.values, color=METRIC_COLOURS[m], label=METRIC_NAMES.get(m, m))
        _mark(ax, frame, fwd)
        ax.set_yscale("log")
        tidy_log(ax, "y")
        ax.set_title(f"{FORWARD_NAMES[fwd]}, {rung}", fontsize=10)
        ax.set_ylabel("ITL, ms (log scale)")
        ax.set_xlabel("offered load (x operating point)")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def signature_figure(frame: pd.DataFrame, drain: dict[str, float] | None = None) -> Figure:
    """Preemptions per 60 s and TTFT p50 (log axis) against load, per forward and rung;
    the article's band of preemptions shaded, and the first load whose queue did not
    drain marked."""
    fig, axes, forwards = _panels(frame, ["preempt_per_min", "ttft_p50"])
    styles = {BASELINE: "-", ADMIT_WATERMARK: ":"}
    for j, fwd in enumerate(forwards):
        for i, (col, label) in enumerate((("preempt_per_min", "preemptions per 60 s"),
                                          ("ttft_p50", "TTFT p50, ms (log scale)"))):
            ax = axes[i][j]
            for rung, ls in styles.items():
                sel = frame[(frame["forward"] == fwd) & (frame["rung"] == rung)]
                if sel.empty:
                    continue
                ax.scatter(sel["load"], sel[col].clip(lower=1e-3), s=10, color="#555555", alpha=0.5)
                med = sel.groupby("load")[col].median().sort_index()
                ax.plot(med.index, med.clip(lower=1e-3).values, linestyle=ls, color="#333333", label=rung)
            if col == "preempt_per_min":
                ax.axhspan(BAND.low, BAND.high, color="#F2C14E", alpha=0.25, label="article's band")
            else:
                ax.set_yscale("log")
                ax.axhline(BAND.max_ttft_p50_s * 1e3, color="#C44E52", linewidth=0.8,
                           label="queue no longer drains")
                tidy_log(ax, "y")
            lim = (drain or {}).get(fwd, np.nan)
            if lim == lim:
                ax.axvline(lim, color="#C44E52", linestyle="--", linewidth=0.8)
            ax.axvline(1.0, color="black", linestyle="--", linewidth=0.8)
            ax.set_title(f"{FORWARD_NAMES[fwd]}", fontsize=10)
            ax.set_ylabel(label)
            ax.set_xlabel("offered load (x operating point)")
    for row in axes:
        row[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig
