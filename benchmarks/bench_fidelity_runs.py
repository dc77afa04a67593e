"""Fidelity in runs: our engine's whole runs against the article engine's, mechanism by mechanism.

    python benchmarks/bench_fidelity_runs.py --seeds 1 2 --duration 60 --rate 9.5
    python benchmarks/bench_fidelity_runs.py --probe        # the decode probe (see below)

For each seed, a run of the baseline rung by each engine (engine/fidelity_runs.py):
ours through the book's run cache, the article's engine cut from ../shared/seed at run
time (never copied into the repository) and run unmodified; each in a fresh
single-threaded process with the default allocator; the order alternates by seed. Prints
one table per seed (analysis/instrument/run_fidelity.py) and, with several seeds, one of
the events of all seeds pooled. --probe times one decode forward of each engine over
KV caches never written (as the microbenchmark builds them) and written (as in a run),
each in its own fresh process (engine/decode_probe.py). Run it alone on the machine.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.instrument import run_fidelity as R  # noqa: E402
from analysis.instrument import run_fidelity_page as P  # noqa: E402
from engine.fidelity_runs import run_pair  # noqa: E402
from engine.runs.cache import REPO  # noqa: E402
from engine.runs.child import child_env  # noqa: E402


def probe_table(rounds: int = 2) -> str:
    env = {k: v for k, v in child_env().items() if not k.startswith("MALLOC_")}
    got = {}
    for r in range(rounds):
        for side, kv in (("ours", "blank"), ("theirs", "blank"), ("ours", "written"), ("theirs", "written"))[::1 if r % 2 == 0 else -1]:
            out = subprocess.run([sys.executable, "-m", "engine.decode_probe", side, kv], env=env, cwd=REPO,
                                 capture_output=True, text=True, check=True).stdout
            for row in json.loads(out.strip().splitlines()[-1]):
                got.setdefault((row["path"], row["batch"]), {}).setdefault((side, kv), []).append(row)
    lines = [f"{'decode, context 600':<18}" + "".join(f"{s + ', ' + k:>22}" for s, k in
             (("ours", "blank"), ("theirs", "blank"), ("ours", "written"), ("theirs", "written")))
             + f"{'ratio blank':>12}{'ratio written':>14}"]
    for (path, b), by in got.items():
        ms = {sk: np.median([x["ms"] for x in v]) for sk, v in by.items()}
        flt = {sk: np.median([x["faults"] for x in v]) for sk, v in by.items()}
        cells = "".join(f"{ms[sk]:>12.2f} ms {flt[sk]:>4.0f} pf" for sk in
                        (("ours", "blank"), ("theirs", "blank"), ("ours", "written"), ("theirs", "written")))
        lines.append(f"{path + ' ' + str(b):<18}{cells}{ms[('ours', 'blank')] / ms[('theirs', 'blank')]:>12.2f}"
                     f"{ms[('ours', 'written')] / ms[('theirs', 'written')]:>14.2f}")
    lines.append(f"medians over {rounds} fresh processes per column (each the median of 30 calls); pf = minor "
                 "page faults per call; blank = K never written (as the microbenchmark builds it)")
    return "\n".join(lines)


def fault_study(seed: int, duration: float, rate: float) -> str:
    """Each engine's run with its decode forward wrapped (engine/fault_study.py), ours
    first; per path and padded size: calls, median ms, mean minor page faults per call."""
    import tempfile
    from engine.fidelity_runs import article_env, article_sources
    got = {}
    for side in ("ours", "theirs"):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d, "faults.json")
            if side == "theirs":
                for name, src in article_sources().items():
                    Path(d, name).write_text(src)
                cmd, cwd, env = [sys.executable, str(REPO / "engine" / "fault_study.py")], d, article_env(rate)
            else:
                cmd, cwd = [sys.executable, "-m", "engine.fault_study"], REPO
                env = {k: v for k, v in child_env().items() if not k.startswith("MALLOC_")}
            subprocess.run(cmd + [side, str(seed), str(duration), str(rate), str(out)], cwd=cwd, env=env,
                           check=True, capture_output=True, text=True)
            got[side] = np.array([(p == "eager", b, ms, f) for p, b, ms, f in json.loads(out.read_text())])
    sizes = (1, 2, 4, 8, 16, 24, 32)
    lines = [f"{'decode':<14}" + "".join(f"{s + ' calls':>13}{s + ' ms':>10}{s + ' faults':>13}" for s in got)]
    for eager, lo, hi in [(0, s, s) for s in sizes] + [(1, 33, 40), (1, 41, 48)]:
        label = f"captured {lo}" if not eager else f"eager {lo}-{hi}"
        cells = ""
        for a in got.values():
            pick = (a[:, 0] == eager) & (a[:, 1] >= lo) & (a[:, 1] <= hi)
            cells += (f"{pick.sum():>13}{np.median(a[pick, 2]) if pick.any() else np.nan:>10.3f}"
                      f"{a[pick, 3].mean() if pick.any() else np.nan:>13.1f}")
        lines.append(f"{label:<14}{cells}")
    lines.append(f"seed {seed}, {duration:g} s at {rate:g} req/s; faults = mean minor page faults per decode call")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", nargs="+", type=int, default=[1])
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--rate", type=float)
    p.add_argument("--probe", action="store_true")
    p.add_argument("--faults", action="store_true", help="the page-fault study (engine/fault_study.py)")
    a = p.parse_args()
    if a.probe:
        print(probe_table())
        return 0
    if a.rate is None:
        p.error("--rate is required for runs")
    if a.faults:
        print(fault_study(a.seeds[0], a.duration, a.rate))
        return 0
    ours, theirs = [], []
    for i, seed in enumerate(a.seeds):
        o, t = run_pair(seed, a.duration, a.rate, ours_first=i % 2 == 0)
        if t is None:
            print("the article's text was not found (set ITL_ARTICLE_TEXT): nothing to compare")
            return 1
        ours.append(R.read_log(o))
        theirs.append(R.read_log(t))
        print(f"seed {seed}: {a.duration:g} s at {a.rate:g} req/s\n{P.load_table(ours[-1], theirs[-1]).to_string()}")
        print(P.format_table(R.ratio_table(ours[-1], theirs[-1])) + "\n")
    if len(a.seeds) > 1:
        print(f"seeds {', '.join(map(str, a.seeds))} pooled")
        print(P.format_table(R.ratio_table(ours, theirs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
