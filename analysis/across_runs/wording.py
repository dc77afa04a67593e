"""Numbers and labels as the chapters print them in tables and sentences."""
from __future__ import annotations

from typing import NamedTuple

import pandas as pd


class LabelWords(NamedTuple):
    """One label of the partition in each register the pages print it in."""
    column: str           # a table's column or a figure's legend: the forward pass is "fwd", as in the article's tables
    part: str             # a part of one gap (the stall chapter's partition table and figure)
    cause: str | None     # a cause in a sentence (the takeaways)
    stall: str | None     # one of the five stalls (the stall chapter's table of stall kinds)


LABEL_WORDS = {
    "kernel": LabelWords("fwd", "forward pass", None, None),
    "prefill": LabelWords("prefill", "prefill", "prefill", "prefill chunk"),
    "preempt": LabelWords("preempt", "preemption", "preemption", "preemption"),
    "graph": LabelWords("graph", "graph miss", "graph misses", "graph miss"),
    "gc": LabelWords("gc", "GC", "garbage collection", "garbage collection"),
    "tok": LabelWords("tok", "tokenizer", "tokenization", "tokenizer"),
    "residual": LabelWords("residual", "residual", None, None),
}


def label_names(register: str) -> dict[str, str]:
    """label -> its words in one register (a LabelWords field), for the labels that have them."""
    if register not in LabelWords._fields:
        raise ValueError(f"unknown register {register!r}; registers: {', '.join(LabelWords._fields)}")
    return {lab: getattr(w, register) for lab, w in LABEL_WORDS.items() if getattr(w, register) is not None}


def pct(x) -> str:
    return f"{100 * x:.1f}%"


def share_pct(x) -> str:
    """A share, with enough digits that a small one does not print as 0.0%."""
    return pct(x) if x == 0 or abs(x) >= 0.001 else f"{100 * x:.1g}%"


def pct_range(lo, hi, digits=0) -> str:
    """Two fractions as one percent range: (0.67, 0.96) -> '67-96%'."""
    return f"{100 * lo:.{digits}f}-{100 * hi:.{digits}f}%"


def exact_pct(x: float) -> str:
    """A threshold as the criteria's words give it, with the digits it needs: 0.9 -> '90%',
    0.001 -> '0.1%'."""
    return f"{100 * x:g}%"


def sci(x: float) -> str:
    """A tolerance in scientific notation without padding: 1e-9 -> '1e-9'."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


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
