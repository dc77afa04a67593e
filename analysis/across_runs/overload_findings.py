"""The overload sidebar's findings (book/overload), computed from its runs.

The article's reading of its overloaded reruns has two parts, and both are checked
here rather than asserted: the runs were past capacity (queues that did not drain,
offered work above what the engine can serve), and only the last rung, admission
control, moved the tail. "Moved" is the ladder's end-to-end rule: a median p99.9 at
least halved.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine_link import BAND, RUNGS
from . import article as A
from .headline import rate_source
from .load import offered_load
from .rungs import FIRST, LAST
from .select import rung_above, rung_median, rung_rows
from .tables import summaries_frame
from .wording import ms as _ms, span as _span

MOVED = 0.5      # a rung moved the tail when its median p99.9 is at most half the reference


def overload_findings(frame: pd.DataFrame) -> list[dict]:
    """The report's two rows for the sidebar: who holds the tail, and the watermark's effect."""
    frame = summaries_frame(frame)
    b = rung_rows(frame, FIRST)["tail_share_preempt"] if len(frame) else pd.Series(dtype=float)
    m = tail_movers(frame)
    before, after = _p999(frame, rung_above(RUNGS, LAST)), _p999(frame, LAST)
    mids = _span(list(m["middle"].values()), _ms) if m.get("middle") else "none run"
    rows = [
        {"key": "overload_preempt", "claim": "under overload, preemption holds the baseline tail",
         "article": A.MEASURED["overload_preempt"], "criterion": "every overloaded baseline run has preempt > 50%",
         "this build": _span(b), "held": bool(b.min() > 0.5) if len(b) else None, "value": float(b.median())},
        {"key": "overload_watermark", "claim": "under overload, only the watermark changes the tail",
         "article": A.MEASURED["overload_watermark"],
         "criterion": ("watermark rung's median p99.9 below half the rung above's, and no earlier rung's "
                       "below half the baseline's"),
         "this build": f"{_ms(before)} -> {_ms(after)}; rungs between: {mids}",
         "held": (m["last_moved"] and not m["middle_moved"]) if m["complete"] else None,
         "value": after / before},
    ]
    for r in rows:
        r["reason"] = "" if r["held"] is not None else "the overloaded runs lack the rungs it compares"
    return rows


def _p999(frame, rung) -> float:
    return rung_median(frame, rung, "itl_p999")


def past_capacity(summaries, capacity_tokens_per_s: float | None = None,
                  max_ttft_s: float = BAND.max_ttft_p50_s, mean_out: float | None = None) -> pd.DataFrame:
    """Per baseline run: median TTFT (s), whether the queue drained (TTFT p50 at most
    max_ttft_s, the level the article's overloaded runs started at), the offered load
    (load.offered_load: the run's rate x mean output tokens over the capacity this build
    measured; NaN when the capacity is not known, e.g. a rate given by hand), and whether
    the run was past capacity: its queue did not drain. Offered work above capacity alone
    is not enough: a short run can end before the backlog it builds shows in the time to
    first token."""
    frame = summaries_frame(summaries)
    cols = ["seed", "ttft_p50_s", "drained", "offered_load", "past"]
    if not len(frame):
        return pd.DataFrame(columns=cols)
    base = rung_rows(frame, FIRST)
    ttft = base["ttft_p50"].to_numpy(float) / 1e3
    load = np.array([offered_load(r, capacity_tokens_per_s, mean_out) for r in base["rate"].to_numpy(float)])
    drained = ttft <= max_ttft_s
    return pd.DataFrame({"seed": base["seed"].to_numpy(), "ttft_p50_s": ttft, "drained": drained,
                         "offered_load": load, "past": ~drained}, columns=cols)


def seconds_span(values_ms) -> str:
    """A span of times given in ms, each in the unit that shows it ('32-48 ms', '2.1-17.0 s'),
    so a short time never prints as 0.0 s."""
    return _span([v / 1e3 for v in values_ms], _seconds)


def tail_movers(summaries) -> dict:
    """Which rungs moved the tail: the watermark against the rung above it, and every
    rung between the first and the last against the baseline (median p99.9)."""
    frame = summaries_frame(summaries)
    order = list(RUNGS)
    present = set(frame["rung"].astype(str)) if len(frame) else set()
    above = rung_above(order, LAST)
    if not {FIRST, LAST, above} <= present:
        return {"complete": False}
    base = _p999(frame, FIRST)
    middle = {r: _p999(frame, r) for r in order[1:-1] if r in present}
    last, before = _p999(frame, LAST), _p999(frame, above)
    return {"complete": True, "baseline": base, "middle": middle, "above": above, "before": before,
            "last": last, "last_moved": bool(last <= MOVED * before),
            "middle_moved": [r for r, v in middle.items() if v <= MOVED * base]}


def _seconds(x: float) -> str:
    return f"{x:.1f} s" if x >= 1 else f"{1e3 * x:.0f} ms"


def _capacity_clause(cap: pd.DataFrame, max_ttft_s: float) -> str:
    ttft = _span(cap["ttft_p50_s"], _seconds)
    load = cap["offered_load"].dropna()
    loads = f"; offered work {_span(load, lambda x: f'{x:.2f}')} times the measured capacity" if len(load) else ""
    return f"median time to first token {ttft} against the {max_ttft_s:g} s above which the article's queues did not drain{loads}"


def overload_sentence(cap: pd.DataFrame, movers: dict, max_ttft_s: float = BAND.max_ttft_p50_s) -> str:
    """Whether, past capacity, the tail was a capacity problem that only admission control
    fixed: computed from past_capacity() and tail_movers()."""
    if not len(cap):
        return ("This build has no overloaded baseline runs, so whether the tail past capacity is a "
                "capacity problem cannot be said.")
    clause = _capacity_clause(cap, max_ttft_s)
    if not cap["past"].all():
        k = int((~cap["past"]).sum())
        over = bool((cap["offered_load"] > 1.0).any())
        why = (" although they offered more work than the engine can serve: in runs this short the "
               "backlog did not reach the time to first token" if over else "")
        return (f"These runs were not clearly past capacity: {k} of {len(cap)} baseline run(s) kept a "
                f"draining queue ({clause}){why}, so they cannot show how the tail behaves past capacity.")
    head = f"These runs were past capacity ({clause})"
    if not movers.get("complete"):
        return head + ", but the sidebar lacks the rungs needed to say which fix moved the tail."
    mids = _span(list(movers["middle"].values()), _ms) if movers["middle"] else "none run"
    step = f"median p99.9 {_ms(movers['before'])} -> {_ms(movers['last'])} at the watermark"
    if movers["last_moved"] and not movers["middle_moved"]:
        return (f"{head}, and only the last rung moved the tail: {step}, while no earlier rung brought "
                f"it below half the baseline's {_ms(movers['baseline'])} (the rungs between: {mids}). As in "
                f"the article, past capacity the tail comes down to how many requests are let in, and the "
                f"admission watermark is the fix that counts.")
    if not movers["last_moved"]:
        return (f"{head}, but the watermark did not halve the tail ({step}). Unlike the article, "
                f"admission control did not fix the tail past capacity here.")
    return (f"{head}, and the watermark moved the tail ({step}), but it was not alone: "
            f"{', '.join(movers['middle_moved'])} also brought median p99.9 below half the baseline's "
            f"{_ms(movers['baseline'])}. Unlike the article, admission control is not the only rung "
            f"that matters here.")


def rate_sentence(rate: float, base_rate: float, factor: float, source: str) -> str:
    """The sidebar's arrival rate and where it came from (a given rate is not 'calibrated')."""
    return (f"These runs arrive at {rate:.2f} req/s: {factor:.2f} times {rate_source(source)} of "
            f"{base_rate:.2f} req/s, "
            f"the article's ratio of its overloaded rate to its calibrated one "
            f"({A.OVERLOAD_RATE:g} / {A.RATE:g} req/s).")
