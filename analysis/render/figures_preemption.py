"""Figures of the preemption chapter (book/preemption): swap against recompute at the
operating point, across loads, and the KV-demand model beside the runs."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..core.schemes import LABELS
from ..across_runs.rungs import BASELINE
from ..across_runs.tables import METRIC_NAMES
from .figures import stack_shares

MODE_COLOURS = {"swap": "#4C72B0", "recompute": "#C44E52"}
MODE_MARKERS = {"swap": "o", "recompute": "s"}
OP_METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max", "ttft_p50", "ttft_p99")


def _rungs(frame):
    return list(dict.fromkeys(frame["rung"]))


def percentiles_figure(op: pd.DataFrame) -> Figure:
    """ITL and TTFT percentiles at the operating point, every seed a point, per mode; a
    panel per rung (log axis)."""
    rungs = _rungs(op)
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    axes = fig.subplots(1, max(1, len(rungs)), squeeze=False, sharey=True)[0]
    x = np.arange(len(OP_METRICS))
    for ax, rung in zip(axes, rungs):
        for k, (mode, g) in enumerate(op[op["rung"] == rung].groupby("mode", sort=False)):
            dx = (k - 0.5) * 0.25
            for i, m in enumerate(OP_METRICS):
                ax.scatter(np.full(len(g), x[i] + dx), g[m], s=14, color=MODE_COLOURS[mode],
                           marker=MODE_MARKERS[mode], alpha=0.6, label=mode if i == 0 else None)
                ax.hlines(g[m].median(), x[i] + dx - 0.1, x[i] + dx + 0.1, color=MODE_COLOURS[mode])
        ax.set_xticks(x, [METRIC_NAMES[m] for m in OP_METRICS], fontsize=8)
        ax.set_yscale("log")
        ax.set_title(rung, fontsize=10)
    axes[0].set_ylabel("ms (log scale)")
    axes[-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def tail_figure(op: pd.DataFrame) -> Figure:
    """Median share of tail time by label, one stacked bar per rung and mode."""
    med = op.groupby(["rung", "mode"], sort=False)[[f"tail_{lab}" for lab in LABELS]].median()
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.subplots()
    names = [f"{r}\n{m}" for r, m in med.index]
    stack_shares(ax, names, med.set_axis(LABELS, axis=1))
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of tail time")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def wait_paid_figure(op: pd.DataFrame) -> Figure:
    """Seconds per 60 s the victims sat evicted, against what the steps spent on copies
    and on re-prefill, medians per rung and mode (log axis)."""
    cols = {"victim_wait_per_min": ("victims' wait", "#C44E52"),
            "paid_copy_per_min": ("copies (others pay)", "#4C72B0"),
            "paid_reprefill_per_min": ("re-prefill (others pay)", "#55A868")}
    med = op.groupby(["rung", "mode"], sort=False)[list(cols)].median()
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(med))
    for k, (col, (label, colour)) in enumerate(cols.items()):
        ax.bar(x + (k - 1) * 0.27, med[col].clip(lower=1e-4), width=0.27, color=colour, label=label)
    ax.set_xticks(x, [f"{r}\n{m}" for r, m in med.index], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("s per 60 s of arrivals (log scale)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def loads_figure(measured: pd.DataFrame, model: pd.DataFrame, rung: str = BASELINE) -> Figure:
    """Against offered load, for one rung: preemption's share of tail time and preemptions
    per 60 s, measured (points, line through medians) and predicted by the model (dashed)."""
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, (col, label) in zip(axes, (("tail_preempt", "preemption's share of tail time"),
                                       ("preempt_per_min", "preemptions per 60 s"))):
        for mode, colour in MODE_COLOURS.items():
            sel = measured[(measured["rung"] == rung) & (measured["mode"] == mode)]
            if len(sel):
                ax.scatter(sel["load"], sel[col], s=12, color=colour, alpha=0.5)
                med = sel.groupby("load")[col].median()
                ax.plot(med.index, med.values, color=colour, label=f"{mode}, runs")
            pm = model[(model["rung"] == rung) & (model["mode"] == mode)]
            if len(pm):
                med = pm.groupby("load")[col].median()
                ax.plot(med.index, med.values, color=colour, linestyle="--", label=f"{mode}, model")
        if col == "tail_preempt":
            ax.axhline(0.5, color="#333333", linewidth=0.8, linestyle=":")
            ax.set_ylim(0, 1)
        ax.axvline(1.0, color="black", linestyle="--", linewidth=0.8)
        ax.set_xlabel("offered load (x operating point)")
        ax.set_ylabel(label)
        ax.set_title(rung, fontsize=10)
    axes[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def kv_demand_figure(sim, pool: int, rate: float, swell: float, period_s: float) -> Figure:
    """One simulated run: KV blocks held and wanted (held plus what evicted requests need
    back) against time, the pool's size, and the arrival rate's swell."""
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    ax = fig.subplots()
    ax.plot(sim.t, sim.demand, color="#C44E52", linewidth=0.9, label="demand (held + evicted)")
    ax.plot(sim.t, sim.used, color="#4C72B0", linewidth=0.9, label="held")
    ax.axhline(pool, color="black", linewidth=0.8, linestyle="--", label="pool")
    ax.set_xlabel("time since start, s")
    ax.set_ylabel("KV blocks")
    tw = ax.twinx()
    t = np.linspace(0, sim.duration or 1.0, 400)           # arrivals stop at the run's duration
    tw.plot(t, rate * (1 + swell * np.sin(2 * math.pi * t / period_s)), color="#999999", linewidth=0.8,
            label="arrival rate")
    tw.set_ylabel("arrival rate, req/s")
    lines = ax.get_legend_handles_labels()
    more = tw.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="upper left")
    return fig
