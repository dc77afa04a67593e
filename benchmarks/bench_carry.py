"""Benchmark: is the rate carried from the check seeds to a profile's seeds right, and how
repeatable is one run's regime signature?

The calibration places the regime with 60 s checks on held-out seeds and carries the rate it
found to a profile's seeds by decode demand (engine/runs/offered.py). Two things decide
whether a profile's baseline then lands where its checks did: whether the carry matches the
two seed sets' load, and how much a run's signature moves when nothing but the hour changes.
This measures both, in one script, with three conditions (baseline rung, article forward,
60 s, the executor's concurrency, as the checks run):

* the check seeds at the rate the checks found (the record's rate);
* the profile's seeds at the carried rate (what a build runs);
* the profile's seeds at the record's rate (no carry).

Conditions are made together in one recorded random order, as many at a time as the executor
measures, so that no condition has an hour of its own; when the number of runs does not fill
the last group, further check seeds are added (the group would otherwise run with fewer
neighbours than its key says). With ``--repeats N`` the whole set is made N times: the first
repetition is the cache's own runs (a build reuses them), each later one is made in its own
folder under the cache (``bench_carry/repeat-<i>``), later in time. Printed: every run's
signature, each condition's medians, the decode demand each condition asks for, and with
repeats, how far the same run (seed, rate, code) moved between repetitions.

    python benchmarks/bench_carry.py                       # the cache's 60 s record, article profile
    python benchmarks/bench_carry.py --rate 13.198 --repeats 2

Not a test: the runs take 60 s each (about 8 min per repetition with two workers). Run it
alone (no other heavy process).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.runs import cache, executors  # noqa: E402
from engine.runs.calibrate import CHECK_SEEDS, load_calibration  # noqa: E402
from engine.runs.execute import ensure_runs  # noqa: E402
from engine.runs.offered import demand_ratio, matched_rate  # noqa: E402
from engine.runs.profiles import get_profile  # noqa: E402
from engine.runs.regime import signature  # noqa: E402
from engine.runs.spec import RunSpec, resolve_config  # noqa: E402
from engine.runs.target import DURATION_S, REGIME  # noqa: E402

STATS = ("fullness", "forward_ms_b32", "decode_batch", "eager_steps_per_min", "preemptions_per_min",
         "ttft_p50_ms")
CHECKS, CARRIED, UNCARRIED = "check seeds @ record", "profile seeds @ carried", "profile seeds @ record"


def conditions(rate: float, check_seeds, seeds, duration: float) -> dict:
    """{condition: (seeds, rate)}: the checks, the profile's seeds carried, and not carried."""
    carried = matched_rate(rate, check_seeds, duration, seeds, duration)
    return {CHECKS: (tuple(check_seeds), rate), CARRIED: (tuple(seeds), carried), UNCARRIED: (tuple(seeds), rate)}


def padded(conds: dict, jobs: int) -> dict:
    """Add check seeds after the last until the run count fills whole groups of `jobs`."""
    seeds, rate = conds[CHECKS]
    n = sum(len(s) for s, _ in conds.values())
    extra = (-n) % jobs
    return {**conds, CHECKS: (seeds + tuple(range(max(seeds) + 1, max(seeds) + 1 + extra)), rate)}


def run_order(conds: dict, order_seed: int) -> list:
    keys = [(c, s) for c, (seeds, _) in conds.items() for s in seeds]
    return [keys[i] for i in np.random.default_rng(order_seed).permutation(len(keys))]


def measure(conds: dict, order: list, duration: float, jobs: int, label: str) -> pd.DataFrame:
    cfg = resolve_config("baseline")
    specs = {(c, s): RunSpec(cfg, s, duration, conds[c][1]) for c, s in order}
    paths = {}
    for i in range(0, len(order), jobs):
        group = order[i:i + jobs]
        paths.update(zip(group, ensure_runs([specs[k] for k in group],
                                            label=f"{label} group {i // jobs + 1}/{-(-len(order) // jobs)}")))
    rows = []
    for (c, s), p in paths.items():
        sig = signature(p)
        rows.append(dict(condition=c, seed=s, rate=specs[(c, s)].rate, **{k: sig[k] for k in STATS}))
    return pd.DataFrame(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="article", help="whose seeds the rate is carried to")
    ap.add_argument("--rate", type=float, help="the checks' rate (default: the cache's 60 s record)")
    ap.add_argument("--repeats", type=int, default=1, help="times the whole set is made")
    ap.add_argument("--order-seed", type=int, default=46, help="seed of the recorded random order")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.rate is not None and not args.rate > 0:
        ap.error(f"--rate must be a positive number of requests per second, got {args.rate}")
    prof = get_profile(args.profile)
    jobs = executors.default_concurrency()
    rate = args.rate
    if rate is None:
        rec = load_calibration("checked", check_duration=DURATION_S, concurrency=jobs)
        if rec is None:
            raise SystemExit(f"no 60 s calibration record at concurrency {jobs} in {cache.cache_dir()}: "
                             f"give --rate, or run `python -m engine calibrate --profile {args.profile}` first")
        rate = float(rec["rate"])
    conds = padded(conditions(rate, CHECK_SEEDS, prof.seeds, DURATION_S), jobs)
    order = run_order(conds, args.order_seed)
    print(f"record rate {rate:g} req/s; {jobs} at a time; order (seed {args.order_seed}): {order}", flush=True)
    base = cache.cache_dir()
    frames = []
    t0 = time.time()
    try:
        for r in range(1, args.repeats + 1):
            os.environ[cache.CACHE_ENV] = str(base if r == 1 else base / "bench_carry" / f"repeat-{r}")
            frames.append(measure(conds, order, DURATION_S, jobs, f"repeat {r}/{args.repeats}").assign(repeat=r))
    finally:
        os.environ[cache.CACHE_ENV] = str(base)
    df = pd.concat(frames, ignore_index=True)
    pd.set_option("display.width", 220)
    print(df.round(3).to_string(index=False))
    lo, hi = REGIME.fullness_range
    print(f"\nmedians per condition and repetition (fullness band {lo:.2f}-{hi:.2f}; queues drain below "
          f"{REGIME.band.max_ttft_p50_s * 1e3:.0f} ms TTFT p50):")
    print(df.groupby(["condition", "repeat"])[["rate", *STATS]].median().round(3).to_string())
    print("\ndecode tokens asked, against the rate's expectation:")
    for c, (seeds, r) in conds.items():
        print(f"  {c:26s} seeds {list(seeds)} at {r:.3f} req/s: {demand_ratio(seeds, DURATION_S, r):.4f}")
    if args.repeats > 1:
        wide = df.pivot_table(index=["condition", "seed"], columns="repeat", values="fullness")
        moved = wide.max(axis=1) - wide.min(axis=1)
        print("\nthe same run made again (same seed, rate and code): fullness per repetition, and its range")
        print(wide.assign(range=moved).round(3).to_string())
        print(f"median range {moved.median():.3f}, largest {moved.max():.3f}; "
              f"the fullness band is {hi - lo:.2f} wide")
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
