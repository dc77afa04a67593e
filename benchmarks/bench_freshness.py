"""How much one machine's capacity reading moves from one measurement to the next: the
noise a calibration's freshness probe (engine/runs/freshness.py) must tolerate.

Measures capacity --repeats times back to back, exactly as calibration and the probe do
(a saturated queue in fresh children, at the environment's concurrency, plus the batch-32
microbenchmark), and prints each reading, the spread (max/min) of tokens/s and of the
batch-32 forward, and how many readings the probe's TOLERANCE would call a changed machine
against the first one. Run it alone (no tests, no build beside it).

    ITL_JOBS=2 python benchmarks/bench_freshness.py --repeats 4
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.runs.calibrate import CAPACITY_SECONDS, measure_capacity  # noqa: E402
from engine.runs.executors import default_concurrency  # noqa: E402
from engine.runs.freshness import TOLERANCE, moved  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=CAPACITY_SECONDS)
    ap.add_argument("--forward", default="article")
    a = ap.parse_args(argv)
    if a.repeats < 2:
        ap.error(f"--repeats must be at least 2 to show a spread, got {a.repeats}")
    k = default_concurrency()
    rows = []
    from tqdm.auto import tqdm
    for i in tqdm(range(a.repeats), desc=f"capacity x{a.repeats} ({a.seconds:g} s, k={k})", file=sys.stderr):
        t0 = time.time()
        cap = measure_capacity(a.seconds, a.forward, k)
        rows.append({"repeat": i, "tokens_per_s": cap["tokens_per_s"], "per_worker": cap.get("per_worker"),
                     "forward_ms_b32": cap["forward_ms_b32"], "seconds": round(time.time() - t0, 1)})
    df = pd.DataFrame(rows)
    first = df["tokens_per_s"].iloc[0]
    df["vs_first"] = df["tokens_per_s"] / first
    df["probe_says_moved"] = [moved(first, x) for x in df["tokens_per_s"]]
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    tps, fwd = df["tokens_per_s"], df["forward_ms_b32"]
    print(f"\ntokens/s spread (max/min) {tps.max() / tps.min():.3f}; batch-32 forward spread "
          f"{fwd.max() / fwd.min():.3f}; probe tolerance {TOLERANCE:.0%}: "
          f"{int(df['probe_says_moved'].sum())} of {len(df) - 1} repeats would remake the record; "
          f"{df['seconds'].mean():.0f} s per probe")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
