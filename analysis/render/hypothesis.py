"""The stall chapter's working hypothesis, decided by one run's numbers.

The hypothesis: an ordinary gap (no primary cause) is mostly the decode forward pass,
and a gap in the tail (at or above the run's p99) mostly is not. "Mostly" means more
than half (MOST) of the gap (the forward pass's share, or the rest's), by the median over
the gaps of each kind. The chapter glues the clause this returns after the two
medians, so its prose cannot state a verdict the numbers do not give.
"""
from __future__ import annotations

import math

MOST = 0.5   # the clauses below say "half": change them with it


def verdict(fwd_ordinary: float, fwd_tail: float) -> str:
    """A clause completing "so the hypothesis ...", from the median forward-pass share
    of an ordinary gap and of a tail gap (fractions; NaN when a run has none)."""
    if not (math.isfinite(fwd_ordinary) and math.isfinite(fwd_tail)):
        return "cannot be checked on this run, which lacks ordinary or tail gaps to compare"
    ordinary_ok, tail_ok = fwd_ordinary > MOST, fwd_tail < MOST
    if ordinary_ok and tail_ok:
        return "holds on this run"
    if ordinary_ok:
        return "does not hold on this run: the forward pass was at least half of a tail gap too"
    if tail_ok:
        return "does not hold on this run: the forward pass was not most of an ordinary gap"
    return ("does not hold on this run: the forward pass was at most half of an ordinary gap "
            "and at least half of a tail gap")
