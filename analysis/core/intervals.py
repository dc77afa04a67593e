"""Small interval helpers for the scalar partitioner (plain Python, easy to read)."""
from __future__ import annotations

import bisect
import math
from typing import Iterable


def _finite(x, what: str) -> float:
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{what} is {x}; times must be finite numbers of seconds")
    return x


class DisjointIntervals:
    """Sorted, pairwise-disjoint intervals (e.g. GC pauses) with fast overlap queries.

    Overlapping intervals are refused: their time would be counted twice and the
    parts of a gap would no longer sum to the gap.
    """

    def __init__(self, pairs: Iterable, what: str = "intervals"):
        spans = []
        for n, pair in enumerate(pairs):
            a, b = pair[0], pair[1]
            a, b = _finite(a, f"{what}[{n}] start"), _finite(b, f"{what}[{n}] end")
            if b < a:
                raise ValueError(f"{what}[{n}] ends before it starts ({b} < {a})")
            spans.append((a, b))
        spans.sort()
        for (a0, b0), (a1, b1) in zip(spans, spans[1:]):
            if a1 < b0:
                raise ValueError(f"{what} overlap: [{a0}, {b0}] and [{a1}, {b1}]")
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]

    def __len__(self):
        return len(self.starts)

    def overlap(self, a: float, b: float) -> float:
        """Total length of the intervals inside [a, b] (seconds)."""
        total = 0.0
        i = bisect.bisect_right(self.ends, a)  # first interval that ends after a
        while i < len(self.starts) and self.starts[i] < b:
            lo, hi = max(self.starts[i], a), min(self.ends[i], b)
            if hi > lo:
                total += hi - lo
            i += 1
        return total


def clipped_evictions(t0: float, t1: float, evictions: Iterable) -> list[tuple[float, float]]:
    """The parts of [t0, t1] during which the request was evicted, sorted.

    ``evictions`` holds (evicted, readmitted) pairs; readmitted None (or NaN) means
    the request was still evicted when the log ended.
    """
    spans = []
    for n, (a, b) in enumerate(evictions):
        a = _finite(a, f"evictions[{n}] start")
        b = math.inf if b is None or b != b else _finite(b, f"evictions[{n}] readmission")
        if b < a:
            raise ValueError(f"evictions[{n}]: readmitted before evicted ({b} < {a})")
        spans.append((a, b))
    spans.sort()
    for (a0, b0), (a1, b1) in zip(spans, spans[1:]):
        if a1 < b0:
            raise ValueError(f"evictions overlap: [{a0}, {b0}] and [{a1}, {b1}]")
    return [(max(a, t0), min(b, t1)) for a, b in spans if min(b, t1) > max(a, t0)]


def complement(t0: float, t1: float, holes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """[t0, t1] minus sorted, disjoint holes that lie inside it."""
    out, cursor = [], t0
    for a, b in holes:
        if a > cursor:
            out.append((cursor, a))
        cursor = max(cursor, b)
    if t1 > cursor:
        out.append((cursor, t1))
    return out
