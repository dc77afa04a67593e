"""The runs of one rung, from a list of run summaries or a summaries frame."""
from __future__ import annotations

import math

import numpy as np


def runs_of(summaries, rung: str) -> list[dict]:
    """The summaries of one rung's runs, in the order given."""
    return [s for s in summaries if s["rung"] == rung]


def rung_rows(frame, rung: str):
    """The rows of one rung's runs in a summaries frame, by seed."""
    return frame[frame["rung"].astype(str) == rung].sort_values("seed")


def rung_median(runs, rung: str, key: str) -> float:
    """The median of ``key`` over one rung's runs, NaN if it has none: ``runs`` is a
    summaries frame (missing values skipped, as pandas does) or a list of summaries."""
    if hasattr(runs, "columns"):
        if not len(runs):
            return math.nan
        v = rung_rows(runs, rung)[key]
        return float(v.median()) if len(v) else math.nan
    v = [r[key] for r in runs_of(runs, rung)]
    return float(np.median(v)) if v else math.nan


def rung_above(order, rung: str) -> str:
    """The rung before ``rung`` in ``order`` (whose fix ``rung`` adds to)."""
    order = list(order)
    return order[order.index(rung) - 1]
