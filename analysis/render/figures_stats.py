"""Figure for the sample-size view of the paired statistics (signflip.py, built without
pyplot, like figures.py: no global state, renders with Agg anywhere)."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ..across_runs.signflip import ALPHA, min_seeds
from ..across_runs.tables import METRIC_NAMES
from .axes import tidy_log


def seed_interval_figure(view: pd.DataFrame, alpha: float = ALPHA, title: str | None = None) -> Figure:
    """Interval width (hi/lo, log scale) against the number of paired seeds.

    Points: the exact interval over subsets of the seeds that ran (median, bar from
    min to max, labelled with its coverage, which is below 95% for 5 seeds or fewer).
    Dashed: the 95% normal approximation, shrinking like 1/sqrt(n), projected past the
    seeds that ran.  Shaded: sizes at which "established" is unattainable."""
    fig = Figure(figsize=(7, 3.8), layout="constrained")
    ax = fig.add_subplot()
    obs = view[~view["projected"] & view["width_median"].notna()] if "width_median" in view else view.iloc[:0]
    ax.plot(view["seeds"], view["width_normal"], "--", color="grey",
            label="95% normal approx. (~1/sqrt(n); dashed past the seeds run)")
    if len(obs):
        ax.errorbar(obs["seeds"], obs["width_median"],
                    yerr=[obs["width_median"] - obs["width_min"], obs["width_max"] - obs["width_median"]],
                    fmt="o", color="#4C72B0", capsize=3, label="exact interval, subsets of the seeds run")
        for _, r in obs.iterrows():
            ax.annotate(f"{r['level']:.0%}", (r["seeds"], r["width_median"]), textcoords="offset points",
                        xytext=(6, 4), fontsize=8, color="#4C72B0")
    floor = min_seeds(alpha)
    ax.axvspan(view["seeds"].min() - 0.5, floor - 0.5, color="#C44E52", alpha=0.08,
               label=f"'established' unattainable (p floor 2/2^n > {alpha:g})")
    ax.set_yscale("log")
    tidy_log(ax, "y")
    ax.set_xlabel("paired seeds")
    ax.set_ylabel("interval width (hi / lo, fold)")
    metric = METRIC_NAMES.get(view["metric"].iloc[0], view["metric"].iloc[0]) if len(view) else ""
    ax.set_title(title or f"{metric}, {view['step'].iloc[0] if len(view) else ''}", fontsize=10)
    ax.legend(fontsize=8)
    return fig
