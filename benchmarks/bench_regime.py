"""How the regime signature depends on run length, rate and seed, and how long a run takes
to climb from an empty engine onto its steady running set.

For each rate and seed, one baseline run of --duration seconds (through the run cache, so a
rerun reads them back). A run of L seconds serves the first L seconds of the same arrivals
as a longer run of that seed and rate (engine/serve/workload.py draws arrivals in order),
so each prefix window [0, L) stands for a run of length L, less its drain. Printed, one
table each:

1. per rate and prefix length: every signature statistic as median [min-max] across seeds,
   its spread (max/min), and where the median sits against the article's regime;
2. per rate and seed: the shortest prefix from which every longer prefix reads the decode
   batch and the fullness within 10% of the whole run's (preemptions within 25%): how long
   a run from an empty engine must be to read what the whole run reads.

    python benchmarks/bench_regime.py                       # rates: 0.9, 1.0, 1.1 x the 60 s calibration
    python benchmarks/bench_regime.py --rates 9.5 10.5 11.5 --seeds 101 102 103
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import analysis  # noqa: E402
from engine.microbench import forward_ms_subprocess  # noqa: E402
from engine.runs import regime  # noqa: E402
from engine.runs.calibrate import CHECK_SEEDS, FORWARD_PROCESSES, load_calibration  # noqa: E402
from engine.runs.execute import ensure_runs  # noqa: E402
from engine.runs.spec import RunSpec  # noqa: E402
from engine.runs.target import REGIME  # noqa: E402
from engine.serve.config import LADDER  # noqa: E402

LENGTHS = (10.0, 20.0, 40.0, 60.0)
LEVELS = (0.9, 1.0, 1.1)


def tail_share(frame: pd.DataFrame, start: float, end: float, label: str = "preempt") -> float:
    """A label's share of tail time (gaps at or above the window's p99) among gaps ending in [start, end)."""
    w = frame[(frame["t1"] >= start) & (frame["t1"] < end)]
    if w.empty:
        return math.nan
    tail = w[w["gap_ms"] >= np.percentile(w["gap_ms"], 99)]
    return float(tail[label].sum() / tail["gap_ms"].sum())


def spread(values) -> str:
    v = pd.Series(values, dtype=float).dropna()
    if v.empty:
        return "-"
    fmt = "{:.2f}" if v.abs().max() < 10 else "{:.0f}"
    return f"{fmt.format(v.median())} [{fmt.format(v.min())}-{fmt.format(v.max())}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", type=float, nargs="+", help="req/s (default: 0.9/1.0/1.1 x the calibrated rate)")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(CHECK_SEEDS))
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--forward", default="article")
    a = ap.parse_args(argv)
    if a.rates:
        rates = a.rates
    else:
        cal = load_calibration("checked", a.forward, check_duration=a.duration)
        if cal is None:
            ap.error(f"no {a.duration:g} s calibration is cached; pass --rates or run "
                     f"`python -m engine calibrate --profile article` first")
        rates = [round(cal["rate"] * lv, 4) for lv in LEVELS]
    lengths = [L for L in LENGTHS if L <= a.duration]
    cfg = LADDER["baseline"]
    if a.forward != "article":
        import dataclasses
        cfg = dataclasses.replace(cfg, forward=a.forward)
    specs = [RunSpec(cfg, s, a.duration, r, {"rate": r, "source": "regime benchmark"}, group="calibration")
             for r in rates for s in a.seeds]
    paths = ensure_runs(specs, label="regime benchmark")
    reads = [next(r["batched_ms"] for r in forward_ms_subprocess(forward=a.forward) if r["batch"] == 32)
             for _ in range(FORWARD_PROCESSES)]
    b32 = float(np.median(reads))
    print(f"batch-32 forward pass here, microbenchmark: {b32:.2f} ms (median of {len(reads)} fresh processes: "
          f"{', '.join(f'{x:.2f}' for x in reads)}; default allocator); fullness reads each run's own "
          f"batch-32 forward pass (engine.runs.regime.IN_RUN), shown beside it as in-run/micro; "
          f"article regime: fullness {REGIME.fullness_range[0]:.2f}-{REGIME.fullness_range[1]:.2f}, "
          f"preemptions {REGIME.band.low:.0f}-{REGIME.band.high:.0f} per 60 s, TTFT p50 <= "
          f"{REGIME.band.max_ttft_p50_s:g} s\n")
    rows, climb = [], []
    for spec, path in zip(specs, paths):
        run = regime.read(path)
        frame = analysis.partition_run(path)
        for L in lengths:
            sig = regime.window_signature(run, regime.IN_RUN, 0.0, L)
            rows.append({"rate": spec.rate, "length": L, "seed": spec.seed, **sig,
                         "in-run/micro": sig["forward_ms_b32"] / b32,
                         "preempt_tail_share": tail_share(frame, 0.0, L), "place": REGIME.place(sig)})
        whole = regime.window_signature(run, regime.IN_RUN)
        climb.append({"rate": spec.rate, "seed": spec.seed, "decode batch, whole run": round(whole["decode_batch"], 1),
                      "batch settles (s)": regime.settle_time(run, regime.IN_RUN, "decode_batch"),
                      "fullness settles (s)": regime.settle_time(run, regime.IN_RUN, "fullness"),
                      "preemptions settle (s)": regime.settle_time(run, regime.IN_RUN, "preemptions_per_min", tol=0.25)})
    df = pd.DataFrame(rows)
    stats = ["fullness", "in-run/micro", "decode_batch", "eager_steps_per_min", "preemptions_per_min", "ttft_p50_ms",
             "preempt_tail_share"]
    out = []
    for (rate, L), g in df.groupby(["rate", "length"]):
        med = {k: float(g[k].median()) for k in ("fullness", "ttft_p50_ms", "preemptions_per_min")}
        row = {"req/s": rate, "length s": int(L)}
        for k in stats:
            row[k] = spread(g[k])
        row["places (per seed)"] = ",".join(p[0] for p in g["place"])   # b(elow) i(n band) a(bove)
        row["median place"] = REGIME.place(med)
        out.append(row)
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.max_colwidth", 30):
        print("Signature by rate and prefix length: median [min-max] across seeds "
              f"{', '.join(map(str, a.seeds))}")
        print(pd.DataFrame(out).to_string(index=False))
        sp = df.groupby(["rate", "length"])[stats[:4]].agg(lambda v: float(v.max() / v.min()) if v.min() > 0
                                                            else math.inf)
        print("\nSpread across seeds, max/min (1.00 = identical seeds):")
        print(sp.round(2).to_string())
        print("\nHow long a prefix must be to read what the whole run reads:")
        print(pd.DataFrame(climb).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
