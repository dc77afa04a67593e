"""The thresholds the report's findings are judged by, in one place: the operating point's
verdicts (findings.py) and the load sweep's (sweep_findings.py) apply the same numbers,
and the criteria's words are written from them."""
from __future__ import annotations

CLEAN_FORWARD_MIN = 0.90   # "a typical gap is almost all forward pass": median share at least
TAIL_FORWARD_MAX = 0.50    # "a tail gap is mostly not forward pass": median share at most
MAJORITY = 0.50            # "holds most of the tail": a share above this
COLLAPSE = 0.5             # "collapses": below this fraction of the baseline's
P50_FLAT = (0.8, 1.25)     # "barely moves": a ratio of medians inside this
FALLS = 5                  # "nearly ends": a median count falls at least this many times


def pct(x: float) -> str:
    """A threshold as the criteria's words give it: 0.9 -> '90%'."""
    return f"{100 * x:g}%"
