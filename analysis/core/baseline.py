"""The captured-path baseline and the graph-miss share of an eager decode step.

An eager (per-sequence) decode step is slower than a captured one of the same size;
the difference is the graph miss.  The baseline is a least-squares line of GC-free
decode time against padded batch size, fit on captured-path steps only.  An eager
step's *excess share* is the part of its GC-free decode time above the baseline at
its real batch size.  GC must be out of both sides of that comparison: leaving it
in the step total was the first version's second bug (see first_version.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Baseline:
    """Predicted GC-free decode time (ms) of a captured step: slope * size + intercept."""

    slope: float
    intercept: float

    def ms_at(self, batch):
        return self.slope * batch + self.intercept


def as_baseline(value: Any) -> Baseline | None:
    """Accept a Baseline, a ``(slope, intercept)`` pair (np.polyfit's order) or None."""
    if value is None or isinstance(value, Baseline):
        return value
    try:
        slope, intercept = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"baseline must be a Baseline, None or a (slope, intercept) "
                         f"pair of numbers, got {value!r}") from None
    return Baseline(slope, intercept)


def fit_baseline(padded_sizes, decode_ms) -> Baseline | None:
    """Least-squares line through (padded size, GC-free decode ms) of captured steps.

    With no captured step there is nothing to compare an eager step against, so no
    baseline (and no graph-miss time); with a single size the line is flat.
    """
    x = np.asarray(padded_sizes, dtype=float)
    y = np.asarray(decode_ms, dtype=float)
    if x.size == 0:
        return None
    if x.min() == x.max():          # one size (not np.unique: it imports numpy.ma, 20 ms cold)
        return Baseline(0.0, float(y.mean()))
    slope, intercept = np.polyfit(x, y, 1)
    return Baseline(float(slope), float(intercept))


def excess_share(step_ms, baseline_ms):
    """Fraction of an eager step's decode time that is graph-miss excess.

    ``max(0, step - baseline) / step``, 0 for an empty step.  Also capped at 1: a
    baseline line that dips below zero would otherwise make the forward-pass part
    negative (never the case on the article's logs, where the cap is inactive).
    Works on scalars and arrays alike.
    """
    step_ms = np.asarray(step_ms, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.maximum(0.0, step_ms - baseline_ms) / step_ms
    f = np.where(step_ms > 0, np.minimum(f, 1.0), 0.0)
    return f if f.ndim else float(f)
