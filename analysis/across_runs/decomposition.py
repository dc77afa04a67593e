"""The decomposed chapter's sentences, for whichever rung it decomposes, and what a
faster forward pass did to typical and tail gaps, measured on the load sweep.

The reproduction report's criteria are written for the baseline (findings.py). The
chapter can decompose any rung, so that rung's runs are relabelled as the first rung
before the criteria are applied, and each sentence says when the article's figure is
its baseline's rather than the rung's.
"""
from __future__ import annotations

import math

import pandas as pd

from ..engine_link import FORWARDS
from . import article as A
from .findings import findings, verdict_word
from .rungs import FIRST
from .wording import pct


def as_first(runs, rung: str) -> list[dict]:
    """The runs of `rung`, relabelled as the first rung (for the baseline criteria)."""
    return [{**r, "rung": FIRST} for r in runs if r["rung"] == rung]


def rung_findings(runs, rung: str) -> pd.DataFrame:
    """The report's baseline findings, applied to the runs of `rung`."""
    return findings(as_first(runs, rung))


def intro_sentence(rung: str) -> str:
    if rung == FIRST:
        return ("This chapter takes the untreated engine (the baseline rung) and asks where its slow "
                "tokens come from.")
    return (f"This chapter takes the engine at the {rung} rung of the fix ladder (the baseline with "
            f"every fix down to and including that one) and asks where its slow tokens come from.")


def _criteria(found: pd.DataFrame, keys, rung: str) -> str:
    crit = "; ".join(found.loc[k, "criterion"] for k in keys)
    if rung != FIRST:
        crit = crit.replace("baseline run", "run of the rung")
    return crit


def forward_share_sentence(found: pd.DataFrame, rung: str) -> str:
    """Clean and tail forward-pass shares against the article's, with the verdicts."""
    c, t = found.loc["fwd_clean"], found.loc["fwd_tail"]
    head = (f"Per run, the median forward-pass share of a gap was {c['this build']} for clean gaps "
            f"and {t['this build']} for tail gaps.")
    crit = _criteria(found, ("fwd_clean", "fwd_tail"), rung)
    verdicts = (f"the first finding {verdict_word(c['held'])} and the second "
                f"{verdict_word(t['held'])}")
    if rung == FIRST:
        return (f"{head} The article saw {c['article']} and {t['article']}. Judged by the criteria of "
                f"the reproduction report ({crit}), {verdicts} on this machine.")
    return (f"{head} The article gives these shares for its baseline only ({c['article']} and "
            f"{t['article']}). Applying the report's baseline criteria to this rung's runs ({crit}), "
            f"{verdicts}.")


def preempt_sentence(found: pd.DataFrame, rung: str) -> str:
    """How often preemption held most of the tail time, against the article."""
    row = found.loc["preempt_majority"]
    head = f"Preemption held more than half of the tail time in {row['this build']}"
    if rung == FIRST:
        return (f"{head}; the article found that in {row['article']}, so on this build that finding "
                f"{verdict_word(row['held'])}.")
    art = A.TAIL_SHARE.get(rung, {}).get("preempt")
    other = (f"the article's median share of tail time for preemption at this rung was {pct(art)}"
             if art is not None else "the article gives no preemption share for this rung")
    return f"{head}; {other} (its per-run figures are for the baseline only)."


# ---------------------------------------------------------------- the fast forward, measured
def near_operating_point(specs, rung: str, width: float = 0.1) -> list:
    """The load sweep's run specs of `rung` (the baseline's when the sweep did not run
    that rung) whose load is within `width` of the operating point (both forwards), or,
    if none is, those at the level nearest to it."""
    mine = [s for s in specs if s.rung == rung] or [s for s in specs if s.rung == FIRST]
    if not mine:
        return []
    loads = sorted({float(s.rate_info["load"]) for s in mine})
    near = [x for x in loads if abs(x - 1.0) <= width] or [min(loads, key=lambda x: abs(x - 1.0))]
    return [s for s in mine if float(s.rate_info["load"]) in near]


def forward_gain(frame: pd.DataFrame) -> dict | None:
    """Article vs fast forward in a sweep frame (analysis.across_runs.load_sweep.sweep_frame) of one
    rung, paired by (load, seed): medians of p50, p99 and the forward pass in a typical
    gap (its share of a clean gap times the median gap). None without both forwards."""
    if frame is None or not len(frame) or not set(FORWARDS) <= set(frame["forward"]):
        return None
    key = ["load", "seed"]
    a = frame[frame["forward"] == "article"].set_index(key)
    f = frame[frame["forward"] == "fast"].set_index(key)
    both = a.index.intersection(f.index)
    if not len(both):
        return None
    a, f = a.loc[both], f.loc[both]
    med = lambda s: float(s.median())
    out = {"pairs": len(both), "loads": sorted({x for x, _ in both}), "rung": str(a["rung"].iloc[0]),
           "p50_article": med(a["itl_p50"]), "p50_fast": med(f["itl_p50"]),
           "p99_article": med(a["itl_p99"]), "p99_fast": med(f["itl_p99"]),
           "fwd_article": med(a["fwd_share_clean"] * a["itl_p50"]),
           "fwd_fast": med(f["fwd_share_clean"] * f["itl_p50"])}
    saved = out["fwd_article"] - out["fwd_fast"]
    out["gap_per_fwd_ms"] = (out["p50_article"] - out["p50_fast"]) / saved if saved > 0 else math.nan
    out["gain_p50"] = 1 - out["p50_fast"] / out["p50_article"]
    out["gain_p99"] = 1 - out["p99_fast"] / out["p99_article"]
    return out


def _moved(gain: float) -> str:
    return f"fell by {gain:.0%}" if gain >= 0 else f"rose by {-gain:.0%}"


def forward_gain_sentence(g: dict | None, tolerance: float = 0.2) -> str:
    """Whether a faster forward pass sped typical tokens up about one for one (each ms of
    forward pass saved, within `tolerance`, a ms off the median gap) and the tail less."""
    if g is None:
        return ("The load sweep has no paired runs of both forwards for this rung, so what a faster "
                "forward pass buys is not measured here.")
    loads = ", ".join(f"{x:g}" for x in g["loads"])
    where = (f"In the load sweep's {g['rung']} runs at {loads} times each forward's operating point "
             f"(equal shares of each forward's capacity; {g['pairs']} run(s) of each forward, paired by "
             f"load and seed), the fast forward")
    if not g["gap_per_fwd_ms"] == g["gap_per_fwd_ms"]:
        return (f"{where} did not shorten the forward pass of a typical gap ({g['fwd_article']:.1f} -> "
                f"{g['fwd_fast']:.1f} ms), so whether a faster one speeds typical tokens up one for one "
                f"cannot be read off these runs.")
    one = abs(g["gap_per_fwd_ms"] - 1) <= tolerance
    head = (f"{where} cut the forward pass in a typical gap from {g['fwd_article']:.1f} to "
            f"{g['fwd_fast']:.1f} ms and the median gap from {g['p50_article']:.1f} to "
            f"{g['p50_fast']:.1f} ms: {g['gap_per_fwd_ms']:.2f} ms off the median gap per ms of forward "
            f"pass saved, so typical tokens sped up "
            f"{'about one for one' if one else 'not one for one'}.")
    less = g["gain_p99"] < g["gain_p50"]
    tail = (f" The p99 {_moved(g['gain_p99'])}, the median {_moved(g['gain_p50'])}: "
            + ("the tail gained less." if less else "the tail gained as much or more."))
    return head + tail
