"""Which regime a build ran in, as its pages show it, and why its baseline landed where it
did against the calibration's check at the chosen rate.

The signature, table and sentences are operating_point's; this module gathers them for a
profile (build_regime) and adds the one reading that needs both the calibration and the
ladder's runs (carry_sentence).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine_link import REGIME, RUNGS, Regime, ensure_runs, get_profile, load_calibration, profile_specs
from .operating_point import (check_at, check_signatures, regime_place, regime_sentence, regime_signatures, regime_table,
                              yardstick_sentence)

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


def build_regime(profile=None, seeds=None, duration=None, rate=None) -> dict:
    """The regime of a build, as a page shows it: the calibration behind its ladder, the
    signature of its baseline runs and of the calibration's checks, the table and the
    sentence. Makes any baseline run not yet cached."""
    prof = get_profile(profile)
    specs = [s for s in profile_specs(prof, seeds=seeds, duration=duration, rate=rate) if s.rung == RUNGS[0]]
    calibration = load_calibration(prof.calibration, check_duration=prof.check_duration)
    b32 = ((calibration or {}).get("capacity") or {}).get("forward_ms_b32")     # the microbenchmark's
    ladder = regime_signatures(ensure_runs(specs, progress=False)).assign(rate=[s.rate for s in specs])
    checks = check_signatures(calibration)
    return {"calibration": calibration, "forward_ms_b32": b32, "ladder": ladder, "checks": checks,
            "table": regime_table({f"checks ({len(checks)} seeds)": checks,
                                   f"this build's baseline ({len(ladder)} runs)": ladder}),
            "sentence": regime_sentence(ladder), "yardstick": yardstick_sentence(ladder, b32),
            "carry": carry_sentence(ladder, calibration, specs[0].rate_info if specs else None)}
