"""Numbers as the chapters print them in tables and sentences."""
from __future__ import annotations

import pandas as pd


def pct(x) -> str:
    return f"{100 * x:.1f}%"


def ms(x) -> str:
    return f"{x:.1f} ms" if x < 100 else f"{x:.0f} ms"


def span(values, fmt=pct) -> str:
    """'lo-hi' over runs (one value if they agree), 'no runs' for none."""
    values = list(values)
    if not values:
        return "no runs"
    lo, hi = min(values), max(values)
    return fmt(lo) if lo == hi else f"{fmt(lo)}-{fmt(hi)}"


def median_range(values, fmt="{:.0f}") -> str:
    """'median [min-max]' over runs (one number if they agree), '-' for none."""
    v = pd.Series(values, dtype=float).dropna()
    if not len(v):
        return "-"
    med, lo, hi = (fmt.format(x) for x in (v.median(), v.min(), v.max()))
    return med if lo == hi else f"{med} [{lo}-{hi}]"
