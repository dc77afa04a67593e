"""The real-engine page's own figure: where tail time goes on each engine, side by side.
(Its histogram and ladder are the book's: figures.cause_histogram_figure, ladder_figure.)"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .figures import stack_shares


def tail_sources_figure(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Stacked bars of the median share of tail time (%) by label, one bar per column of
    across_runs.real_findings.tail_table (real engine, this book's engine, the article).
    Medians are taken label by label, so a bar need not reach exactly 100%; a label a
    source does not report (NaN) is drawn as nothing."""
    data = table.fillna(0.0)
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(data.shape[1])
    stack_shares(ax, x, data.T)
    ax.set_xticks(x, [str(c) for c in data.columns])
    ax.set_ylabel("median share of tail time (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    if title:
        ax.set_title(title)
    return fig
