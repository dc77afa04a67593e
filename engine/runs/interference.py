"""The interference control: the same runs measured alone and beside k-1 others.

A parallel build measures each run while k-1 others run on the other cores, sharing the
last-level cache, memory bandwidth and the host's clock. Whether that moves what the book
reports is measured, not assumed: the baseline rung at the build's rate, for the
profile's control seeds (padded to a multiple of k, so every run of the parallel arm has
its k-1 neighbours), once alone and once at concurrency k, paired by seed; and the
capacity alone and with k-1 neighbours. k is the level the build used, or 2 where the
build measured one run at a time (and the machine has two cores to pin to).
"""
from __future__ import annotations

import dataclasses
import math

from ..serve.config import RUNGS, rung_config
from . import executors, topology
from .calibrate import calibrate, checked_rate, load_calibration
from .order import blocked_order
from .profiles import Profile, get_profile
from .spec import RunSpec

RUNG = RUNGS[0]


def interference_level() -> int | None:
    """The k the control compares with alone: the build's level, else 2; None where this
    machine has fewer than 2 physical cores to pin to."""
    plan = executors.current()
    if plan.concurrency > 1:
        return plan.concurrency
    return 2 if len(topology.measuring_cpus()) >= 2 else None


def interference_seeds(prof: Profile, k: int) -> tuple:
    seeds = list(prof.control_seeds)
    while len(seeds) < k or len(seeds) % k:
        seeds.append(max(seeds) + 1)
    return tuple(seeds)


def interference_specs(profile: str | Profile | None = None) -> dict:
    """{"k", "alone", "beside"}: the two arms' specs (empty where k is None)."""
    prof = get_profile(profile)
    k = interference_level()
    if k is None:
        return {"k": None, "alone": [], "beside": []}
    seeds = interference_seeds(prof, k)
    rate, info = checked_rate(prof, seeds, prof.control_duration, None)
    base = [RunSpec(rung_config(RUNG), int(s), float(prof.control_duration), round(float(rate), 6), info,
                    "interference", concurrency=1) for s in seeds]
    alone = blocked_order(base)
    beside = [dataclasses.replace(s, concurrency=k) for s in alone]
    return {"k": k, "alone": alone, "beside": beside}


def interference_capacity(k: int | None, forward: str = "article") -> dict:
    """Capacity (decode tokens/s, saturated queue) alone and at concurrency k, measured over
    equal windows; measured (capacity only) where this cache lacks it."""
    if k is None:
        return {}
    alone = load_calibration("capacity", forward, concurrency=1) or calibrate(checks=False, forward=forward, concurrency=1)
    seconds = alone["capacity"].get("seconds")
    beside = load_calibration("capacity", forward, concurrency=k)
    if beside is None or beside["capacity"].get("seconds") != seconds:
        beside = calibrate(checks=False, forward=forward, concurrency=k, capacity_seconds=seconds,
                           force=beside is not None)
    each = beside["capacity"].get("per_worker") or [beside["capacity"]["tokens_per_s"]]
    return {"k": k, "seconds": seconds, "alone": float(alone["capacity"]["tokens_per_s"]),
            "beside": float(beside["capacity"]["tokens_per_s"]), "beside_each": [float(x) for x in each],
            "ratio": float(beside["capacity"]["tokens_per_s"]) / float(alone["capacity"]["tokens_per_s"])
            if alone["capacity"]["tokens_per_s"] else math.nan}
