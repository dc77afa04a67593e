"""Benchmark: what summarizing a run costs, as a user meets it, next to the article's script.

    python benchmarks/bench_partition.py [RAW_LOG.npz ...] [--light] [--repeat N] [--processes N]

All in one run, for each raw log given (default: the golden 60 s baseline log written by
the article's own engine: 8,627 steps, 34,907 segments, 116,861 tokens):

1. cold, in fresh processes: ``import analysis`` and a first ``summarize(path)``,
   each first call broken down by stage (reading the archive, validating it, the
   partition, the summary) with the page faults each stage takes, plus the imports
   and library warm-up the first call pays (its time beyond the same stages run
   warm) and what it imported;
2. warm, in this process: the same stages again (medians), the summaries cache
   (a hit, and a miss with its atomic write), the whole-run partition against the
   scalar Partitioner called once per gap, and peak memory;
3. side by side: the article's ``analyze.py`` (cut out of the article text at run
   time, run as-is as a whole process) against our first ``summarize(path)`` and our
   whole process (``python -c`` import + summarize), all four kinds of fresh process
   run once a round in a shuffled order, with ratios paired by round and the goals
   set when the whole-run path was made fast: import + first summarize at most half of
   the 0.64 s import and 0.195 s first summarize measured before it; first summarize
   <= 1/50 of the article's whole process; and first summarize <= 100 ms cold.

Then one table of every log's cold numbers. ``--light`` adds a log of the other shape: the
article's engine at a light load (seed 1, 6.5 req/s, 60 s of arrivals: many small steps,
50,000-80,000 steps and 200,000-320,000 segments for 113,000 gaps on 2-core machines of
this kind: the faster the machine, the smaller its steps), made by
``engine.fidelity_runs.run_article`` (cut from the article's text, which
``ITL_ARTICLE_TEXT`` can point at; about 90 s of one process the first time, then cached
under the cache folder's ``fidelity_runs/``).

Not a test: timings depend on the machine, so run it alone (no other heavy process).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

from tqdm import tqdm  # noqa: E402

from engine.runs.target import RATE as ARTICLE_RATE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOG = ROOT / "tests" / "data" / "golden" / "ladder-r7.5-baseline__s1.npz"
ARTICLE = Path(os.environ.get("ITL_ARTICLE_TEXT") or ROOT.parent / "shared" / "seed" / "000_6ff97997f1f5eff0.txt")
LIGHT = dict(seed=1, duration=60.0, rate=ARTICLE_RATE)   # the article's engine at its own rate: a light load here
LISTINGS = {  # as tests/analysis/test_article_compat.py cuts them
    "attribution.py": ("attribution.py — the exclusive gap partitioner\n", "test_attribution.py — unit tests"),
    "analyze.py": ("analyze.py — recomputes every number from the raw logs\n", "DEV Community"),
}
GOAL_IMPORT_AND_FIRST_S = (0.64 + 0.195) / 2     # half of the import + first summarize measured before
GOAL_RATIO = 50.0
GOAL_FIRST_S = 0.100    # first summarize, cold, on either shape of log

# Runs in a fresh interpreter: the cold numbers. Prints one JSON line.
COLD_PROBE = r"""
import resource, sys, time
t0 = time.perf_counter()
import analysis
t_import = time.perf_counter() - t0
before = set(sys.modules)
import numpy as np
from analysis.core.gaps import partition_gaps
from analysis.core.runlog import RunLog
path = sys.argv[1]

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def read():  # as load() reads
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}

def stages():
    s, f = {}, {}
    def step(name, fn):
        f0, t = faults(), time.perf_counter()
        out = fn()
        s[name], f[name] = time.perf_counter() - t, faults() - f0
        return out
    arrays = step("read", read)
    log = step("validate", lambda: RunLog.from_arrays(path, **arrays))
    gaps = step("partition", lambda: partition_gaps(log))
    step("summary", lambda: analysis.summarize(log, gaps=gaps))
    return s, f

if sys.argv[2] == "first":
    t = time.perf_counter()
    analysis.summarize(path)
    first = time.perf_counter() - t
    new = sorted(m for m in set(sys.modules) - before if "." not in m and not m.startswith("_"))
    out = {"import": t_import, "first": first, "imported": new}
else:
    cold, cold_faults = stages()
    warm = [stages()[0] for _ in range(5)]
    out = {"cold": cold, "faults": cold_faults, "warm": {k: sorted(w[k] for w in warm)[2] for k in cold}}
print(__import__("json").dumps(out))
"""


def median(xs):
    return statistics.median(xs)


def fresh(args, env_path=True):
    env = {**os.environ, "PYTHONPATH": str(ROOT)} if env_path else dict(os.environ)
    t = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"{args[:3]} failed:\n{proc.stderr}")
    return wall, proc.stdout


def timed(fn, repeat):
    """(median seconds, last result) over ``repeat`` calls."""
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return median(times), out


def per_gap_loop(analysis, log):
    """What a per-gap analysis does: one Python call per gap."""
    part = analysis.Partitioner(analysis.steps_from_log(log), log.gcs[:, :2].tolist())
    evictions = analysis.evictions_by_request(log)
    by_request = {}
    for rid, t, k in log.emissions.tolist():
        by_request.setdefault(int(rid), []).append((t, int(k)))
    rows = []
    for rid, tokens in by_request.items():
        ev = evictions.get(rid, ())
        for (ta, _), (tb, _) in zip(tokens, tokens[1:]):
            parts, ctx = part.gap(ta, tb, ev)
            gap = (tb - ta) * 1e3
            rows.append((gap, parts, ctx, analysis.primary_cause(gap, parts)))
    return rows


def article_script(folder: Path) -> Path:
    text = ARTICLE.read_text()
    for name, (start, end) in LISTINGS.items():
        i = text.index(start) + len(start)
        (folder / name).write_text(text[i:text.index(end, i)])
    return folder / "analyze.py"


def ms(s):
    return f"{s * 1e3:8.1f} ms"


def light_log() -> Path:
    """The light-load log of the article's engine (made once, then cached)."""
    sys.path.insert(0, str(ROOT))
    from engine.fidelity_runs import run_article
    path = run_article(LIGHT["seed"], LIGHT["duration"], LIGHT["rate"], seed_text=ARTICLE)
    if path is None:
        raise SystemExit(f"--light needs the article's text to cut its engine from: {ARTICLE} "
                         f"is missing (set ITL_ARTICLE_TEXT)")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_logs", nargs="*", metavar="RAW_LOG", help=f"default: {DEFAULT_LOG.name}")
    ap.add_argument("--light", action="store_true",
                    help="add the article engine's light-load log (many small steps; made if missing)")
    ap.add_argument("--repeat", type=int, default=7, help="repetitions of each warm measurement")
    ap.add_argument("--processes", type=int, default=9, help="rounds of fresh-process measurements")
    ap.add_argument("--seed", type=int, default=0, help="seed of the order within each round")
    args = ap.parse_args()
    paths = [Path(p) for p in args.raw_logs] or ([] if args.light else [DEFAULT_LOG])
    if args.light:
        paths.append(light_log())
    rows = []
    for path in paths:
        if len(paths) > 1:
            print(f"\n{'=' * 100}")
        rows.append(bench(str(path.resolve()), args))
    print(f"\nCOLD, every log (fresh processes, medians of {args.processes}; goal: first summarize "
          f"<= {GOAL_FIRST_S * 1e3:.0f} ms)")
    print(f"  {'raw log':<44}{'steps':>8}{'segments':>10}{'gaps':>9}{'import':>10}{'first':>10}"
          f"{'analyze.py':>12}{'ratio':>8}")
    for r in rows:
        print(f"  {r['name'][:43]:<44}{r['steps']:8,}{r['segs']:10,}{r['gaps']:9,}{r['import'] * 1e3:8.1f}ms"
              f"{r['first'] * 1e3:8.1f}ms{r['theirs'] * 1e3:10.0f}ms{r['ratio']:7.1f}x  "
              f"{'met' if r['first'] <= GOAL_FIRST_S else 'NOT met'}")


def bench(path: str, args) -> dict:
    """Measure one raw log, print its report, return its headline numbers."""
    py = sys.executable

    # ------------------------------------------------------------- cold, and theirs
    # one round = each fresh-process measurement once, in a shuffled order, so that a
    # drift of the machine falls on both sides of every ratio; ratios are taken within
    # a round (paired), then their median
    firsts, staged, ours_whole, theirs = [], [], [], []
    order = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        script = article_script(Path(tmp))
        kinds = {
            "first": lambda: firsts.append(json.loads(fresh([py, "-c", COLD_PROBE, path, "first"])[1])),
            "stages": lambda: staged.append(json.loads(fresh([py, "-c", COLD_PROBE, path, "stages"])[1])),
            "whole": lambda: ours_whole.append(
                fresh([py, "-c", f"import analysis; analysis.summarize({path!r})"])[0]),
            "theirs": lambda: theirs.append(fresh([py, str(script), path], env_path=False)[0]),
        }
        rounds = range(args.processes)
        for _ in tqdm(rounds, desc="fresh-process rounds", unit="round", leave=False):
            for kind in order.sample(list(kinds), len(kinds)):
                kinds[kind]()
    imp = median([f["import"] for f in firsts])
    first = median([f["first"] for f in firsts])
    cold = {k: median([s["cold"][k] for s in staged]) for k in staged[0]["cold"]}
    cold_faults = {k: median([s["faults"][k] for s in staged]) for k in staged[0]["faults"]}
    warm_in_fresh = {k: median([s["warm"][k] for s in staged]) for k in staged[0]["warm"]}
    theirs_s = median(theirs)
    ratio_first = median([t / f["first"] for t, f in zip(theirs, firsts)])
    ratio_whole = median([t / w for t, w in zip(theirs, ours_whole)])
    spread_first = (min(t / f["first"] for t, f in zip(theirs, firsts)),
                    max(t / f["first"] for t, f in zip(theirs, firsts)))

    # ------------------------------------------------------------------ warm, here
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import analysis
    from analysis.across_runs import summaries
    load_s, log = timed(lambda: analysis.load(path), args.repeat)
    part_s, gaps = timed(lambda: analysis.partition_gaps(log), args.repeat)
    summ_s, _ = timed(lambda: analysis.summarize(log, gaps=gaps), args.repeat)
    whole_s, summary = timed(lambda: analysis.summarize(path), args.repeat)
    frame_s, frame = timed(lambda: analysis.partition_run(log), args.repeat)
    slow_s, rows = timed(lambda: per_gap_loop(analysis, log), 1)
    slow = np.array([[r[1][k] for k in analysis.LABELS] for r in rows])
    assert np.array_equal(frame["gap_ms"].to_numpy(), np.array([r[0] for r in rows]))
    diff = float(np.abs(frame[analysis.LABELS].to_numpy() - slow).max())
    cache_dir = os.environ.get("ITL_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ITL_CACHE_DIR"] = tmp
        t = time.perf_counter()
        summaries.summary_cached(path)
        miss_s = time.perf_counter() - t
        hit_s, _ = timed(lambda: summaries.summary_cached(path), args.repeat)
    if cache_dir is None:
        del os.environ["ITL_CACHE_DIR"]
    else:
        os.environ["ITL_CACHE_DIR"] = cache_dir
    tracemalloc.start()
    analysis.summarize(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # ------------------------------------------------------------------ report
    n = len(frame)
    print(f"raw log      {Path(path).name}: {len(log.steps)} steps, {len(log.segs)} segments, "
          f"{len(log.gcs)} GC pauses, {len(log.evictions)} evictions, {n} gaps; p99 {summary['itl_p99']:.2f} ms")
    print(f"\nCOLD (fresh processes, medians of {args.processes})")
    print(f"  import analysis           {ms(imp)}")
    print(f"  first summarize(path)     {ms(first)}")
    stage_sum = sum(cold.values())
    for k in cold:
        print(f"    {k:<22}  {ms(cold[k])}   warm in the same process {ms(warm_in_fresh[k])}"
              f"   {cold_faults[k]:6,.0f} page faults cold")
    print(f"    first-call overhead     {ms(stage_sum - sum(warm_in_fresh.values()))}   "
          f"(the stages cold minus warm: imports and warm-up paid inside the first call)")
    print(f"    imported by the first call: {', '.join(firsts[0]['imported']) or 'nothing'}")
    print(f"  whole process (python -c) {ms(median(ours_whole))}")
    print(f"\nWARM (this process, medians of {args.repeat})")
    print(f"  load (read + validate)    {ms(load_s)}")
    print(f"  partition (arrays)        {ms(part_s)}   {n / part_s:12,.0f} gaps/s")
    print(f"  partition_run (DataFrame) {ms(frame_s)}")
    print(f"  summary of the partition  {ms(summ_s)}")
    print(f"  summarize(path)           {ms(whole_s)}")
    print(f"  summaries cache           miss {ms(miss_s)} (summarize + atomic write), hit {ms(hit_s)}")
    print(f"  per-gap scalar loop       {ms(slow_s)}   {n / slow_s:12,.0f} gaps/s; whole-run is "
          f"{slow_s / part_s:.0f}x faster; max |difference| {diff:.1e} ms")
    print(f"  memory                    summarize peak {peak / 2**20:.1f} MB traced; max RSS {rss_mb:.0f} MB")
    print(f"\nSIDE BY SIDE with the article's analyze.py (whole process; {args.processes} rounds, "
          f"shuffled within each; ratios paired by round, then the median)")
    print(f"  article analyze.py        {ms(theirs_s)}")
    print(f"  ours, whole process       {ms(median(ours_whole))}   {ratio_whole:6.1f}x faster")
    print(f"  ours, first summarize     {ms(first)}   {ratio_first:6.1f}x faster "
          f"[{spread_first[0]:.1f}-{spread_first[1]:.1f}x across rounds] "
          f"(goal >= {GOAL_RATIO:.0f}x: {'met' if ratio_first >= GOAL_RATIO else 'NOT met'})")
    print(f"  ours, import + first      {ms(imp + first)}   goal <= {ms(GOAL_IMPORT_AND_FIRST_S).strip()}: "
          f"{'met' if imp + first <= GOAL_IMPORT_AND_FIRST_S else 'NOT met'}")
    print(f"  ours, first summarize     {ms(first)}   goal <= {ms(GOAL_FIRST_S).strip()}: "
          f"{'met' if first <= GOAL_FIRST_S else 'NOT met'}")
    return {"name": Path(path).name, "steps": len(log.steps), "segs": len(log.segs), "gaps": n,
            "import": imp, "first": first, "theirs": theirs_s, "ratio": ratio_first}


if __name__ == "__main__":
    main()
