"""Sentences the summary leads with, computed from this build's findings and runs.

A headline says what this build found before it says what the article claimed: each
lead-in is the finding's claim with this build's verdict in front, and "count and time
disagree" is measured per run (the cause most tail gaps are charged to, against the
cause that holds the most tail time), not inferred from the prefill count alone.
"""
from __future__ import annotations

import pandas as pd

from ..core.schemes import CAUSES
from . import article as A
from .rungs import FIRST
from .select import rung_rows
from .tables import summaries_frame
from .verdicts import finding_word, lead

def _word(found: pd.DataFrame, key: str) -> str:
    if "verdict" in found.columns:
        return found.loc[key, "verdict"]
    held = found.loc[key, "held"]
    return finding_word(None if held is None or held != held else bool(held))


def lead_in(found: pd.DataFrame, key: str) -> str:
    """'Held here: <claim>.' (or 'Did not hold here' / 'Not testable here'), from the
    findings table's verdict column."""
    return f"{lead(_word(found, key))}: {found.loc[key, 'claim']}."


def group_lead(found: pd.DataFrame, keys) -> str:
    """The lead of a bullet about several findings: one verdict in front when they share
    it, else each finding with its own, so a heading never contradicts its body."""
    words = [_word(found, k) for k in keys]
    claims = [found.loc[k, "claim"] for k in keys]
    if len(set(words)) == 1:
        return f"{lead(words[0])}: " + "; ".join(claims) + "."
    return "Mixed here: " + "; ".join(f"{c} ({w})" for c, w in zip(claims, words)) + "."


def count_time_split(runs, rung: str = FIRST) -> pd.DataFrame:
    """Per run of `rung`: the cause charged with the most tail gaps (by primary cause) and
    the cause holding the most tail time, and whether they differ."""
    frame = summaries_frame(runs)
    frame = rung_rows(frame, rung) if len(frame) else frame
    rows = []
    for _, r in frame.iterrows():
        counts = {c: r.get(f"tail_count_{c}", 0) for c in CAUSES}
        times = {c: r.get(f"tail_share_{c}", 0.0) for c in CAUSES}
        by_count = max(counts, key=counts.get) if any(counts.values()) else None
        by_time = max(times, key=times.get) if any(times.values()) else None
        rows.append({"seed": r["seed"], "most tail gaps": by_count, "most tail time": by_time,
                     "disagree": by_count is not None and by_time is not None and by_count != by_time})
    return pd.DataFrame(rows, columns=["seed", "most tail gaps", "most tail time", "disagree"])


def count_time_sentence(split: pd.DataFrame) -> str:
    """Whether, run by run, the most frequent cause of tail gaps is also the costliest."""
    n = len(split)
    if n == 0:
        return "No baseline runs were found, so count and time cannot be compared."
    k = int(split["disagree"].sum())
    if k == 0:
        return (f"Count and time agreed in all {n} baseline run(s): the cause charged with the most "
                f"tail gaps also held the most tail time.")
    pairs = ", ".join(sorted({f"{a} by count, {b} by time" for a, b, d in
                              zip(split["most tail gaps"], split["most tail time"], split["disagree"]) if d}))
    return (f"Count and time disagreed in {k} of {n} baseline run(s) ({pairs}): the cause behind "
            f"the most tail gaps was not the one holding the most tail time.")


def forward_speedup_sentence(clean_share: float, tail_share: float) -> str:
    """What a faster forward pass would buy, from the measured shares (arithmetic, not a claim)."""
    if clean_share != clean_share or tail_share != tail_share:
        return "Without both shares, what a faster forward pass buys cannot be read off these runs."
    return (f"Read arithmetically: halving the forward pass would shorten a typical gap by about "
            f"{clean_share / 2:.0%} and a tail gap by about {tail_share / 2:.0%}, since that is the part "
            f"of each it occupies here; {'typical' if clean_share > tail_share else 'tail'} gaps gain "
            f"more. The chapter on load and the fast forward measures it instead of assuming it.")


def graph_sentence(found: pd.DataFrame) -> str:
    """Whether graph misses were a body effect rather than a tail one, from both findings."""
    tail, body = found.loc["graph_tail", "held"], found.loc["graph_body", "held"]
    t, b = found.loc["graph_tail", "this build"], found.loc["graph_body", "this build"]
    if tail is None or body is None or tail != tail or body != body:
        reasons = found["reason"] if "reason" in found.columns else {}
        why = next((r for k in ("graph_tail", "graph_body") if isinstance(r := reasons.get(k, ""), str) and r),
                   "too few fallback steps in these runs")
        took = ("Graph misses took no gap time at all" if b.startswith("no gap time")
                else f"Graph misses took {t} of tail time and {b}")
        return (f"{took}; the article's reading (a p90-p99 effect, not a tail one) cannot be tested "
                f"here: {why}.")
    if tail and body:
        return (f"Graph misses took {t} of tail time and {b}: as in the article, a frequent, small "
                f"cost of the body of the distribution more than of its tail.")
    return (f"Graph misses took {t} of tail time and {b}: unlike the article "
            f"({A.MEASURED['graph_tail']}), here they {'reach into the tail' if not tail else 'are not a body effect either'}.")


def rate_source(source: str) -> str:
    """Where a run's rate came from, in words: 'calibrated' only when calibration chose it
    (a chapter's `rate` parameter gives 'the rate given to this chapter')."""
    return "this machine's calibrated rate" if source == "calibration" else "the rate given to this chapter"


def rate_clause(rate: float, source: str) -> str:
    """'5.21 req/s (this machine's calibrated rate)', or '(the rate given to this chapter)'."""
    return f"{rate:.2f} req/s ({rate_source(source)})"
