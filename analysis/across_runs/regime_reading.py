"""Which regime a build ran in, as its pages show it, and why its baseline landed where it
did against the calibration's check at the chosen rate.

The signature, table and sentences are operating_point's; this module gathers them for a
profile (build_regime) and adds the one reading that needs both the calibration and the
ladder's runs (carry_sentence), and whether any single check run met the whole regime at once
(overlap_sentence).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine_link import REGIME, RUNGS, Regime, get_profile, load_calibration, made_on_confirmed, profile_specs
from .operating_point import (ARTICLE_BASELINE, check_at, check_signatures, regime_place, regime_sentence,
                              regime_signatures, regime_table, yardstick_sentence)

_PLACE_WORDS = {"below": "below the article's regime", "in band": "in the article's regime",
                "above": "past the article's regime"}


_BY_WORDS = {"drain": "its queues, which did not drain", "fullness": "how full its steps were",
             "preemptions": "its preemptions"}


def _place_words(place: str, by: str) -> str:
    return _PLACE_WORDS[place] + (f" (judged by {_BY_WORDS[by]})" if place != "in band" else "")


def carry_sentence(sig: pd.DataFrame, calibration: dict | None, rate_info: dict | None,
                   target_: Regime = REGIME) -> str:
    """Why this build's baseline runs landed where they did against the calibration's check at
    the rate it chose, computed: a rate carried by decode demand asks the same decode tokens
    per second of the machine, so what can still move the runs is how long each step took.
    The sentence sets the runs' own batch-32 forward pass beside the checks', and the rate
    step across which the calibration's own checks changed place (how steep the cliff is
    here). Empty when the rate was not found by checks."""
    info, cal = rate_info or {}, calibration or {}
    if "check_rate" not in info or sig is None or not len(sig):
        return ""
    at = float(info["check_rate"])
    c = check_at(cal, at)
    if c is None or not np.isfinite(sig["fullness"]).any():
        return ""
    check_place, check_by = target_.stage(c)
    place, by, med = regime_place(sig, target_)
    rate = float(sig["rate"].median())
    head = (f"The calibration's check at {at:.2f} req/s, on held-out seeds, had placed that rate "
            f"{_place_words(check_place, check_by)}; this build's baseline at {rate:.2f} req/s, where "
            f"its seeds ask for as many decode tokens per second, ran {_place_words(place, by)}")
    if (check_place, check_by) == (place, by):
        return head + ", the same reading."
    ratio = med.get("forward_ms_b32", math.nan) / c.get("forward_ms_b32", math.nan)
    if not math.isfinite(ratio):
        return head + ", and the step times of the two cannot be compared: one has no batch-32 forward pass."
    pace = (f"{100 * (ratio - 1):.0f}% slower" if ratio >= 1 else f"{100 * (1 - ratio):.0f}% faster")
    text = (head + f". Asked the same decode work, the runs' own batch-32 forward pass took "
            f"{med['forward_ms_b32']:.2f} ms against the check runs' {c['forward_ms_b32']:.2f} ms "
            f"({pace}), and their median time to first token was {med['ttft_p50_ms'] / 1e3:.2f} s "
            f"against the check's {c['ttft_p50_ms'] / 1e3:.2f} s")
    placed = [(x["rate"], target_.stage(x)) for x in cal.get("checks") or []]
    below = [r for r, (p, _) in placed if p == "below"]
    above = [(r, b) for r, (p, b) in placed if p == "above"]
    if below and above and max(below) < min(r for r, _ in above):
        lo = max(below)
        hi, hi_by = min(above)
        text += (f". The calibration's own checks read below the regime at {lo:.2f} req/s and past it "
                 f"(judged by {_BY_WORDS[hi_by]}) at {hi:.2f} req/s, so here the whole regime lies within "
                 f"{100 * (hi / lo - 1):.1f}% of rate, while the runs' step time moved by {100 * abs(ratio - 1):.0f}%")
    return text + "."


def overlap_sentence(calibration: dict | None, target_: Regime = REGIME) -> str:
    """Whether any one check run of the calibration met the regime on every statistic at once,
    read from each seed's run rather than from the medians the search judged: of the runs
    with steps as full as the article's and queues that drained, how often they preempted and
    how many eager steps they ran, against the article's baseline, per 60 s (as the band is
    set) and per request that arrived (a machine faster than the article's VM serves more
    requests in 60 s at the same fullness). It tells a search that found no rate in the
    regime for want of a rate between two checks from one that found none because, on this
    engine and machine, the article's step fullness comes with another count of preemptions
    per 60 s. Empty without per-seed checks."""
    runs = [(float(c["rate"]), s) for c in (calibration or {}).get("checks") or [] for s in c.get("per_seed") or []]
    if not runs:
        return ""
    lo, hi = target_.fullness_range
    band = target_.band
    drained = [(r, s) for r, s in runs if band.drains(s["ttft_p50_ms"])]
    full = [(r, s) for r, s in drained if lo <= s["fullness"] <= hi]
    head = f"Of the calibration's {len(runs)} check runs (every seed of every checked rate), "
    if not full:
        most = (f"; the fullest that drained reached {np.nanmax([s['fullness'] for _, s in drained]):.2f}"
                if drained else "; none drained")
        return head + (f"none had steps as full as the article's ({lo:.2f}-{hi:.2f} of a batch-32 forward pass) "
                       f"with queues that drained{most}.")
    pre = [s["preemptions_per_min"] for _, s in full]
    eager = [s["eager_steps_per_min"] for _, s in full]
    art_eager = ARTICLE_BASELINE["eager_steps"]
    text = (head + f"{len(full)} had steps as full as the article's with queues that drained; they preempted "
            f"{_span(pre, '{:,.0f}')} times per 60 s against the article's {band.low:,.0f}-{band.high:,.0f} "
            f"and ran {_span(eager, '{:,.0f}')} eager steps against its {art_eager[0]:,}-{art_eager[1]:,}")
    within = sum(band.place(p, drains=True) == "in band" for p in pre)     # each of them drained
    if within:
        text += f"; {within} of them preempted within the article's band"
    else:
        side = ("more often than" if min(pre) > band.high else "less often than" if max(pre) < band.low
                else "outside the range of")
        text += (f": counted per 60 s, every one preempted {side} the article's ordinary baseline runs, so none "
                 "was as full and as pressed for KV memory as the article's at once")
    art_rate = ARTICLE_BASELINE["rate"][0]
    a_lo, a_hi = band.low / (60 * art_rate), band.high / (60 * art_rate)
    per_req = [s["preemptions_per_min"] / (60 * r) for r, s in full]
    inside = sum(a_lo <= x <= a_hi for x in per_req)
    return text + (f". Per request that arrived (their checks' {_span([r for r, _ in full], '{:.2f}')} req/s "
                   f"against the article's {art_rate:g}), they preempted {_span(per_req, '{:.2f}')} times against "
                   f"the article's {a_lo:.2f}-{a_hi:.2f}, {inside} of {len(full)} within its range.")


def _span(values, fmt: str) -> str:
    """'low-high' as `fmt` writes them, or the one value when they read alike."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def build_regime(profile=None, seeds=None, duration=None, rate=None) -> dict:
    """The regime of a build, as a page shows it: the calibration behind its ladder, the
    signature of its baseline runs and of the calibration's checks, the table and the
    sentence. Makes any baseline run not yet cached."""
    prof = get_profile(profile)
    specs = made_on_confirmed(prof, lambda: [s for s in profile_specs(prof, seeds=seeds, duration=duration, rate=rate)
                                             if s.rung == RUNGS[0]], rate)
    calibration = load_calibration(prof.calibration, check_duration=prof.check_duration)
    b32 = ((calibration or {}).get("capacity") or {}).get("forward_ms_b32")     # the microbenchmark's
    ladder = regime_signatures([s.path for s in specs]).assign(rate=[s.rate for s in specs])
    checks = check_signatures(calibration)
    return {"calibration": calibration, "forward_ms_b32": b32, "ladder": ladder, "checks": checks,
            "table": regime_table({f"checks ({len(checks)} seeds)": checks,
                                   f"this build's baseline ({len(ladder)} runs)": ladder}),
            "sentence": regime_sentence(ladder), "yardstick": yardstick_sentence(ladder, b32),
            "carry": carry_sentence(ladder, calibration, specs[0].rate_info if specs else None),
            "overlap": overlap_sentence(calibration)}
