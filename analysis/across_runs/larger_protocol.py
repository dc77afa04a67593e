"""The larger protocol's evidence, read where a machine or cluster has built it.

Five seeds leave the end-to-end p99.9 step's interval wide (the ladder projects how
many seeds it needs). The `article-20` profile runs 20 seeds of 60 s per rung; when its
ladder ends (baseline and the last rung) are all in this cache, at this build's
concurrency, the ladder reads their interval instead of only projecting one. Nothing
here measures: a protocol not built here is reported as such.
"""
from __future__ import annotations

import math

from ..engine_link import RUNGS, get_profile, load_calibration, profile_specs, raw_log_problem
from .paired import paired_change, seed_subsample_intervals
from .summaries import run_summaries

LARGER = "article-20"
ENDS = (RUNGS[0], RUNGS[-1])


def larger_runs(profile: str = LARGER, rungs=ENDS) -> list[dict] | None:
    """The summaries of the larger protocol's runs of `rungs`, or None unless every one of
    them (and the calibration that fixes their rate) is in this cache."""
    prof = get_profile(profile)
    if load_calibration(prof.calibration, check_duration=prof.check_duration) is None:
        return None
    specs = profile_specs(prof, rungs=list(rungs))
    if any(raw_log_problem(s.path) is not None for s in specs):
        return None
    return run_summaries(specs)


def larger_view(runs, metric: str = "itl_p999", step=ENDS):
    """Interval width by number of seeds over the larger protocol's seeds (as the ladder's
    own view), and the full-set paired comparison."""
    view = seed_subsample_intervals(runs, metric, step)
    before = {r["seed"]: r[metric] for r in runs if r["rung"] == step[0]}
    after = {r["seed"]: r[metric] for r in runs if r["rung"] == step[1]}
    return view, paired_change(before, after, metric)


def larger_sentence(change: dict | None, profile: str = LARGER) -> str:
    if change is None:
        prof = get_profile(profile)
        return (f"No {profile} build ({len(prof.seeds)} seeds of {prof.duration:g} s per rung) is in this cache, so "
                f"the projection above stands alone; a machine or cluster that builds it (python -m engine "
                f"matrix --profile {profile} --jobs auto) gets its measured interval here.")
    width = change["hi"] / change["lo"] if math.isfinite(change["lo"]) and change["lo"] > 0 else math.inf
    return (f"This cache also holds the {profile} build: over its {change['n']} paired seeds the end-to-end "
            f"p99.9 ratio is {change['paired_ratio']:.2f} (95% interval {change['lo']:.2f}-{change['hi']:.2f}, "
            f"{width:.2f}-fold wide), {change['verdict']}.")
