"""The real engine's operating point, by the regime issue's method (engine/runs/calibrate.py).

The same two-stage search places the baseline rung onto the cliff by how full a typical
step is (the median inter-token gap over this engine's own batch-32 decode forward pass,
the article's 1.07 within 0.8-1.25 of it, with queues that drain) and then along it by the
KV pool's pressure (preemptions per 60 s in the article's band). Only the yardstick is
this engine's: its batch-32 decode forward is read from the check runs' own pure-decode
steps (a least-squares line of forward time over decode rows, read at 32 rows), since
this engine has no captured-graph path to microbenchmark apart from its loop.

The chosen rate is cached per machine, library versions and check length, as a JSON
record written atomically.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np

from ..runs import cache, regime
from ..runs.calibrate import CHECK_SEEDS, median_signature, search_rate
from ..runs.calibrate import run_rate as _carried
from ..runs.target import REGIME, Regime
from ..serve import segments as S
from ..serve.provenance import machine_fingerprint
from .config import rung_config
from .runs import RealSpec, code_version, ensure_real_runs, installed_versions

START_RATE = 6.0             # req/s: where the search starts (it brackets by 1.25x steps from here): a little
                             # under the 7 req/s where this engine first filled its step in 20 s runs here


def decode_forward_ms(paths, rows: int = 32) -> dict:
    """This engine's decode forward pass at `rows` decode rows, in ms: a line fitted to
    the pure-decode steps' forward time (their decode segment) against their rows."""
    xs, ys = [], []
    for p in paths:
        with np.load(p) as z:
            segs, mix = z["segs"], z["step_mix"]
        pure = np.flatnonzero((mix[:, 0] == 0) & (mix[:, 1] == 0) & (mix[:, 2] > 0))
        dec = segs[segs[:, 1] == S.DECODE]
        dur = dict(zip(dec[:, 0].astype(int), (dec[:, 3] - dec[:, 2]) * 1e3))
        xs += [int(mix[i, 2]) for i in pure if i in dur]
        ys += [dur[i] for i in pure if i in dur]
    return regime.forward_line(xs, ys, rows)


def check(rate: float, duration: float, seeds=CHECK_SEEDS, progress: bool = True) -> dict:
    """One check: the baseline at `rate` for each check seed, and the median signature."""
    specs = [RealSpec(rung_config("baseline"), seed, float(duration), round(rate, 4)) for seed in seeds]
    paths = ensure_real_runs(specs, progress=progress)
    yard = decode_forward_ms(paths)
    per_seed = [{"seed": s.seed, **regime.signature(p, yard["ms"])} for s, p in zip(specs, paths)]
    stats = [{k: v for k, v in x.items() if k != "seed"} for x in per_seed]
    return {**median_signature(stats), "forward_ms_b32": yard["ms"], "yardstick": yard, "per_seed": per_seed}


def _record_path(duration: float) -> Path:
    key = {"machine": machine_fingerprint(), "libs": installed_versions(), "code": code_version(),
           "duration": float(duration), "seeds": list(CHECK_SEEDS)}
    h = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache.cache_dir() / "real_calibration" / f"checked__d{duration:g}__{h}.json"


def operating_point(duration: float, target: Regime = REGIME, progress: bool = True) -> dict:
    """The cached choice for checks of `duration` s, made first if missing: {"rate",
    "reached", "checks", "duration", "seeds"}."""
    path = _record_path(duration)
    if path.exists():
        try:
            data = json.loads(path.read_text())
            if math.isfinite(float(data["rate"])) and data["rate"] > 0:
                return data
        except (OSError, ValueError, KeyError, TypeError):
            pass                                # unreadable: measured again, and replaced
    found = search_rate(lambda r: {k: v for k, v in check(r, duration, progress=progress).items()
                                   if k != "yardstick"}, START_RATE, target)
    data = {**found, "duration": float(duration), "seeds": list(CHECK_SEEDS), "method": "checked"}
    cache.ensure_writable(path.parent, "the real engine's calibration is cached there")
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_text(json.dumps(data, indent=1, default=float))
    os.replace(tmp, path)
    return data


def run_rate(record: dict, seeds, duration: float) -> dict:
    """The rate for runs of `seeds` x `duration` from a calibration record: the checks'
    rate, carried to these seeds by decode demand (engine/runs/calibrate.run_rate)."""
    return _carried(float(record["rate"]), record.get("seeds") or CHECK_SEEDS, float(record["duration"]),
                    seeds, duration)
