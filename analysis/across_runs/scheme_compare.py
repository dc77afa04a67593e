"""The article's attribution scheme beside the refined one, where the main chapters
show tail shares, and the caveat they carry, with its size measured on their runs.

book/checking found two blind spots in the article's tags: the KV slot every decode
reserves each step is charged to preemption even when nobody is evicted, and time the
engine thread spent off the CPU stays in whatever label it fell in, mostly the forward
pass. The refined scheme (analysis/core/schemes.py) moves the first to `sched` and the
second to `os`; the difference between the two schemes on the same runs is the size
of each blind spot there.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from .tables import scheme_tail_table
from .wording import pct

SCHEMES = ("article", "refined")
SMALL = 0.005          # below half a point of tail time a correction is called negligible


def scheme_side_by_side(article_runs, refined_runs, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Median share of tail time by label, one row per (rung, scheme), one column per
    label (the article's labels first, then the refined scheme's own; a label a scheme
    does not have is NaN)."""
    table = scheme_tail_table({"article": article_runs, "refined": refined_runs}, order=order)
    out = table.T
    out.index = out.index.set_names(["rung", "scheme"])
    return out


def _get(side: pd.DataFrame, rung: str, scheme: str, label: str) -> float:
    v = side.loc[(rung, scheme)].get(label, float("nan"))
    return 0.0 if v != v and scheme == "refined" and label in ("os", "sched") else float(v)


def scheme_caveat(side: pd.DataFrame, rung: str, small: float = SMALL) -> str:
    """The two blind spots' measured sizes at `rung` (median share of tail time)."""
    if (rung, "article") not in side.index or (rung, "refined") not in side.index:
        return f"The two schemes were not both computed for {rung}, so the caveat's size is not measured."
    pa, pr = _get(side, rung, "article", "preempt"), _get(side, rung, "refined", "preempt")
    fa, fr = _get(side, rung, "article", "fwd"), _get(side, rung, "refined", "fwd")
    os_, sched = _get(side, rung, "refined", "os"), _get(side, rung, "refined", "sched")
    where = f"At {rung} (median share of tail time over runs)"
    if pa - pr >= small:
        pre = (f"preemption is {pct(pa)} under the article's scheme and {pct(pr)} under the refined "
               f"one: {pct(pa - pr)} of tail time was KV reservation or swap-in work that evicted or "
               f"readmitted nobody (or time off the CPU inside it), charged as preemption")
    else:
        pre = (f"preemption barely changes ({pct(pa)} under the article's scheme, {pct(pr)} under the "
               f"refined one): reservation work that evicted nobody is a negligible part of it here")
    if os_ >= small:
        off = (f"time the engine thread spent off the CPU (os) is {pct(os_)} of tail time, and the "
               f"forward pass goes from {pct(fa)} to {pct(fr)}")
        if fa - fr >= os_ / 2:
            off += ", so most of that time had been counted as forward pass"
    else:
        off = (f"time off the CPU (os) is only {pct(os_)} of tail time, and the forward pass goes from "
               f"{pct(fa)} to {pct(fr)}")
    return f"{where}, {pre}; {off}. Scheduler bookkeeping (sched) takes {pct(sched)} in all."
