"""Benchmark: partition a whole run two ways, in one process, on the same raw log.

    python benchmarks/bench_partition.py [RAW_LOG.npz] [--repeat N]

* whole-run path: analysis.partition_run (numpy, all gaps at once);
* per-gap loop:   the scalar analysis.Partitioner called once per gap from Python,
  computing what the article's analysis loop computed per gap (parts, context,
  primary cause, reconciliation error, skipped-step check).

Prints gaps per second for both, their ratio, the time of a full
``summarize(path)`` (load + partition + summary) and its peak memory.  Not a test:
timings depend on the machine, so run it alone (no other heavy process), with
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1.  Goal (issue 3): a 60 s run summarized in
under 1 s, >= 50x the per-gap loop, peak memory under 300 MB.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import analysis  # noqa: E402

DEFAULT_LOG = ROOT.parent / "shared" / "golden" / "ladder-r7.5-baseline__s1.npz"


def timed(fn, repeat):
    """(median seconds, min seconds, last result) over ``repeat`` calls."""
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), out


def per_gap_loop(log):
    """What a per-gap analysis does: one Python call per gap."""
    part = analysis.Partitioner(analysis.steps_from_log(log), log.gcs[:, :2].tolist())
    evictions = analysis.evictions_by_request(log)
    by_request = {}
    for rid, t, k in log.emissions.tolist():
        by_request.setdefault(int(rid), []).append((t, int(k)))
    rows, worst, skipped = [], 0.0, 0
    for rid, tokens in by_request.items():
        ev = evictions.get(rid, ())
        for (ta, ka), (tb, kb) in zip(tokens, tokens[1:]):
            parts, ctx = part.gap(ta, tb, ev)
            gap = (tb - ta) * 1e3
            worst = max(worst, abs(sum(parts.values()) - gap))
            if kb > ka + 1 and not any(a < tb and (b is None or b > ta) for a, b in ev):
                skipped += 1
            rows.append((gap, parts, ctx, analysis.primary_cause(gap, parts)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_log", nargs="?", default=str(DEFAULT_LOG))
    ap.add_argument("--repeat", type=int, default=7, help="repetitions of the fast path")
    args = ap.parse_args()
    path = Path(args.raw_log)

    load_s, _, log = timed(lambda: analysis.load(path), args.repeat)
    n_gaps = len(log.emissions) - len(np.unique(log.emissions[:, 0]))
    print(f"raw log   {path.name}: {len(log.steps)} steps, {len(log.segs)} segments, "
          f"{len(log.gcs)} GC pauses, {len(log.evictions)} evictions, {n_gaps} gaps")

    fast_s, fast_min, frame = timed(lambda: analysis.partition_run(log), args.repeat)
    slow_s, _, rows = timed(lambda: per_gap_loop(log), 1)
    assert len(rows) == len(frame) == n_gaps

    # the two must agree before their speeds mean anything; both visit gaps in the
    # same order (requests by first appearance, tokens in file order)
    slow = np.array([[r[1][k] for k in analysis.LABELS] for r in rows])
    assert np.array_equal(frame["gap_ms"].to_numpy(), np.array([r[0] for r in rows]))
    diff = float(np.abs(frame[analysis.LABELS].to_numpy() - slow).max())

    summ_s, summ_min, summary = timed(lambda: analysis.summarize(path), args.repeat)
    tracemalloc.start()
    analysis.summarize(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"load      {load_s * 1e3:8.1f} ms (median of {args.repeat})")
    print(f"whole-run {fast_s * 1e3:8.1f} ms  {n_gaps / fast_s:12,.0f} gaps/s "
          f"(median of {args.repeat}; best {fast_min * 1e3:.1f} ms)")
    print(f"per-gap   {slow_s * 1e3:8.1f} ms  {n_gaps / slow_s:12,.0f} gaps/s (one run)")
    print(f"ratio     {slow_s / fast_s:8.1f} x  (whole-run vs per-gap loop, medians)")
    print(f"agreement max |whole-run - per-gap| = {diff:.2e} ms over all labels and gaps")
    print(f"summarize {summ_s * 1e3:8.1f} ms  (load + partition + summary, median of "
          f"{args.repeat}; best {summ_min * 1e3:.1f} ms; p99 = {summary['itl_p99']:.2f} ms)")
    print(f"memory    summarize peak {peak / 2**20:.1f} MB traced (numpy + Python); "
          f"process max RSS {rss_mb:.0f} MB (includes the per-gap loop and imports)")
    ok = summ_s < 1.0 and slow_s / fast_s >= 50 and peak / 2**20 < 300
    print("goal      " + ("met" if ok else "NOT met") +
          " (summarize < 1 s, ratio >= 50x, peak < 300 MB)")


if __name__ == "__main__":
    main()
