"""Find this machine's arrival rate for the article's operating point.

The article kept one regime by lowering its rate when its VM got slower. Here the rate is
searched until the baseline rung's regime signature (engine/runs/regime.py) lands in the
article's (engine/runs/target.py: REGIME), judged onto the cliff first (how full a typical
step is: the median gap over the batch-32 forward pass, with queues that drain) and then
along it (preemptions per 60 s in the article's band). Steps:

1. measure capacity (decode tokens per second with a saturated queue, baseline rung) and
   the batch-32 forward pass (the microbenchmark in a fresh process, as the article did);
2. start the search at CHECK_START_UTILIZATION x capacity / mean output tokens;
3. ("checked" method) bracket and bisect the rate on the median signature of baseline
   checks on held-out seeds (filling whole rounds of the workers: held_out_seeds), each
   as long as the runs the rate is for (every check recorded), until it lands in the
   regime, or report that it did not and keep the draining check closest to it;
4. carry the rate found on the check seeds to each run protocol's own seeds by decode
   demand (run_rate, engine/runs/offered.py): at one rate, seed sets ask for different
   numbers of output tokens, and on the cliff a few percent of load decides the regime.

A run starts from an empty engine and takes tens of seconds to climb onto its steady
running set (benchmarks/bench_regime.py measures it), so a rate found with checks of one
length does not carry over to runs of another: each check length is its own protocol,
with its own record. The result, with everything measured and every check, is cached per
machine, forward, check length and engine code version, and each run stores the rate's
provenance.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np

from ..serve.config import LADDER
from ..serve.provenance import machine_fingerprint
from ..serve.workload import Workload
from . import cache, offered, regime
from .child import engine_child_json
from .spec import RUN_TIMEOUT_FACTOR, RUN_TIMEOUT_SLACK_S, STARTUP_S, validate
from .target import BAND, REGIME, Regime

# The proposal without checks (the smoke profile's rate) stays at 80% of capacity.
TARGET_UTILIZATION = 0.80
# Checked searches start at 100%: at 80% the quick build of 2026-12-04 ran with 0
# preemptions and a median gap under a tenth of the batch-32 forward pass, far below the
# cliff, and the article's regime measured here sat at 1.1x.
CHECK_START_UTILIZATION = 1.0
CAPACITY_SECONDS, CAPACITY_WARMUP = 20.0, 4.0
FORWARD_PROCESSES = 3        # microbenchmark processes whose median batch-32 forward is recorded
# Check seeds are held out from the ladder's (1-5), so the rate is not fitted to the
# noise of the very runs the book then reports.
CHECK_SEEDS, CHECK_DURATION, MAX_CHECKS = (101, 102, 103), 60.0, 8
STEP = 1.25                  # rate factor while only one side of the regime has been seen
# Stop bisecting when hi / lo is this close: the regime lies in a jump. At 20 s a seed's run
# either tips onto the cliff or does not (2026-12-04: seed 101 read 0.52 of the batch-32
# forward at 12.78 req/s and 1.59 at 12.87), so halving a 3% bracket again buys nothing.
MIN_BRACKET = 1.03
CREATED_FORMAT = "%Y-%m-%dT%H:%M:%S"   # a record's `created`, local time (freshness.py reads its age)


# ---------------------------------------------------------------- capacity (runs in a child)
def measure_capacity_here(seconds: float = CAPACITY_SECONDS, warmup: float = CAPACITY_WARMUP,
                          forward: str = "article") -> dict:
    """Tokens/s of the baseline rung with every request queued at t=0, after a warm-up."""
    import dataclasses

    from ..serve.loop import Engine
    from ..serve.model import make_model
    from ..serve.tokenizer import get_tokenizer
    from ..serve.workload import Request, request_contents, startup_heap

    get_tokenizer()
    wl = Workload()
    heap = startup_heap(wl)
    trace = [Request(rid=i, arrival=0.0, text=t, max_new=m, is_document=d)
             for i, (t, m, d) in enumerate(request_contents(1000, 600, wl))]
    cfg = dataclasses.replace(LADDER["baseline"], forward=forward)
    eng = Engine(cfg, make_model(forward), trace)
    start = eng.run(deadline_s=seconds)
    reqs = eng.done + eng.running + eng.swapped + eng.waiting   # a recompute victim waits with its tokens
    t = np.array([x - start for r in reqs for x in r.emit_t])
    n = int(((t >= warmup) & (t < seconds)).sum())
    del heap
    return {"tokens_per_s": n / (seconds - warmup), "seconds": seconds, "warmup": warmup,
            "decode_steps": len(eng.steps), "forward": forward}


def measure_capacity(seconds: float, forward: str = "article", concurrency: int = 1) -> dict:
    """Capacity in a fresh child; at concurrency k > 1, k children at once, each on its own
    pinned core (the executor the runs will use), and their median: what one run gets
    with k-1 neighbours. And the batch-32 decode forward pass, measured in fresh processes
    of its own (the microbenchmark, alone), as the article measured its 12.8 ms."""
    from ..microbench import forward_ms_subprocess
    if concurrency == 1:
        cap = _capacity_child(seconds, forward)
    else:
        from .execute import _plan_for
        from .executors import current
        from .workers import map_pinned
        plan = _plan_for(concurrency, current())
        each = map_pinned(plan, _capacity_child, [(seconds, forward)] * concurrency)
        cap = {**each[0], "tokens_per_s": float(np.median([e["tokens_per_s"] for e in each])),
               "per_worker": [e["tokens_per_s"] for e in each], "concurrency": concurrency}
    # one process's reading moved by 25% from one to the next here (5.2 against 6.5 ms),
    # so the denominator of every fullness is the median of a few fresh processes
    readings = [next(r["batched_ms"] for r in forward_ms_subprocess(forward=forward) if r["batch"] == 32)
                for _ in range(FORWARD_PROCESSES)]
    cap["forward_ms_b32"] = float(np.median(readings))
    cap["forward_ms_b32_readings"] = readings
    return cap


def _capacity_child(seconds: float, forward: str) -> dict:
    # killed as hung past the same bound as a run's (spec.RUN_TIMEOUT_FACTOR): a saturated
    # queue for `seconds`, plus start-up
    return engine_child_json("capacity", "--seconds", str(seconds), "--forward", forward,
                             what="capacity measurement",
                             timeout=RUN_TIMEOUT_FACTOR * (seconds + STARTUP_S) + RUN_TIMEOUT_SLACK_S)


# ---------------------------------------------------------------- the signature of a check
def median_signature(per_seed: list[dict], target: Regime = REGIME) -> dict:
    """The median of each statistic over the check seeds, and whether that median drains."""
    m = {k: float(np.median([x[k] for x in per_seed])) for k in per_seed[0]}
    m["drains"] = target.band.drains(m["ttft_p50_ms"])
    return m


# ---------------------------------------------------------------- the search (pure)
def search_rate(measure: Callable[[float], dict], start: float, target: Regime = REGIME,
                max_checks: int = MAX_CHECKS) -> dict:
    """Bracket, then bisect (geometrically), the rate whose signature lands in the regime.

    `measure(rate)` returns a median signature (fullness, preemptions_per_min,
    ttft_p50_ms, ...). Each check is placed onto the cliff first, then along it
    (Regime.stage), which orders rates one way, so one bisection serves both stages.
    Returns {"rate", "reached", "checks"}; when no check lands in the regime, "reached"
    is False and the rate is the draining check closest to it, or the lowest checked rate
    if none drained."""
    checks, lo, hi, rate = [], None, None, float(start)
    for _ in range(max_checks):
        m = measure(rate)
        place, decided_by = target.stage(m)
        checks.append({"rate": round(rate, 4), **m, "place": place, "decided_by": decided_by})
        if place == "in band":
            return {"rate": round(rate, 4), "reached": True, "checks": checks}
        if place == "above":
            hi = rate if hi is None else min(hi, rate)
        else:
            lo = rate if lo is None else max(lo, rate)
        if lo is not None and hi is not None:
            if hi / lo < MIN_BRACKET:
                break
            rate = math.sqrt(lo * hi)
        else:
            rate = rate / STEP if lo is None else rate * STEP
    return {"rate": _closest(checks, target), "reached": False, "checks": checks}


def _log_distance(x: float, lo: float, hi: float) -> float:
    x = max(x, 1e-9)
    return 0.0 if lo <= x <= hi else min(abs(math.log(x / lo)), abs(math.log(x / hi)))


def _closest(checks: list[dict], target: Regime) -> float:
    """The draining check nearest the regime: first by fullness, then by preemptions."""
    band = target.band
    drained = [c for c in checks if c["drains"]]
    if not drained:
        return min(c["rate"] for c in checks)
    return min(drained, key=lambda c: (_log_distance(c["fullness"], *target.fullness_range),
                                       _log_distance(c["preemptions_per_min"], band.low, band.high)))["rate"]


def held_out_seeds(concurrency: int = 1) -> tuple:
    """The seeds a check runs at `concurrency` workers: CHECK_SEEDS, then the next seeds until
    the checks fill whole rounds, so that each check, like every run it places, has k-1
    neighbours. Three checks on two workers left one alone in every round: in the quick build
    of 2026-12-07 (five rounds of 60 s checks) the lone one read its batch-32 forward pass at
    7.9-8.5 ms, the paired ones at 8.4-9.7 ms and that build's 60 s ladder runs at 9.2-11.4 ms.
    At k=2 the fourth check costs no wall time."""
    extra = (-len(CHECK_SEEDS)) % max(1, int(concurrency))
    return CHECK_SEEDS + tuple(range(max(CHECK_SEEDS) + 1, max(CHECK_SEEDS) + 1 + extra))


def check_rate(rate: float, duration: float = CHECK_DURATION, progress: bool = True,
               forward: str = "article", concurrency: int = 1) -> dict:
    """One check: the baseline rung at `rate` for each held-out seed (via the run cache), each
    run's regime signature (fullness against the run's own forward pass) and their median."""
    import dataclasses

    from .execute import ensure_runs
    from .spec import RunSpec
    cfg = dataclasses.replace(LADDER["baseline"], forward=forward)
    specs = [RunSpec(cfg, seed, float(duration), round(rate, 4),
                     {"rate": round(rate, 4), "source": "calibration check"}, group="calibration",
                     concurrency=concurrency)
             for seed in held_out_seeds(concurrency)]
    paths = ensure_runs(specs, progress=progress, label=f"calibration check @ {rate:.2f} req/s, {duration:g} s")
    per_seed = [{"seed": s.seed, **regime.signature(p, regime.IN_RUN)} for s, p in zip(specs, paths)]
    stats = [{k: v for k, v in x.items() if k != "seed"} for x in per_seed]
    return {**median_signature(stats), "per_seed": per_seed}


# ---------------------------------------------------------------- the cached choice
def calibration_dir() -> Path:
    return cache.cache_dir() / "calibration"


def _level(concurrency: int | None) -> int:
    from .executors import default_concurrency
    return default_concurrency() if concurrency is None else int(concurrency)


def calibration_path(method: str, forward: str = "article", check_duration: float | None = None,
                     concurrency: int | None = None, python: str | None = None) -> Path:
    """One record per method, forward, check length (a checked record), concurrency (the level
    the runs will use: capacity and rate with k-1 neighbours are another machine than alone),
    machine (with its interpreter: `python`, None for this one) and engine code."""
    k = _level(concurrency)
    protocol = (_checked_protocol(f"{float(check_duration or CHECK_DURATION):g}s", k) if method == "checked"
                else method)
    level = f"-k{k}" if k != 1 else ""
    return calibration_dir() / f"{protocol}-{forward}{level}-{cache.machine_key(python)}-{cache.code_version()}.json"


def _checked_protocol(length: str, k: int) -> str:
    """A checked record's protocol: its check length ("60s"), its yardstick and, where the
    seeds were added to fill rounds of k workers, their number. A record placed by another
    protocol is not reused."""
    n = len(held_out_seeds(k))
    seeds = f"-{n}seeds" if n != len(CHECK_SEEDS) else ""
    return f"checked-{length}-{regime.IN_RUN}{seeds}"


def _write_json_atomic(path: Path, data: dict) -> None:
    cache.ensure_writable(path.parent)
    cache.write_atomic_text(path, json.dumps(data, indent=2))


def record_problem(data) -> str | None:
    """Why a calibration record read from the cache cannot be used (None if it can)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    rate = data.get("rate")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not (math.isfinite(rate) and rate > 0):
        return f"rate {rate!r} is not a positive number"
    cap = data.get("capacity")
    if not isinstance(cap, dict) or not isinstance(cap.get("tokens_per_s"), (int, float)):
        return "no measured capacity"
    if not isinstance(data.get("checks"), list) or data.get("method") not in ("checked", "capacity") \
            or not isinstance(data.get("proposed_rate"), (int, float)):
        return "fields missing or mistyped"
    return None


def _read_record(p: Path) -> dict | None:
    """A record, or None; one that does not read back whole is reported (naming it) and removed."""
    return cache.read_json_entry(p, record_problem, "calibration record")


def load_calibration(required: str = "capacity", forward: str = "article",
                     check_duration: float | None = None, concurrency: int | None = None,
                     python: str | None = None) -> dict | None:
    """The cached calibration for this machine (under interpreter version `python`; None:
    this one). "checked" wants the record of checks as long as `check_duration` (default
    CHECK_DURATION); "capacity" takes that checked record, else the capacity-only one, else
    any checked record (the longest checks first)."""
    k = _level(concurrency)
    if required == "checked":
        return _read_record(calibration_path("checked", forward, check_duration, k, python))
    if check_duration is not None and (data := _read_record(calibration_path("checked", forward,
                                                                              check_duration, k, python))):
        return data
    if (data := _read_record(calibration_path("capacity", forward, concurrency=k, python=python))) is not None:
        return data
    for p in sorted(_checked_records(forward, k, python), key=lambda q: -_record_seconds(q)):
        if (data := _read_record(p)) is not None:
            return data
    return None


def _checked_records(forward: str, concurrency: int = 1, python: str | None = None) -> list[Path]:
    level = f"-k{concurrency}" if concurrency != 1 else ""
    tail = f"-{forward}{level}-{cache.machine_key(python)}-{cache.code_version()}.json"
    d = calibration_dir()
    return [p for p in d.glob(f"{_checked_protocol('*s', concurrency)}{tail}")] if d.is_dir() else []


def _record_seconds(p: Path) -> float:
    try:
        return float(p.name.split("-")[1].rstrip("s"))
    except (IndexError, ValueError):
        return 0.0


def _reusable_capacity(forward: str, seconds: float, concurrency: int = 1) -> dict | None:
    """A capacity measured for another record of this forward, machine and code, over the
    same window, with its batch-32 forward pass: each check length's search starts from the
    same measured machine instead of measuring it again."""
    paths = [calibration_path("capacity", forward, concurrency=concurrency)] + _checked_records(forward, concurrency)
    for p in paths:
        data = _read_record(p)
        cap = (data or {}).get("capacity", {})
        if cap.get("seconds") == seconds and isinstance(cap.get("forward_ms_b32"), (int, float)):
            return cap
    return None


def calibrate(checks: bool = True, force: bool = False, progress: bool = True,
              capacity_seconds: float | None = None, forward: str = "article",
              check_duration: float = CHECK_DURATION, concurrency: int | None = None,
              capacity: dict | None = None, replaces: dict | None = None) -> dict:
    """Calibrate (unless cached), holding the cache's measuring lock: no run or other
    calibration of this cache is measured meanwhile, and a second process that wants the
    same calibration waits, then reuses the record this one wrote. `capacity`: one just
    measured, to start from; `replaces`: why an earlier record was retired (freshness.py)."""
    method = "checked" if checks else "capacity"
    k = _level(concurrency)
    want = (method, forward, check_duration if checks else None, k)
    if not force and (cached := _read_record(calibration_path(*want))) is not None:
        return cached
    cache.ensure_writable(calibration_dir(), why="this machine has no calibration record yet and "
                                                 "calibrating must store one there")
    what = f"{check_duration:g} s checks" if checks else "capacity only"
    with cache.measuring(f"calibration ({what}, {forward} forward, concurrency {k})"):
        if not force and (cached := _read_record(calibration_path(*want))) is not None:
            return cached                        # made by another process while we waited
        return _measure_calibration(method, checks, progress, capacity_seconds, forward,
                                    float(check_duration), force, k, capacity, replaces)


def _measure_calibration(method: str, checks: bool, progress: bool, capacity_seconds: float | None,
                         forward: str, check_duration: float, force: bool, concurrency: int = 1,
                         capacity: dict | None = None, replaces: dict | None = None) -> dict:
    t0 = time.time()
    seconds = capacity_seconds or (CAPACITY_SECONDS if checks else 10.0)
    cap = capacity or (None if force else _reusable_capacity(forward, seconds, concurrency))
    if cap is None:
        if progress:
            print(f"calibration ({forward} forward, concurrency {concurrency}): measuring capacity "
                  f"({seconds:.0f} s, saturated queue) and the batch-32 forward pass...", file=sys.stderr)
        cap = measure_capacity(seconds, forward, concurrency)
    mean_out = Workload().mean_output_tokens()
    proposed = round(TARGET_UTILIZATION * cap["tokens_per_s"] / mean_out, 4)
    if checks:
        start = round(CHECK_START_UTILIZATION * cap["tokens_per_s"] / mean_out, 4)
        found = search_rate(lambda r: check_rate(r, check_duration, progress, forward, concurrency), start)
    else:
        found = {"rate": proposed, "reached": None, "checks": []}
    result = {
        "rate": found["rate"], "method": method, "forward": forward, "concurrency": concurrency,
        "machine": machine_fingerprint(),
        "engine_code": cache.code_version(), "capacity": cap, "mean_output_tokens": mean_out,
        "target_utilization": TARGET_UTILIZATION, "proposed_rate": proposed,
        "check_start_utilization": CHECK_START_UTILIZATION if checks else None,
        "target": asdict(REGIME), "band": asdict(BAND), "band_reached": found["reached"],
        "check_seeds": list(held_out_seeds(concurrency)) if checks else [],
        "check_duration_s": check_duration if checks else None,
        "checks": found["checks"], "seconds_taken": round(time.time() - t0, 1),
        "created": time.strftime(CREATED_FORMAT),
    }
    if replaces:
        result["replaces"] = replaces
    _write_json_atomic(calibration_path(method, forward, check_duration if checks else None, concurrency), result)
    if progress:
        how = {True: "in the article's regime", False: "regime not reached", None: "capacity proposal"}
        print(f"calibration ({forward} forward{f', {check_duration:g} s checks' if checks else ''}): "
              f"{result['rate']:.3f} req/s, {how[found['reached']]}, {len(found['checks'])} checks, "
              f"{result['seconds_taken']:.0f} s", file=sys.stderr)
    return result


def calibrated_rate(required: str = "capacity", forward: str = "article",
                    check_duration: float | None = None, concurrency: int | None = None) -> tuple[float, dict]:
    """(rate, provenance summary) at a concurrency (default: the environment's level),
    calibrating first if this machine has no cached choice. The rate is the record's: for a
    checked record, the rate its checks found on the check seeds (run_rate carries it to others)."""
    checks = required == "checked"
    cal = (load_calibration(required, forward, check_duration, concurrency)
           or calibrate(checks=checks, forward=forward, check_duration=check_duration or CHECK_DURATION,
                        concurrency=concurrency))
    info = {"rate": cal["rate"], "source": "calibration", "method": cal["method"], "forward": forward,
            "concurrency": cal.get("concurrency", 1),
            "capacity_tokens_per_s": cal["capacity"]["tokens_per_s"], "proposed_rate": cal["proposed_rate"],
            "check_duration_s": cal.get("check_duration_s"), "band_reached": cal.get("band_reached"),
            "check_seeds": cal.get("check_seeds") or [],
            "checks": [(c["rate"], c["place"]) for c in cal["checks"]]}
    return cal["rate"], info


def run_rate(found: float, check_seeds, check_duration: float, seeds, duration: float) -> dict:
    """The rate for runs of `seeds` x `duration` from the rate `found` by checks on other seeds:
    where the runs' traces ask for as many decode tokens per second as the checks' did
    (engine/runs/offered.py), with both demands, as fractions of the workload's expectation."""
    rate = offered.matched_rate(found, check_seeds, check_duration, seeds, duration)
    return {"rate": round(rate, 4), "check_rate": float(found),
            "check_demand": round(offered.demand_ratio(check_seeds, check_duration, found), 4),
            "demand_at_check_rate": round(offered.demand_ratio(seeds, duration, found), 4),
            "demand": round(offered.demand_ratio(seeds, duration, rate), 4),
            "matched_by": "decode tokens asked per second"}


def carried_rate(record: dict, seeds, duration: float) -> dict | None:
    """run_rate for the runs of `seeds` x `duration` under a calibration record (or the
    provenance summary calibrated_rate makes of it); None for a capacity proposal, which
    no check placed and nothing carries."""
    if record.get("method") != "checked":
        return None
    return run_rate(record["rate"], record.get("check_seeds") or CHECK_SEEDS, record["check_duration_s"],
                    seeds, duration)


def checked_rate(prof, seeds, duration: float, rate: float | None, forward: str = "article",
                 check_duration: float | None = None, concurrency: int | None = None) -> tuple[float, dict]:
    """Validate a run protocol, then its rate: the one given, or the profile's calibrated one
    (for runs as long as `check_duration`, default the profile's own check length) at the
    concurrency (default: the environment's level). A rate found by checks is carried to
    these seeds and this length by decode demand (run_rate)."""
    for s in seeds:
        validate(s, duration, rate)
    if rate is not None:
        return float(rate), {"rate": float(rate), "source": "given"}
    found, info = calibrated_rate(prof.calibration, forward, check_duration or prof.check_duration, concurrency)
    matched = carried_rate(info, seeds, duration)
    return (found, info) if matched is None else (matched["rate"], {**info, **matched})
