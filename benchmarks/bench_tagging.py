"""Tagging overhead: the refined scheme's thread clocks against the article's wall-only tags.

Runs the baseline rung with both kinds of tagging for each seed, back to back, each in a
fresh single-threaded subprocess (through the run cache), then prints per seed the
median time of like steps (pure decode at the most common padded size) under each, their ratio, and
the direct estimate: reads per step times the cost of a read, over the median step.
The goal, set when the thread clocks were added, is under 1% of the median step.

    python benchmarks/bench_tagging.py [--seeds 1 2 3] [--duration 20] [--rate R]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    import pandas as pd

    from analysis.instrument.overhead import overhead_table, read_cost_us
    from engine.controls import overhead_configs
    from engine import RunSpec, ensure_runs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--rate", type=float, help="req/s (default: this machine's calibrated rate)")
    a = ap.parse_args(argv)
    if a.rate is None:
        from engine.runs.calibrate import calibrated_rate
        rate, info = calibrated_rate("capacity")
    else:
        rate, info = a.rate, {"rate": a.rate, "source": "given"}
    article, full = overhead_configs()
    specs = [RunSpec(cfg, s, a.duration, round(rate, 6), info, "controls") for s in a.seeds for cfg in (article, full)]
    ensure_runs(specs, label="tagging overhead")
    costs = read_cost_us()
    pairs = [(s, specs[2 * i].path, specs[2 * i + 1].path) for i, s in enumerate(a.seeds)]
    table = overhead_table(pairs, costs=costs)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.precision", 4):
        print(f"read cost: cpu clock {costs['cpu']:.2f} us, run queue {costs['runq']:.2f} us, "
              f"wall clock {costs['wall']:.2f} us")
        print(table.T)
    obs, direct = table["observed overhead"].median(), table["direct overhead"].median()
    per_token = table["direct overhead per token"].median()
    print(f"\nmedian over seeds: observed {obs:+.2%} per like step; direct estimate {direct:.2%} of the "
          f"median step (goal < 1%: {'met' if direct < 0.01 else 'missed'}), {per_token:.2%} of the "
          f"median step a token sees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
