"""Benchmark: a cold first summarize of the same raw logs under two revisions of the analysis.

    python benchmarks/bench_revisions.py [--before REV] [--after REV] [--rounds N] RAW_LOG.npz ...

A change that claims to make the analysis faster is judged here: each revision is checked
out into a temporary git worktree (``--after`` defaults to the working tree as it is), and
every round runs one fresh process per (revision, log), in an order shuffled within the
round and recorded, so that a machine's drift cannot pass for an effect. Each process
imports ``analysis`` and times its first ``summarize(path)``. The two revisions' summaries
must be identical (a speed-up that changes a number is a bug, not a speed-up). Printed per
log: both medians, and the after/before ratio paired by round (median and range).

Not a test: timings depend on the machine, so run it alone (no other heavy process).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from contextlib import ExitStack  # noqa: E402
from pathlib import Path  # noqa: E402

from tqdm import tqdm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Runs in a fresh interpreter with one revision's tree first on sys.path. Prints one JSON line.
PROBE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import analysis
t = time.perf_counter()
s = analysis.summarize(sys.argv[2])
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "summary": json.dumps(s, sort_keys=True, default=str)}))
"""


def worktree(stack: ExitStack, rev: str | None) -> Path:
    """The tree of ``rev`` (None: this working tree), removed when the stack closes."""
    if rev is None:
        return ROOT
    where = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-rev-"))) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), rev], check=True)
    stack.callback(subprocess.run, ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)
    return where


def probe(tree: Path, log: Path) -> dict:
    # run outside the repository, so that only ``tree`` on sys.path provides ``analysis``
    out = subprocess.run([sys.executable, "-c", PROBE, str(tree), str(log)], capture_output=True, text=True,
                         cwd=tempfile.gettempdir())
    if out.returncode:
        raise SystemExit(f"summarize({log}) failed under {tree}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_logs", nargs="+", type=Path, metavar="RAW_LOG")
    ap.add_argument("--before", default="HEAD", help="git revision to compare against (default HEAD)")
    ap.add_argument("--after", default=None, help="git revision measured (default: the working tree)")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--seed", type=int, default=0, help="seed of the order within each round")
    args = ap.parse_args(argv)
    args.raw_logs = [p.resolve() for p in args.raw_logs]
    missing = [str(p) for p in args.raw_logs if not p.is_file()]
    if missing:
        ap.error(f"no such raw log: {', '.join(missing)}")
    rng = random.Random(args.seed)
    with ExitStack() as stack:
        trees = {"before": worktree(stack, args.before), "after": worktree(stack, args.after)}
        cells = [(side, log) for log in args.raw_logs for side in trees]
        times = {cell: [] for cell in cells}
        summaries, order = {}, []
        with tqdm(total=args.rounds * len(cells), desc="fresh processes", unit="proc") as bar:
            for _ in range(args.rounds):
                shuffled = rng.sample(cells, len(cells))
                order.append([f"{side}:{log.name}" for side, log in shuffled])
                for side, log in shuffled:
                    got = probe(trees[side], log)
                    times[(side, log)].append(got["s"])
                    summaries.setdefault((side, log), got["summary"])
                    bar.update()
    print(f"before = {args.before}, after = {args.after or 'working tree'}; {args.rounds} rounds, "
          f"order shuffled within each (seed {args.seed}); first round: {', '.join(order[0])}")
    print(f"{'raw log':44} {'before':>9} {'after':>9} {'after/before (paired)':>28}  summaries")
    for log in args.raw_logs:
        before, after = times[("before", log)], times[("after", log)]
        ratios = [a / b for a, b in zip(after, before)]
        same = "identical" if summaries[("before", log)] == summaries[("after", log)] else "DIFFER"
        print(f"{log.name[:44]:44} {1e3 * statistics.median(before):7.1f}ms {1e3 * statistics.median(after):7.1f}ms "
              f"{statistics.median(ratios):10.3f} [{min(ratios):.3f}-{max(ratios):.3f}]       {same}")
    return 0 if all(summaries[("before", log)] == summaries[("after", log)] for log in args.raw_logs) else 1


if __name__ == "__main__":
    sys.exit(main())
