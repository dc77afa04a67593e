"""Axes the figures share: log axes whose tick labels never collide, and a check, for the
tests, that every axis with ticks has a label and no two tick labels overlap.

Matplotlib labels a log axis's minor ticks when it spans less than a decade or two, in
scientific notation ('3x10^-1', '4x10^-1'), and on a short axis they run into each other.
Here only 1, 2 and 5 of each decade are labelled, in plain numbers, and fewer when the
axis spans many decades."""
from __future__ import annotations

import math

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator


def _plain(v, _pos=None) -> str:
    return f"{v:g}"


def tidy_log(ax, which: str = "y") -> None:
    """Call after plotting, on an axis already set to a log scale."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    lo, hi = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
    if decades < 1:      # too short for 1-2-5 to land twice: a few plain, evenly spaced values
        axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
        axis.set_major_formatter(FuncFormatter(_plain))
        axis.set_minor_locator(NullLocator())
        return
    subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0, 3.0) if decades <= 4 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    axis.set_major_formatter(FuncFormatter(_plain))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(1, 10), numticks=12))
    axis.set_minor_formatter(NullFormatter())


def problems(fig) -> list[str]:
    """What a reader would trip over: an axis with tick labels but no label, and tick
    labels that overlap on one axis (drawn first, so the labels are where they print)."""
    if not hasattr(fig.canvas, "get_renderer"):      # a Figure made without pyplot
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for i, ax in enumerate(fig.axes):
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = [t for t in axis.get_ticklabels(which="both") if t.get_visible() and t.get_text()]
            view = sorted(ax.get_xlim() if name == "x" else ax.get_ylim())
            shown = [t for t in labels if view[0] <= (t.get_position()[0 if name == "x" else 1]) <= view[1]]
            if shown and not axis.get_label_text():
                out.append(f"axes {i}: the {name} axis has tick labels but no label")
            boxes = sorted((t.get_window_extent(renderer) for t in shown),
                           key=lambda b: b.x0 if name == "x" else b.y0)
            for a, b in zip(boxes, boxes[1:]):
                if a.overlaps(b):
                    out.append(f"axes {i}: {name} tick labels overlap")
                    break
    return out
