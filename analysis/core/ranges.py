"""Many index ranges at once, laid end to end (numpy, no loop over ranges)."""
from __future__ import annotations

import numpy as np


def concat_ranges(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """(positions, range) of ``lo[i], lo[i] + 1, ..., hi[i] - 1`` for every i in turn:
    ``positions`` the indices themselves, ``range`` the i each one came from. A range
    with ``hi <= lo`` contributes nothing.

    Both come out of a running sum of steps (1 within a range, a jump at the start of
    the next), so the only arrays as long as the output are the two results.
    """
    lo, hi = np.asarray(lo, dtype=np.intp), np.asarray(hi, dtype=np.intp)
    keep = np.flatnonzero(hi > lo)
    lo, hi = lo[keep], hi[keep]
    counts = hi - lo
    first = np.cumsum(counts) - counts            # where each range starts in the output
    total = int(counts.sum())
    positions = np.ones(total, dtype=np.intp)
    which = np.zeros(total, dtype=np.intp)
    if total:
        positions[first] = lo - np.concatenate([[1], hi[:-1]]) + 1
        positions[0] = lo[0]
        which[first] = np.diff(keep, prepend=0)
        np.cumsum(positions, out=positions)
        np.cumsum(which, out=which)
    return positions, which


def run_starts(values: np.ndarray) -> np.ndarray:
    """True where a value differs from the one before it (and at the first): the start
    of each run of equal values in a sorted array."""
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return new
