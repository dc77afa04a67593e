"""python -m engine {run, matrix, calibrate, microbench, capacity}

Bad input (unknown rung or forward, a duration or rate that is not a finite positive
number in range, a seed that is not an integer in [0, 2**32), a run that would serve no
request, a config JSON with a wrong type, an out-of-range value or an unknown field, an
unwritable cache) gets one clear line on stderr and exit status 2, before any run starts.
Too little free space for the raw log (checked before measuring), a full disk while it
is written, or a child run killed as hung gets one line and exit status 1; nothing is
kept and the cache stays valid. Ctrl-C gets one line and exit status 130.
"""
from __future__ import annotations

import argparse
import errno
import json
import math
import sys
import warnings

from .runs import cache
from .runs.profiles import PROFILES
from .runs.child import ChildFailed
from .runs.spec import MAX_DURATION, MAX_RATE, MAX_SEED, check_has_requests, expected_log_bytes
from .serve.config import FORWARDS, PREEMPT_MODES, Config, rung_config
from .serve.workload import Workload


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):                       # one line, exit 2
        raise UsageError(message)


def _positive(kind, upper=math.inf):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
        if not (math.isfinite(value) and 0 < value <= upper):
            raise argparse.ArgumentTypeError(f"must be a finite number in (0, {upper:g}], got {text!r}")
        return value
    return parse


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_SEED:
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        raise argparse.ArgumentTypeError(f"seed must be an integer in [0, {MAX_SEED}], got {shown!r}")
    return value


def _json_object(text):
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m engine", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="one run in this (fresh) process; prints the raw log's path")
    r.add_argument("rung", nargs="?", help="rung name or slug, e.g. 'baseline' or '+gc.freeze'")
    r.add_argument("--seed", type=_seed, required=True)
    r.add_argument("--duration", type=_positive(float, MAX_DURATION), required=True, help="seconds of arrivals")
    r.add_argument("--rate", type=_positive(float, MAX_RATE), help="req/s (default: this machine's calibrated rate)")
    r.add_argument("--forward", choices=FORWARDS, help="the model's numerics (default: the rung's, 'article')")
    r.add_argument("--config-json", type=_json_object, help="a whole Config as JSON (instead of a rung)")
    r.add_argument("--preempt-mode", choices=PREEMPT_MODES,
                   help="what an eviction does with the victim's KV (default: the rung's, 'swap')")
    r.add_argument("--rate-info", type=_json_object, help=argparse.SUPPRESS)
    r.add_argument("--workload-json", type=_json_object, help=argparse.SUPPRESS)
    r.add_argument("--schedule-json", type=_json_object, help=argparse.SUPPRESS)
    r.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)   # runs measured beside it, itself included

    m = sub.add_parser("matrix", help="a profile's runs in fresh subprocesses, cached (see --jobs)")
    m.add_argument("--profile", choices=list(PROFILES), default="article")
    m.add_argument("--rungs", nargs="+", help="rung names or slugs (default: all seven)")
    m.add_argument("--seeds", nargs="+", type=_seed)
    m.add_argument("--duration", type=_positive(float, MAX_DURATION))
    m.add_argument("--rate", type=_positive(float, MAX_RATE))
    m.add_argument("--overload", action="store_true", help="also run the overload sidebar")
    m.add_argument("--jobs", help="runs measured at once, each on its own physical core: a number >= 1 or "
                                  "'auto' (one per core, less one; serial below 4 cores). Default: ITL_JOBS, else auto")
    m.add_argument("--executor", help="serial, local, submitit-local or slurm (default: ITL_EXECUTOR, else "
                                      "serial for one job and local for more)")

    c = sub.add_parser("calibrate", help="choose this machine's arrival rate (cached)")
    c.add_argument("--profile", choices=list(PROFILES),
                   help="calibrate as this profile's build does (its check lengths), into the cache it reuses")
    c.add_argument("--json", action="store_true", help="print one JSON line: rate, target, every check")
    c.add_argument("--check-duration", type=_positive(float, MAX_DURATION), default=None,
                   help="seconds per checking run (default 60; ignored with --profile)")
    c.add_argument("--quick", action="store_true", help="capacity only, no checking runs")
    c.add_argument("--force", action="store_true", help="ignore the cached choice")
    c.add_argument("--forward", choices=FORWARDS, default="article")

    mb = sub.add_parser("microbench", help="forward-pass ms by batch size, captured vs eager")
    mb.add_argument("--json", action="store_true", help="print the rows as JSON")
    mb.add_argument("--context", type=int, default=600, help="tokens of context per row (default 600)")
    mb.add_argument("--forward", choices=FORWARDS, default="article")

    fi = sub.add_parser("fidelity", help="our engine's costs beside the article engine's, mechanism by mechanism")
    fi.add_argument("--json", action="store_true", help="print the result as JSON")
    fi.add_argument("--repeats", type=int, default=15, help="alternating rounds (default 15)")

    cap = sub.add_parser("capacity", help=argparse.SUPPRESS)
    cap.add_argument("--seconds", type=_positive(float), default=20.0)
    cap.add_argument("--forward", choices=FORWARDS, default="article")
    return p


def run_config(a) -> Config:
    """The Config a `run` command line asks for: a rung or a whole Config as JSON, then
    --forward and --preempt-mode over it."""
    if a.config_json:
        cfg = Config.from_dict(a.config_json)
    elif a.rung:
        cfg = rung_config(a.rung)
    else:
        raise UsageError("give a rung, e.g. python -m engine run baseline --seed 1 --duration 60")
    import dataclasses
    if a.forward:
        cfg = dataclasses.replace(cfg, forward=a.forward)
    if a.preempt_mode:
        cfg = dataclasses.replace(cfg, preempt_mode=a.preempt_mode)
    return cfg


def _cmd_run(a) -> int:
    cfg = run_config(a)
    wl = Workload.from_dict(a.workload_json) if a.workload_json else Workload()
    if a.rate is None:
        from .runs.calibrate import calibrated_rate
        rate, info = calibrated_rate("capacity", cfg.forward)
    else:
        rate, info = a.rate, (a.rate_info or {"rate": a.rate, "source": "given"})
    path = cache.run_path(cfg, a.seed, a.duration, rate, wl, a.concurrency)
    if not cache.is_cached(path):            # a cached log is only read: the folder may be read-only
        what = f"run {cfg.name!r} seed {a.seed} @ {rate:.2f} req/s, {a.duration:g} s"
        check_has_requests(a.seed, a.duration, rate, wl)
        cache.ensure_writable(path.parent, why=f"{what} is not cached and must be measured there")
        cache.ensure_space(path.parent, expected_log_bytes(a.duration, rate, wl), f"the raw log of {what}")
        with cache.measuring(what):
            if not cache.is_cached(path):    # or another process measured it while we waited
                _execute(cfg, a, rate, path, wl, info)
    print(path)
    return 0


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def _execute(cfg, a, rate, path, wl, info) -> None:
    from .serve.experiment import execute
    cache.sweep_temp_files(path.parent)
    try:
        execute(cfg, a.seed, a.duration, rate, path, workload=wl, rate_info=info, schedule=a.schedule_json)
    except OSError as e:
        if e.errno not in DISK_FULL:
            raise
        raise OSError(e.errno, f"could not write the raw log {path.name} ({e.strerror}); nothing was kept "
                               f"in {path.parent}: free space there or set {cache.CACHE_ENV} to another "
                               f"folder") from None


def _cmd_matrix(a) -> int:
    from .runs.execute import ensure_runs
    from .runs.protocol import profile_specs
    from .runs.executors import configure
    configure(a.jobs, a.executor)           # the specs and the calibration below use this level
    rungs = [rung_config(r).name for r in a.rungs] if a.rungs else None
    specs = profile_specs(a.profile, rungs=rungs, seeds=a.seeds, duration=a.duration, rate=a.rate)
    if a.overload:
        specs += profile_specs(a.profile, overload=True, rungs=rungs, seeds=a.seeds, duration=a.duration,
                               rate=a.rate)
    for path in ensure_runs(specs, label=f"matrix {a.profile}"):
        print(path)
    return 0


def _cmd_calibrate(a) -> int:
    import time

    from .runs.calibrate import CHECK_DURATION, calibrate, carried_rate
    from .runs.freshness import confirm
    from .runs.profiles import get_profile
    from .runs.target import REGIME
    t0 = time.time()
    if a.profile:
        prof = get_profile(a.profile)
        checks = prof.calibration == "checked"
        lengths = sorted({prof.check_duration, prof.sweep_duration}) if checks else [None]
    else:
        checks, lengths = not a.quick, [a.check_duration or CHECK_DURATION]
    # as a build does before it measures: an older record is confirmed against capacity now
    fresh = confirm(prof, a.forward, progress=not a.json) if a.profile and checks and not a.force else None
    records = [calibrate(checks=checks, force=a.force, forward=a.forward, check_duration=L or CHECK_DURATION,
                         progress=not a.json) for L in lengths]
    if a.profile and a.forward == "article":
        from .runs.sweep import capacity_scale
        capacity_scale(prof, "fast")         # the sweep's fast forward is scaled by its own capacity
    main = records[lengths.index(prof.check_duration)] if a.profile and checks else records[0]
    # the ladder's own seeds run where they ask for the decode tokens the check seeds did
    ladder = carried_rate(main, prof.seeds, prof.duration) if a.profile else None
    if a.json:
        from dataclasses import asdict
        print(json.dumps({"profile": a.profile, "forward": a.forward, "rate": main["rate"], "ladder": ladder,
                          "confirmed": fresh,
                          "target": asdict(REGIME), "seconds": round(time.time() - t0, 1),
                          "calibrations": [{k: r.get(k) for k in ("rate", "method", "check_duration_s",
                                                                  "band_reached", "proposed_rate",
                                                                  "seconds_taken", "checks")}
                                           | {"capacity_tokens_per_s": r["capacity"]["tokens_per_s"],
                                              "forward_ms_b32": r["capacity"].get("forward_ms_b32")}
                                           for r in records]}))
        return 0
    for res in records:
        cap = res["capacity"]
        b32 = f"; batch-32 forward {cap['forward_ms_b32']:.2f} ms" if "forward_ms_b32" in cap else ""
        print(f"capacity {cap['tokens_per_s']:.0f} tokens/s{b32}; proposed {res['proposed_rate']:.2f} req/s")
        for c in res["checks"]:
            print(f"  check {c['rate']:.2f} req/s, {res['check_duration_s']:g} s, median of {len(c['per_seed'])} "
                  f"seeds: fullness {c.get('fullness', float('nan')):.2f}, "
                  f"{c['preemptions_per_min']:.0f} preemptions/min, {c['eager_steps_per_min']:.0f} eager "
                  f"steps/min, TTFT p50 {c['ttft_p50_ms']:.0f} ms -> {c['place']}"
                  + (f" (by {c['decided_by']})" if "decided_by" in c else ""))
        reached = {True: "in the article's regime", False: "regime NOT reached",
                   None: "capacity only"}[res["band_reached"]]
        length = f", {res['check_duration_s']:g} s checks" if res.get("check_duration_s") else ""
        print(f"rate {res['rate']:.3f} req/s ({res['method']}{length}, {reached}, "
              f"{res['seconds_taken']:.0f} s to calibrate)")
    if ladder:
        print(f"ladder (seeds {', '.join(map(str, prof.seeds))}, {prof.duration:g} s): {ladder['rate']:.3f} req/s, "
              f"where its seeds ask for as many decode tokens per second as the check seeds did "
              f"({ladder['check_demand']:.3f} of the expected; the ladder's seeds {ladder['demand_at_check_rate']:.3f} "
              f"at the checks' rate)")
    return 0


def _cmd_microbench(a) -> int:
    from .microbench import forward_ms
    if a.context < 1:
        raise UsageError(f"--context must be >= 1, got {a.context}")
    rows = forward_ms(context=a.context, forward=a.forward)
    if a.json:
        print(json.dumps(rows))
        return 0
    print(f"{'batch':>5} {'batched ms':>11} {'eager ms':>9}")
    for row in rows:
        print(f"{row['batch']:>5} {row['batched_ms']:>11.2f} {row['eager_ms']:>9.2f}")
    return 0


def _cmd_fidelity(a) -> int:
    from .fidelity import compare, format_table
    if a.repeats < 1:
        raise UsageError(f"--repeats must be >= 1, got {a.repeats}")
    res = compare(repeats=a.repeats)
    print(json.dumps(res) if a.json else format_table(res))
    return 0


def _cmd_capacity(a) -> int:
    from .runs.calibrate import measure_capacity_here
    print(json.dumps(measure_capacity_here(a.seconds, forward=a.forward)))
    return 0


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"engine: warning: {message}\n"


def main(argv=None) -> int:
    warnings.formatwarning = _one_line_warning
    try:
        a = build_parser().parse_args(argv)
        return {"run": _cmd_run, "matrix": _cmd_matrix, "calibrate": _cmd_calibrate,
                "microbench": _cmd_microbench, "capacity": _cmd_capacity,
                "fidelity": _cmd_fidelity}[a.cmd](a)
    except (UsageError, ValueError, TypeError, PermissionError) as e:
        print(f"engine: error: {e}", file=sys.stderr)
        return 2
    except ChildFailed as e:
        print(f"engine: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        if e.errno not in DISK_FULL:
            raise
        print(f"engine: error: {e.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # raw logs and records appear only by rename, so an interrupted write leaves at most
        # a temp file; its writer (this process or a killed child) is gone once we sweep
        cache.sweep_temp_files()
        print("engine: interrupted; nothing half-written was kept in the cache", file=sys.stderr)
        return 130
