"""Benchmark: a profile's whole run matrix from an empty cache, one run at a time and in
parallel, in one invocation.

    python benchmarks/bench_build.py                      # quick profile, --jobs 1 and --jobs auto
    python benchmarks/bench_build.py --profile smoke --jobs 1 2

For each --jobs setting, every run the book needs (engine.ensure_profile: calibration at
that level, ladder, overload, controls, sweep and the interference control) is made in a
fresh process into its own empty temporary cache, and its wall time printed beside the sum
of the runs' arrival seconds (the floor of one-at-a-time measuring) and the ratio of each
setting's wall time to the first's. A setting that resolves to the same executor and level
as one already measured (`auto` stays serial below 4 usable cores) is not built again: its
ratio is 1 by construction, and the table says so. Run it alone: the builds are timing
experiments.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import json, engine
runs = engine.ensure_profile({profile!r}, progress=False)
specs = [s for group in runs.values() for s in group]
print(json.dumps({{"runs": len(specs), "arrival_s": sum(s.duration for s in specs)}}))
"""


def build(profile: str, plan) -> dict:
    with tempfile.TemporaryDirectory(prefix="itl-bench-build-") as cache:
        env = {**os.environ, "ITL_CACHE_DIR": cache, "ITL_JOBS": str(plan.jobs), "ITL_EXECUTOR": plan.executor,
               "BOOK_PROFILE": profile}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD.format(profile=profile)], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"bench_build: the {plan.executor} build failed:\n{proc.stderr[-3000:]}")
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "wall_s": wall}


def main(argv=None) -> int:
    from engine.runs import executors, topology
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="quick", help="the profile to build (default quick)")
    ap.add_argument("--jobs", nargs="+", default=["1", "auto"], help="settings to compare (default: 1 auto)")
    ap.add_argument("--executor", default=None, help="executor for settings above 1 (default local)")
    a = ap.parse_args(argv)
    try:
        plans = [(j, executors.resolve(j, a.executor if j not in ("1", 1) else None)) for j in a.jobs]
    except ValueError as e:
        print(f"bench_build: error: {e}", file=sys.stderr)
        return 2
    print(f"profile {a.profile}; CPUs allowed {topology.cpus_allowed_list()}, "
          f"{len(topology.measuring_cpus())} physical core(s)")
    done: dict = {}
    rows = []
    for setting, plan in plans:
        key = (plan.executor, plan.concurrency)
        if key in done:
            rows.append((setting, plan, done[key], "same plan as above: not built again"))
            continue
        done[key] = build(a.profile, plan)
        rows.append((setting, plan, done[key], ""))
    first = rows[0][2]["wall_s"]
    print(f"{'--jobs':>7} {'executor':>15} {'k':>3} {'runs':>5} {'arrival s':>10} {'wall s':>8} "
          f"{'wall/arrival':>13} {'ratio to first':>15}")
    for setting, plan, r, note in rows:
        print(f"{setting:>7} {plan.executor:>15} {plan.concurrency:>3} {r['runs']:>5} {r['arrival_s']:>10.0f} "
              f"{r['wall_s']:>8.0f} {r['wall_s'] / r['arrival_s']:>13.2f} {first / r['wall_s']:>14.2f}x"
              + (f"  ({note})" if note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
