"""Find this machine's arrival rate for the article's operating point.

The article kept one regime by lowering its rate when its VM got slower. Here the rate
is searched until the baseline rung's signature lands in the article's band
(engine/runs/target.py): the median over CHECK_SEEDS of preemptions per 60 s inside
[142, 318], with queues that drain. Steps:

1. measure capacity: decode tokens per second with a saturated queue (baseline rung);
2. start from TARGET_UTILIZATION x capacity / mean output tokens per request;
3. ("checked" method) bracket and bisect the rate on the signature of baseline runs as
   long as the article's, on held-out seeds (every check recorded), until the median
   lands in the band, or report that the band was not reached and keep the draining
   check closest to it.

The result, with everything measured and every check, is cached per machine and
engine code version, and each run stores the rate's provenance.
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
from . import cache
from .child import engine_child_json
from .spec import validate
from .target import BAND, Band

TARGET_UTILIZATION = 0.80
CAPACITY_SECONDS, CAPACITY_WARMUP = 20.0, 4.0
# Checks run as long as the article's runs: a run starts from an empty engine, so its first
# half preempts less than its second, and a 30 s check scaled to 60 s read about half the
# preemptions a 60 s run of the same rate had. The check seeds are held out from the ladder's
# (1-5), so the rate is not fitted to the noise of the very runs the book then reports.
CHECK_SEEDS, CHECK_DURATION, MAX_CHECKS = (101, 102, 103), 60.0, 8
STEP = 1.25                  # rate factor while only one side of the band has been seen
MIN_BRACKET = 1.01           # stop bisecting when hi / lo is this close: the band lies in a jump


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


def measure_capacity(seconds: float, forward: str = "article") -> dict:
    return engine_child_json("capacity", "--seconds", str(seconds), "--forward", forward,
                             what="capacity measurement")


# ---------------------------------------------------------------- the signature of a run
def signature(path: Path) -> dict:
    """The numbers the operating point is judged by, read straight from a raw log."""
    with np.load(path) as z:
        steps, req = z["steps"], z["requests"]
        duration = float(json.loads(str(z["config"]))["duration"])
    ttft = (req[:, 4] - req[:, 1]) * 1e3
    per_min = 60.0 / duration
    return {"preemptions_per_min": float(steps[:, 5].sum()) * per_min,
            "eager_steps_per_min": float((steps[:, 4] == 0).sum()) * per_min,
            "ttft_p50_ms": float(np.median(ttft)), "ttft_p99_ms": float(np.percentile(ttft, 99)),
            "max_batch": int(steps[:, 2].max()) if len(steps) else 0}


def median_signature(per_seed: list[dict], band: Band = BAND) -> dict:
    m = {k: float(np.median([x[k] for x in per_seed])) for k in per_seed[0]}
    m["drains"] = m["ttft_p50_ms"] <= band.max_ttft_p50_s * 1e3
    return m


# ---------------------------------------------------------------- the search (pure)
def search_rate(measure: Callable[[float], dict], start: float, band: Band = BAND,
                max_checks: int = MAX_CHECKS) -> dict:
    """Bracket, then bisect (geometrically), the rate whose signature lands in the band.

    `measure(rate)` returns a dict with at least preemptions_per_min and drains.
    Returns {"rate", "reached", "checks"}; when no check lands in the band, "reached" is
    False and the rate is the draining check closest to the band (in log ratio), or the
    lowest checked rate if none drained."""
    checks, lo, hi, rate = [], None, None, float(start)
    for _ in range(max_checks):
        m = measure(rate)
        place = band.place(m["preemptions_per_min"], m["drains"])
        checks.append({"rate": round(rate, 4), **m, "place": place})
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
    return {"rate": _closest(checks, band), "reached": False, "checks": checks}


def _closest(checks: list[dict], band: Band) -> float:
    def distance(c):
        p = max(c["preemptions_per_min"], 1e-9)
        return 0.0 if band.low <= p <= band.high else min(abs(math.log(p / band.low)),
                                                           abs(math.log(p / band.high)))
    drained = [c for c in checks if c["drains"]]
    if not drained:
        return min(c["rate"] for c in checks)
    return min(drained, key=distance)["rate"]


def check_rate(rate: float, progress: bool = True, forward: str = "article") -> dict:
    """One check: the baseline rung at `rate` for each check seed (via the run cache)."""
    import dataclasses

    from .execute import ensure_runs
    from .spec import RunSpec
    cfg = dataclasses.replace(LADDER["baseline"], forward=forward)
    specs = [RunSpec(cfg, seed, CHECK_DURATION, round(rate, 4),
                     {"rate": round(rate, 4), "source": "calibration check"}, group="calibration")
             for seed in CHECK_SEEDS]
    paths = ensure_runs(specs, progress=progress, label=f"calibration check @ {rate:.2f} req/s")
    per_seed = [signature(p) for p in paths]
    return {**median_signature(per_seed), "per_seed": per_seed}


# ---------------------------------------------------------------- the cached choice
def calibration_dir() -> Path:
    return cache.cache_dir() / "calibration"


def calibration_path(method: str, forward: str = "article") -> Path:
    return calibration_dir() / f"{method}-{forward}-{cache.machine_key()}-{cache.code_version()}.json"


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


def load_calibration(required: str = "capacity", forward: str = "article") -> dict | None:
    """The cached calibration for this machine; a checked one satisfies either requirement.
    A record that does not read back whole is reported (naming it), removed and redone."""
    for method in (("checked", "capacity") if required == "capacity" else ("checked",)):
        p = calibration_path(method, forward)
        try:
            data = json.loads(p.read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as e:
            cache.discard_corrupt(p, f"not readable JSON: {e}", "calibration record")
            continue
        if (problem := record_problem(data)) is not None:
            cache.discard_corrupt(p, problem, "calibration record")
            continue
        return data
    return None


def calibrate(checks: bool = True, force: bool = False, progress: bool = True,
              capacity_seconds: float | None = None, forward: str = "article") -> dict:
    """Calibrate (unless cached), holding the cache's measuring lock: no run or other
    calibration of this cache is measured meanwhile, and a second process that wants the
    same calibration waits, then reuses the record this one wrote."""
    method = "checked" if checks else "capacity"
    if not force and (cached := load_calibration(method, forward)) is not None:
        return cached
    cache.ensure_writable(calibration_dir(), why="this machine has no calibration record yet and "
                                                 "calibrating must store one there")
    with cache.measuring(f"calibration ({method}, {forward} forward)"):
        if not force and (cached := load_calibration(method, forward)) is not None:
            return cached                        # made by another process while we waited
        return _measure_calibration(method, checks, progress, capacity_seconds, forward)


def _measure_calibration(method: str, checks: bool, progress: bool, capacity_seconds: float | None,
                         forward: str) -> dict:
    t0 = time.time()
    seconds = capacity_seconds or (CAPACITY_SECONDS if checks else 10.0)
    if progress:
        print(f"calibration ({forward} forward): measuring capacity ({seconds:.0f} s, saturated queue)...",
              file=sys.stderr)
    cap = measure_capacity(seconds, forward)
    mean_out = Workload().mean_output_tokens()
    proposed = round(TARGET_UTILIZATION * cap["tokens_per_s"] / mean_out, 4)
    if checks:
        found = search_rate(lambda r: check_rate(r, progress, forward), proposed)
    else:
        found = {"rate": proposed, "reached": None, "checks": []}
    result = {
        "rate": found["rate"], "method": method, "forward": forward, "machine": machine_fingerprint(),
        "engine_code": cache.code_version(), "capacity": cap, "mean_output_tokens": mean_out,
        "target_utilization": TARGET_UTILIZATION, "proposed_rate": proposed,
        "band": asdict(BAND), "band_reached": found["reached"],
        "check_seeds": list(CHECK_SEEDS) if checks else [],
        "check_duration_s": CHECK_DURATION if checks else None,
        "checks": found["checks"], "seconds_taken": round(time.time() - t0, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    _write_json_atomic(calibration_path(method, forward), result)
    return result


def calibrated_rate(required: str = "capacity", forward: str = "article") -> tuple[float, dict]:
    """(rate, provenance summary), calibrating first if this machine has no cached choice."""
    cal = load_calibration(required, forward) or calibrate(checks=(required == "checked"), forward=forward)
    info = {"rate": cal["rate"], "source": "calibration", "method": cal["method"], "forward": forward,
            "capacity_tokens_per_s": cal["capacity"]["tokens_per_s"], "proposed_rate": cal["proposed_rate"],
            "band_reached": cal.get("band_reached"),
            "checks": [(c["rate"], c["place"]) for c in cal["checks"]]}
    return cal["rate"], info


def checked_rate(prof, seeds, duration: float, rate: float | None,
                 forward: str = "article") -> tuple[float, dict]:
    """Validate a run protocol, then its rate: the one given, or the profile's calibrated one."""
    for s in seeds:
        validate(s, duration, rate)
    if rate is None:
        return calibrated_rate(prof.calibration, forward)
    return float(rate), {"rate": float(rate), "source": "given"}
