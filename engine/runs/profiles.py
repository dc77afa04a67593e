"""Protocols of the book: which rungs, seeds, durations and rates a build runs."""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..serve.config import RUNGS
from .target import DURATION_S, OVERLOAD_RATE, RATE, SEEDS

# The article's overload sidebar ran its original rate on a VM whose calibrated rate was
# lower (target.py); the sidebar here keeps that ratio to this machine's rate.
OVERLOAD_FACTOR = OVERLOAD_RATE / RATE


@dataclass(frozen=True)
class Profile:
    name: str
    seeds: tuple
    duration: float                 # seconds of arrivals per run
    overload_seeds: tuple           # the overload sidebar may use fewer seeds
    calibration: str                # "checked" (baseline checks place the regime) or "capacity"
    check_duration: float | None = None   # checks as long as the ladder's runs (engine/runs/calibrate.py)
    rungs: tuple = tuple(RUNGS)
    control_seeds: tuple = (1,)     # the instrument's controls (book/checking)
    control_duration: float = 3.0
    sweep_seeds: tuple = (1,)       # the load sweep (book/regimes)
    sweep_duration: float = 2.0     # a checked profile calibrates the sweep with checks this long
    real_duration: float | None = None    # the real-engine chapter's runs and checks (None: as the ladder's)
    minutes_2core: str = ""         # rough wall time from an empty cache on a 2-core machine


PROFILES = {
    "article": Profile("article", seeds=SEEDS, duration=DURATION_S, overload_seeds=(1, 2, 3),
                       calibration="checked", check_duration=DURATION_S, minutes_2core="about 210",
                       control_seeds=(1, 2, 3), control_duration=20.0,
                       sweep_seeds=(1, 2), sweep_duration=20.0),
    # Quick runs are as long as the article's, 60 s from an empty engine, and share its 60 s
    # calibration: a run needs 35-55 s to climb onto its running set (benchmarks/bench_regime.py),
    # and the 20 s runs of the quick build of 2026-12-06, placed by 20 s checks, read a typical
    # gap of 0.56 and 0.82 batch-32 forward passes against the article's 1.07 (band 0.86-1.34). Fewer
    # seeds, shorter controls, one sweep seed and 20 s real-engine runs keep it quick.
    "quick": Profile("quick", seeds=(1, 2), duration=DURATION_S, overload_seeds=(1,),
                     calibration="checked", check_duration=DURATION_S, minutes_2core="about 80",
                     control_seeds=(1,), control_duration=10.0, sweep_seeds=(1,), sweep_duration=20.0,
                     real_duration=20.0),
    "smoke": Profile("smoke", seeds=(1,), duration=3.0, overload_seeds=(1,),
                     calibration="capacity", minutes_2core="about 5"),
    # for machines and clusters that can afford it: the ladder's p99.9 step needs more seeds than
    # five (book/ladder projects how many); the rest of the book as in `article`
    "article-20": Profile("article-20", seeds=tuple(range(1, 21)), duration=DURATION_S, overload_seeds=(1, 2, 3),
                          calibration="checked", check_duration=DURATION_S, minutes_2core="about 250 (estimated)",
                          control_seeds=(1, 2, 3), control_duration=20.0,
                          sweep_seeds=(1, 2), sweep_duration=20.0),
}
PROFILE_ENV = "BOOK_PROFILE"


def get_profile(name: str | None = None) -> Profile:
    """A profile by name; None reads BOOK_PROFILE (default: article)."""
    name = name or os.environ.get(PROFILE_ENV) or "article"
    if isinstance(name, Profile):
        return name
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; valid profiles: {', '.join(PROFILES)} "
                         f"(papermill: -y \"profile: smoke\")")
    return PROFILES[name]
