"""Time covered by disjoint intervals (GC pauses), before a moment or inside windows.

One helper for the GC seconds inside any window, so the decode split, the clock
intervals, the segments' GC-free time and the sixth pile's steps all compute it alike.
"""
from __future__ import annotations

import numpy as np

from .columns import GC


def coverage_s(starts, ends, t) -> np.ndarray:
    """Seconds of the disjoint intervals [starts, ends) that lie before each time t."""
    t = np.asarray(t, dtype=float)
    if len(starts) == 0:
        return np.zeros_like(t)
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    whole = np.concatenate([[0.0], np.cumsum(e - s)])  # whole[k]: length of the first k
    k = np.searchsorted(s, t, side="right") - 1         # last interval started by t
    kk = np.maximum(k, 0)
    part = np.where(k >= 0, np.clip(t - s[kk], 0.0, (e - s)[kk]), 0.0)
    return whole[kk] + part


def gc_within_s(gcs: np.ndarray, a, b) -> np.ndarray:
    """Seconds of GC pauses (rows of a log's gcs) inside each window [a_i, b_i]."""
    return coverage_s(gcs[:, GC.t0], gcs[:, GC.t1], b) - coverage_s(gcs[:, GC.t0], gcs[:, GC.t1], a)
