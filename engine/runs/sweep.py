"""The load sweep: how the anatomy moves with offered load and with a faster forward pass.

Offered load runs from 0.6x to 1.4x of this build's operating point (the calibrated
rate of the article forward), denser near 1x where preemption's share of the tail is
steepest; two rungs (the baseline and the last, with the admission watermark); both
forwards. The fast forward's rates are scaled by its own measured capacity over the
article forward's, so a load level means the same fraction of capacity for both.
Seeds and duration come from the profile; in a checked profile the operating point is
calibrated with checks as long as the sweep's runs, so that a load of 1.0 is the regime
(a run from an empty engine needs tens of seconds to climb onto it). The runs go through
the same runner and cache as every other run.
"""
from __future__ import annotations

import dataclasses

from ..serve.config import FORWARDS, RUNGS, rung_config
from .calibrate import calibrate, checked_rate, load_calibration
from .order import blocked_order
from .profiles import Profile, get_profile
from .spec import check_duration, check_seeds, RunSpec

LEVELS = (0.6, 0.75, 0.85, 0.95, 1.05, 1.2, 1.4)    # fractions of the operating point
SWEEP_RUNGS = (RUNGS[0], RUNGS[-1])                 # baseline, +admit watermark


def _capacity_record(prof: Profile, forward: str, seconds: float | None = None) -> dict:
    """The calibration record holding this forward's capacity. The fast forward's is a
    capacity-only calibration, measured over as many seconds as the article forward's was
    (a ratio of two capacities compares like with like); a record of another length is
    measured again."""
    if forward == "article":
        checks = prof.calibration == "checked"
        return (load_calibration(prof.calibration, forward, prof.sweep_duration if checks else None)
                or calibrate(checks=checks, check_duration=prof.sweep_duration))
    cal = load_calibration("capacity", forward)
    if cal is None or (seconds is not None and cal["capacity"].get("seconds") != seconds):
        cal = calibrate(checks=False, forward=forward, capacity_seconds=seconds, force=cal is not None)
    return cal


def capacity_scale(prof: Profile, forward: str) -> float:
    """This forward's measured capacity (decode tokens per second of the baseline rung with
    a saturated queue) over the article forward's, over equal measuring windows."""
    article = _capacity_record(prof, "article")["capacity"]
    other = _capacity_record(prof, forward, seconds=article.get("seconds"))["capacity"]
    return float(other["tokens_per_s"]) / float(article["tokens_per_s"])


def sweep_specs(profile: str | Profile | None = None, seeds=None, duration: float | None = None,
                rate: float | None = None, levels=LEVELS, rungs=SWEEP_RUNGS, forwards=FORWARDS,
                fast_scale: float | None = None) -> list[RunSpec]:
    """Every run of the sweep, each carrying its load level and forward in rate_info.

    rate: the operating point of the article forward (default: the profile's calibrated
    rate); fast_scale: the fast forward's capacity over the article forward's (default:
    measured over equal windows, see capacity_scale())."""
    prof = get_profile(profile)
    seeds = check_seeds(seeds) if seeds is not None else prof.sweep_seeds
    duration = check_duration(duration) if duration is not None else prof.sweep_duration
    base, info = checked_rate(prof, seeds, duration, rate, check_duration=prof.sweep_duration)
    if not levels or any(not 0 < lv for lv in levels):
        raise ValueError(f"load levels must be positive fractions of the operating point, got {levels!r}")
    scales = {}
    for fwd in forwards:
        if fwd == "article":
            scales[fwd] = 1.0
        elif fast_scale is not None:
            scales[fwd] = float(fast_scale)
        else:
            scales[fwd] = capacity_scale(prof, fwd)
    specs = []
    for fwd in forwards:
        for rung in rungs:
            cfg = dataclasses.replace(rung_config(rung), forward=fwd)
            for level in levels:
                for s in seeds:
                    specs.append(RunSpec(cfg, int(s), duration, round(base * scales[fwd] * level, 6),
                                         {**info, "operating_point": base, "load": float(level),
                                          "forward": fwd, "capacity_scale": scales[fwd]}, group="sweep"))
    return blocked_order(specs)
