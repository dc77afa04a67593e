"""python -m engine {run, matrix, calibrate, microbench, capacity}

Bad input (unknown rung, non-positive duration or rate, non-integer seed, unwritable
cache) gets one clear line on stderr and exit status 2, before any run starts.
"""
from __future__ import annotations

import argparse
import json
import sys

from . import cache
from .config import Config, rung_config
from .profiles import PROFILES
from .workload import Workload


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):                       # one line, exit 2
        raise UsageError(message)


def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value
    return parse


def _seed(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer, got {text!r}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m engine", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="one run in this (fresh) process; prints the raw log's path")
    r.add_argument("rung", nargs="?", help="rung name or slug, e.g. 'baseline' or '+gc.freeze'")
    r.add_argument("--seed", type=_seed, required=True)
    r.add_argument("--duration", type=_positive(float), required=True, help="seconds of arrivals")
    r.add_argument("--rate", type=_positive(float), help="req/s (default: this machine's calibrated rate)")
    r.add_argument("--config-json", help=argparse.SUPPRESS)
    r.add_argument("--rate-info", help=argparse.SUPPRESS)
    r.add_argument("--workload-json", help=argparse.SUPPRESS)

    m = sub.add_parser("matrix", help="a profile's runs, one at a time in fresh subprocesses, cached")
    m.add_argument("--profile", choices=list(PROFILES), default="article")
    m.add_argument("--rungs", nargs="+", help="rung names or slugs (default: all seven)")
    m.add_argument("--seeds", nargs="+", type=_seed)
    m.add_argument("--duration", type=_positive(float))
    m.add_argument("--rate", type=_positive(float))
    m.add_argument("--overload", action="store_true", help="also run the overload sidebar")

    c = sub.add_parser("calibrate", help="choose this machine's arrival rate (cached)")
    c.add_argument("--quick", action="store_true", help="capacity only, no checking runs")
    c.add_argument("--force", action="store_true", help="ignore the cached choice")

    mb = sub.add_parser("microbench", help="forward-pass ms by batch size, captured vs eager")
    mb.add_argument("--json", action="store_true", help="print the rows as JSON")

    cap = sub.add_parser("capacity", help=argparse.SUPPRESS)
    cap.add_argument("--seconds", type=_positive(float), default=20.0)
    return p


def _cmd_run(a) -> int:
    if a.config_json:
        cfg = Config.from_dict(json.loads(a.config_json))
    elif a.rung:
        cfg = rung_config(a.rung)
    else:
        raise UsageError("give a rung, e.g. python -m engine run baseline --seed 1 --duration 60")
    cache.ensure_writable(cache.runs_dir())
    if a.rate is None:
        from .calibrate import calibrated_rate
        rate, info = calibrated_rate("capacity")
    else:
        rate, info = a.rate, (json.loads(a.rate_info) if a.rate_info else {"rate": a.rate, "source": "given"})
    wl = Workload.from_dict(json.loads(a.workload_json)) if a.workload_json else Workload()
    path = cache.run_path(cfg, a.seed, a.duration, rate, wl)
    if not path.exists():
        from .experiment import execute
        execute(cfg, a.seed, a.duration, rate, path, workload=wl, rate_info=info)
    print(path)
    return 0


def _cmd_matrix(a) -> int:
    from .runner import ensure_runs, profile_specs
    rungs = [rung_config(r).name for r in a.rungs] if a.rungs else None
    cache.ensure_writable(cache.runs_dir())
    specs = profile_specs(a.profile, rungs=rungs, seeds=a.seeds, duration=a.duration, rate=a.rate)
    if a.overload:
        specs += profile_specs(a.profile, overload=True, rungs=rungs, seeds=a.seeds, duration=a.duration,
                               rate=a.rate)
    for path in ensure_runs(specs, label=f"matrix {a.profile}"):
        print(path)
    return 0


def _cmd_calibrate(a) -> int:
    from .calibrate import calibrate
    cache.ensure_writable(cache.cache_dir())
    res = calibrate(checks=not a.quick, force=a.force)
    print(f"capacity {res['capacity']['tokens_per_s']:.0f} tokens/s; proposed {res['proposed_rate']:.2f} req/s")
    for c in res["checks"]:
        print(f"  check {c['rate']:.2f} req/s: TTFT p50 {c['ttft_p50_ms']:.0f} ms, "
              f"{c['preemptions']:.0f} preemptions, {c['eager_steps']:.0f} eager steps -> {c['verdict']}")
    print(f"rate {res['rate']:.3f} req/s ({res['method']})")
    return 0


def _cmd_microbench(a) -> int:
    from .microbench import forward_ms
    rows = forward_ms()
    if a.json:
        print(json.dumps(rows))
        return 0
    print(f"{'batch':>5} {'batched ms':>11} {'eager ms':>9}")
    for row in rows:
        print(f"{row['batch']:>5} {row['batched_ms']:>11.2f} {row['eager_ms']:>9.2f}")
    return 0


def _cmd_capacity(a) -> int:
    from .calibrate import measure_capacity_here
    print(json.dumps(measure_capacity_here(a.seconds)))
    return 0


def main(argv=None) -> int:
    try:
        a = build_parser().parse_args(argv)
        return {"run": _cmd_run, "matrix": _cmd_matrix, "calibrate": _cmd_calibrate,
                "microbench": _cmd_microbench, "capacity": _cmd_capacity}[a.cmd](a)
    except (UsageError, ValueError, PermissionError) as e:
        print(f"engine: error: {e}", file=sys.stderr)
        return 2
