"""Find this machine's arrival rate for the article's regime: near capacity.

The article kept one regime (queues drain, the KV pool is under pressure, batches
occasionally cross the largest captured size) by lowering its rate when its VM got
slower. Capacity is set by tokens per second, and the band is narrow, so:

1. measure capacity: decode tokens per second with a saturated queue (baseline rung);
2. propose rate = TARGET_UTILIZATION x capacity / mean output tokens per request;
3. (checked mode) confirm with short baseline runs against REGIME, adjusting by rule:
   overloaded -> lower, too light -> raise, bisecting once both sides are seen.

The result, with everything measured and every check, is cached per machine and engine
code version, and each run stores it in its provenance.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import cache
from .config import LADDER
from .provenance import machine_fingerprint
from .workload import Request, Workload, request_contents, startup_heap

TARGET_UTILIZATION = 0.80
CAPACITY_SECONDS, CAPACITY_WARMUP = 20.0, 4.0
CHECK_SEEDS, CHECK_DURATION, MAX_CHECKS = (1, 2), 30.0, 6


@dataclass(frozen=True)
class Regime:
    """What 'near capacity, like the article' means, per 30 s check run (mean over CHECK_SEEDS).

    The article's regime, measured with its own engine on this machine kind at 7.5 req/s,
    had TTFT p50 ~40 ms and, per 60 s, 77-131 preemptions and 140-331 eager steps; the
    minimums below ask for about half the low end, per 30 s.
    """
    max_ttft_p50_ms: float = 500.0     # above: the queue does not drain (overloaded)
    min_preemptions: int = 20          # below: the KV pool is not under pressure (too light)
    min_eager_steps: int = 30          # below: batches do not cross the largest captured size

    def verdict(self, m: dict) -> str:
        if m["ttft_p50_ms"] > self.max_ttft_p50_ms:
            return "overloaded"
        if m["preemptions"] < self.min_preemptions or m["eager_steps"] < self.min_eager_steps:
            return "too light"
        return "in regime"


REGIME = Regime()


# ---------------------------------------------------------------- capacity (runs in a child)
def measure_capacity_here(seconds: float = CAPACITY_SECONDS, warmup: float = CAPACITY_WARMUP) -> dict:
    """Tokens/s of the baseline rung with every request queued at t=0, after a warm-up."""
    from .loop import Engine
    from .model import Model
    from .tokenizer import get_tokenizer

    get_tokenizer()
    wl = Workload()
    heap = startup_heap(wl)
    trace = [Request(rid=i, arrival=0.0, text=t, max_new=m, is_document=d)
             for i, (t, m, d) in enumerate(request_contents(1000, 600, wl))]
    eng = Engine(LADDER["baseline"], Model(), trace)
    start = eng.run(deadline_s=seconds)
    reqs = eng.done + eng.running + eng.swapped
    t = np.array([x - start for r in reqs for x in r.emit_t])
    n = int(((t >= warmup) & (t < seconds)).sum())
    del heap
    return {"tokens_per_s": n / (seconds - warmup), "seconds": seconds, "warmup": warmup,
            "decode_steps": len(eng.steps)}


def measure_capacity(seconds: float) -> dict:
    from .runner import REPO, child_env
    proc = subprocess.run([sys.executable, "-m", "engine", "capacity", "--seconds", str(seconds)],
                          env=child_env(), cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"capacity measurement failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- regime checks
def regime_metrics(path: Path) -> dict:
    """The few numbers the regime rule needs, read straight from a raw log."""
    with np.load(path) as z:
        steps, req = z["steps"], z["requests"]
        ttft = (req[:, 4] - req[:, 1]) * 1e3
        return {"ttft_p50_ms": float(np.median(ttft)), "ttft_p99_ms": float(np.percentile(ttft, 99)),
                "preemptions": int(steps[:, 5].sum()), "eager_steps": int((steps[:, 4] == 0).sum()),
                "max_batch": int(steps[:, 2].max())}


def _next_rate(rate: float, verdict: str, light: list, heavy: list) -> float:
    if light and heavy:
        return (max(light) + min(heavy)) / 2          # bisect the bracket
    return rate * (0.88 if verdict == "overloaded" else 1.08)


def check_rate(rate: float, progress=True) -> tuple[float, list]:
    from .runner import RunSpec, ensure_runs
    light, heavy, checks = [], [], []
    for _ in range(MAX_CHECKS):
        specs = [RunSpec(LADDER["baseline"], seed, CHECK_DURATION, round(rate, 3),
                         {"rate": round(rate, 3), "source": "calibration check"}) for seed in CHECK_SEEDS]
        paths = ensure_runs(specs, progress=progress, label=f"calibration check @ {rate:.2f} req/s")
        per_seed = [regime_metrics(p) for p in paths]
        m = {k: float(np.mean([x[k] for x in per_seed])) for k in per_seed[0]}
        verdict = REGIME.verdict(m)
        checks.append({"rate": round(rate, 3), **m, "verdict": verdict})
        if verdict == "in regime":
            return round(rate, 3), checks
        (heavy if verdict == "overloaded" else light).append(rate)
        rate = _next_rate(rate, verdict, light, heavy)
    # no check landed in the band: keep the busiest rate that still drained
    ok = [c for c in checks if c["verdict"] != "overloaded"]
    return (max(c["rate"] for c in ok) if ok else min(c["rate"] for c in checks)), checks


# ---------------------------------------------------------------- the cached choice
def calibration_dir() -> Path:
    return cache.cache_dir() / "calibration"


def calibration_path(method: str) -> Path:
    fp = hashlib.sha256(json.dumps(machine_fingerprint(), sort_keys=True).encode()).hexdigest()[:12]
    return calibration_dir() / f"{method}-{fp}-{cache.code_version()}.json"


def _write_json_atomic(path: Path, data: dict) -> None:
    cache.ensure_writable(path.parent)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def load_calibration(required: str = "capacity") -> dict | None:
    """The cached calibration for this machine; a checked one satisfies either requirement."""
    for method in (("checked", "capacity") if required == "capacity" else ("checked",)):
        p = calibration_path(method)
        if p.exists():
            return json.loads(p.read_text())
    return None


def calibrate(checks: bool = True, force: bool = False, progress: bool = True,
              capacity_seconds: float | None = None) -> dict:
    method = "checked" if checks else "capacity"
    if not force and (cached := load_calibration(method)) is not None:
        return cached
    t0 = time.time()
    seconds = capacity_seconds or (CAPACITY_SECONDS if checks else 10.0)
    if progress:
        print(f"calibration: measuring capacity ({seconds:.0f} s, saturated queue)...", file=sys.stderr)
    cap = measure_capacity(seconds)
    mean_out = Workload().mean_output_tokens()
    proposed = round(TARGET_UTILIZATION * cap["tokens_per_s"] / mean_out, 3)
    rate, check_log = (check_rate(proposed, progress) if checks else (proposed, []))
    result = {
        "rate": rate, "method": method, "machine": machine_fingerprint(),
        "engine_code": cache.code_version(), "capacity": cap, "mean_output_tokens": mean_out,
        "target_utilization": TARGET_UTILIZATION, "proposed_rate": proposed,
        "regime": asdict(REGIME), "check_duration_s": CHECK_DURATION if checks else None,
        "checks": check_log, "seconds_taken": round(time.time() - t0, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    _write_json_atomic(calibration_path(method), result)
    return result


def calibrated_rate(required: str = "capacity") -> tuple[float, dict]:
    """(rate, provenance summary), calibrating first if this machine has no cached choice."""
    cal = load_calibration(required) or calibrate(checks=(required == "checked"))
    info = {"rate": cal["rate"], "source": "calibration", "method": cal["method"],
            "capacity_tokens_per_s": cal["capacity"]["tokens_per_s"], "proposed_rate": cal["proposed_rate"],
            "checks": [(c["rate"], c["verdict"]) for c in cal["checks"]]}
    return cal["rate"], info
