"""The load sweep as a tidy frame, and what it says, computed (book/regimes).

One row per run: forward, rung, load (a fraction of this build's operating point),
seed, and the run's percentiles, signature and tail-time shares. From it: the load at
which a cause's share of tail time first passes a threshold (per seed, interpolated
between levels, with its spread over seeds, or "not within the sweep"); the load from
which the watermark's p99.9 gain earns a verdict under the ladder's rule; where the
queue stops draining; and how the anatomy differs between the two forwards at equal load.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.schemes import CAUSES, LABELS
from ..engine_link import BAND, FORWARDS
from .paired import paired_change
from .rungs import ADMIT_WATERMARK, BASELINE
from .signflip import strongest_verdict
from .verdicts import unjudged

METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max")


def sweep_frame(specs, summaries) -> pd.DataFrame:
    """specs (engine sweep specs) and their run summaries, zipped into one tidy frame."""
    rows = []
    for spec, s in zip(specs, summaries):
        per_min = 60.0 / float(s.get("duration") or spec.duration)
        row = {"forward": spec.config.forward, "rung": spec.rung, "load": float(spec.rate_info["load"]),
               "seed": spec.seed, "rate": spec.rate, "preempt_per_min": s["preemptions"] * per_min,
               "ttft_p50": s["ttft_p50"], "fwd_share_clean": s["fwd_share_clean_median"],
               **{m: s[m] for m in METRICS}}
        row.update({f"tail_{lab}": s["tail_share"].get(lab, 0.0) for lab in LABELS})
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["forward", "rung", "load", "seed"]).reset_index(drop=True)


def _first_crossing(loads, values, threshold: float) -> float:
    """The first load where values reach threshold, linearly interpolated between the
    level below and the level at or above; NaN if never (or already at the first level
    without a level below, which returns that first level)."""
    for i, (x, v) in enumerate(zip(loads, values)):
        if v >= threshold:
            if i == 0:
                return float(x)
            x0, v0 = loads[i - 1], values[i - 1]
            return float(x0 + (threshold - v0) * (x - x0) / (v - v0))
    return math.nan


def crossing_load(frame: pd.DataFrame, forward: str, rung: str = BASELINE, column: str = "tail_preempt",
                  threshold: float = 0.5) -> dict:
    """Per seed, the first load at which `column` reaches `threshold`; the median and
    range over the seeds that crossed, and how many did."""
    sel = frame[(frame["forward"] == forward) & (frame["rung"] == rung)]
    per_seed = {}
    for seed, g in sel.groupby("seed"):
        g = g.sort_values("load")
        per_seed[int(seed)] = _first_crossing(g["load"].tolist(), g[column].tolist(), threshold)
    crossed = [v for v in per_seed.values() if v == v]
    return {"per_seed": per_seed, "n_seeds": len(per_seed), "n_crossed": len(crossed),
            "median": float(np.median(crossed)) if crossed else math.nan,
            "lo": min(crossed) if crossed else math.nan, "hi": max(crossed) if crossed else math.nan,
            "levels": (float(sel["load"].min()), float(sel["load"].max())) if len(sel) else (math.nan, math.nan)}


def crossing_sentence(res: dict, what: str = "preemption's share of tail time", threshold: float = 0.5) -> str:
    lo_lv, hi_lv = res["levels"]
    if res["n_seeds"] == 0:
        return f"No sweep runs were found, so nothing can be said about {what}."
    if res["n_crossed"] == 0:
        return (f"{what[0].upper() + what[1:]} passed {threshold:.0%} in no seed within the sweep "
                f"({lo_lv:.2f}-{hi_lv:.2f}x the operating point).")
    spread = (f"{res['median']:.2f}x the operating point" if res["n_crossed"] == 1
              else f"{res['median']:.2f}x the operating point (seeds: {res['lo']:.2f}-{res['hi']:.2f}x)")
    missing = res["n_seeds"] - res["n_crossed"]
    tail = (f"; in {missing} of {res['n_seeds']} seeds it did not within the sweep" if missing else
            f", in all {res['n_seeds']} seed(s)")
    return f"{what[0].upper() + what[1:]} first passed {threshold:.0%} at {spread}{tail}."


def at_operating_point(frame: pd.DataFrame, column: str = "preempt_per_min", forward: str = "article",
                       rung: str = BASELINE) -> float:
    """Median over seeds of `column` at load 1.0, each seed interpolated between the levels
    around it (NaN when the sweep does not span 1.0)."""
    sel = frame[(frame["forward"] == forward) & (frame["rung"] == rung)]
    per_seed = []
    for _, g in sel.groupby("seed"):
        g = g.sort_values("load")
        if len(g) and g["load"].min() <= 1.0 <= g["load"].max():
            per_seed.append(float(np.interp(1.0, g["load"], g[column])))
    return float(np.median(per_seed)) if per_seed else math.nan


def short_run_sentence(sweep_value: float, ladder_values, sweep_s: float, ladder_s: float,
                       tolerance: float = 0.15) -> str:
    """How the sweep's short runs read the preemption rate at the operating point, against
    the ladder's full-length baseline runs of the same seeds. A run starts from an empty
    engine, so a short run can under-read a long one; the shaded band rests on short runs."""
    vals = [float(v) for v in ladder_values]
    ladder = float(np.median(vals)) if vals else math.nan
    if not (sweep_value == sweep_value and ladder == ladder and ladder > 0):
        return "The sweep's preemption rate at the operating point could not be set beside the ladder's."
    r = sweep_value / ladder
    head = (f"At the operating point the sweep's {sweep_s:g} s runs read {sweep_value:.0f} preemptions "
            f"per 60 s (interpolated between the levels around 1.0), against {ladder:.0f} in the ladder's "
            f"{ladder_s:g} s baseline runs of the same seeds ({r:.2f}x)")
    if abs(r - 1.0) <= tolerance:
        return head + f": within {tolerance:.0%}, so the shaded span sits about where full-length runs would put it."
    side = "higher" if r < 1.0 else "lower"
    return (head + f": a run starts from an empty engine, so the short runs read the rate "
            f"{'low' if r < 1.0 else 'high'}, and the shaded span sits at {side} loads than full-length "
            f"runs would put it.")


def drain_limit(frame: pd.DataFrame, forward: str, rung: str = BASELINE,
                max_ttft_ms: float = BAND.max_ttft_p50_s * 1e3) -> float:
    """The lowest load whose median TTFT p50 over seeds exceeds max_ttft_ms (the queue no
    longer drains), or NaN when every level drained."""
    sel = frame[(frame["forward"] == forward) & (frame["rung"] == rung)]
    med = sel.groupby("load")["ttft_p50"].median().sort_index()
    over = med[med > max_ttft_ms]
    return float(over.index[0]) if len(over) else math.nan


def watermark_verdicts(frame: pd.DataFrame, forward: str, metric: str = "itl_p999") -> pd.DataFrame:
    """Per load: the watermark's change of `metric` against the baseline, paired by seed,
    judged by the ladder's rule (analysis.across_runs.paired), in the book's words (verdicts.py)."""
    rows = []
    sel = frame[frame["forward"] == forward]
    for load, g in sel.groupby("load"):
        b = g[g["rung"] == BASELINE].set_index("seed")[metric]
        a = g[g["rung"] == ADMIT_WATERMARK].set_index("seed")[metric]
        ch = paired_change(b, a, metric)
        rows.append({"load": float(load), "ratio": ch["ratio"], "n": ch["n"], "verdict": ch["judged"],
                     "direction": ch["direction"]})
    return pd.DataFrame(rows)


def watermark_sentence(verdicts: pd.DataFrame) -> str:
    """From which load the watermark's gain earns a verdict above 'no change detected'."""
    if verdicts.empty:
        return "No paired sweep runs were found for the watermark."
    n = int(verdicts["n"].min())
    floor = strongest_verdict(n)
    if floor in ("no change", "insufficient runs"):
        return (f"With {n} paired seed(s) per load, every load's comparison {unjudged(n)} (the smallest "
                f"attainable p-value is too large to detect any change), so the sweep shows the "
                f"watermark's effect as ratios only, not as findings: from "
                f"{verdicts['ratio'].min():.2f}x to {verdicts['ratio'].max():.2f}x on p99.9.")
    good = verdicts[(verdicts["verdict"].isin(["established", "suggestive"])) & (verdicts["direction"] == "down")]
    if good.empty:
        return "At no load did the paired runs detect a p99.9 gain from the watermark."
    first = good.sort_values("load").iloc[0]
    return (f"The watermark's p99.9 gain first earned a verdict ({first['verdict']}) at "
            f"{first['load']:.2f}x the operating point (ratio {first['ratio']:.2f}).")


def forward_comparison(frame: pd.DataFrame, rung: str = BASELINE) -> pd.DataFrame:
    """At each load, median over seeds for each forward: the forward pass's share of a
    clean gap and each stall's share of the tail."""
    sel = frame[frame["rung"] == rung]
    cols = ["fwd_share_clean"] + [f"tail_{s}" for s in CAUSES]
    return sel.groupby(["load", "forward"])[cols].median().unstack("forward")


def forward_sentence(frame: pd.DataFrame, load: float = 1.0, rung: str = BASELINE) -> str:
    """How the fast forward changes the anatomy at the sweep level nearest `load`."""
    sel = frame[frame["rung"] == rung]
    forwards = set(sel["forward"])
    if not set(FORWARDS) <= forwards:
        return "The sweep did not run both forwards, so they cannot be compared."
    levels = sorted(set(sel["load"]))
    near = min(levels, key=lambda x: abs(x - load))
    med = sel[sel["load"] == near].groupby("forward").median(numeric_only=True)
    a, f = med.loc["article"], med.loc["fast"]
    stalls = "; ".join(f"{s} {a[f'tail_{s}']:.0%} -> {f[f'tail_{s}']:.0%}" for s in CAUSES)
    return (f"At {near:.2f}x each forward's operating point, the forward pass is "
            f"{a['fwd_share_clean']:.0%} of a clean gap with the article forward and "
            f"{f['fwd_share_clean']:.0%} with the fast one; each stall's share of tail time, article "
            f"-> fast: {stalls}.")
