"""python -m engine.real --rung baseline --seed 1 --duration 20 --rate 5 --out run.npz

One real-engine run in this (fresh) process; prints the raw log's path."""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv=None) -> int:
    from .config import RUNGS, rung_config
    from .internals import ChangedInternals
    from .replay import execute

    p = argparse.ArgumentParser(prog="python -m engine.real", description=__doc__.splitlines()[0])
    p.add_argument("--rung", default="baseline", choices=list(RUNGS))
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    try:
        print(execute(rung_config(a.rung), a.seed, a.duration, a.rate, a.out))
    except (ChangedInternals, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
