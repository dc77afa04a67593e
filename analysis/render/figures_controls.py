"""Figures for book/checking: the CPU hog as the engine saw it, and the scheme comparison."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..core.columns import STEP
from ..core.gaps import as_log
from ..core.threadclocks import step_clock_ms
from ..instrument.control_scores import injections
from ..across_runs.tables import LABEL_NAMES
from .figures import COLOURS, stack_shares


def hog_figure(log_or_path) -> Figure:
    """Per step: wall time, and the part the engine thread spent off the CPU and waiting
    on the run queue, with the hog's window shaded."""
    log = as_log(log_or_path)
    t = log.steps[:, STEP.t0]
    wall, off, wait = step_clock_ms(log)
    off, wait = np.clip(off, 0, None), np.clip(wait, 0, None)
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.add_subplot()
    for _, inj in injections(log).iterrows():
        if inj["kind"] == "hog":
            ax.axvspan(inj["t0"], inj["t1"], color="#F2D7D5", label="hog spinning")
    ax.plot(t, wall, lw=0.8, color="#4C4C4C", label="step wall time")
    ax.plot(t, off, lw=0.8, color=COLOURS["os"], label="thread off the CPU")
    ax.plot(t, wait, lw=0.8, ls="--", color="#C44E52", label="waiting on the run queue")
    ax.set_xlabel("time since engine start (s)")
    ax.set_ylabel("ms per step")
    ax.legend(fontsize=8, ncols=4, loc="upper right")
    return fig


def scheme_tail_figure(table, title: str | None = None) -> Figure:
    """Stacked tail-time shares from tables.scheme_tail_table, one bar per (rung, scheme)."""
    data = table.fillna(0.0) * 100
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(data.shape[1])
    labels = {v: k for k, v in LABEL_NAMES.items()}          # the table names labels as the tables do
    stack_shares(ax, x, data.T.rename(columns=labels))
    ax.set_xticks(x, [f"{r}\n{s}" for r, s in data.columns], fontsize=8)
    ax.set_xlabel("rung and attribution scheme")
    ax.set_ylabel("share of tail time (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8, ncols=5, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    if title:
        ax.set_title(title)
    return fig
