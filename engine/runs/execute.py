"""Runs as experiments: each in a fresh subprocess, one at a time, through the cache."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import cache
from .child import engine_child
from .order import execution_order
from .spec import RunSpec, check_has_requests


def _describe(s: RunSpec) -> str:
    return f"run {s.rung!r} seed {s.seed} @ {s.rate:.2f} req/s, {s.duration:g} s"


def check_runnable(spec: RunSpec) -> None:
    """What can be known wrong about a run before it is measured: a ValueError if it would
    serve no request, an OSError (ENOSPC) if its log cannot fit in the cache."""
    check_has_requests(spec.seed, spec.duration, spec.rate, spec.workload)
    cache.ensure_space(spec.path.parent, spec.expected_log_bytes(), f"the raw log of {_describe(spec)}")


def execute_spec(spec: RunSpec) -> Path:
    """Run one spec in a fresh subprocess (unless a usable log is cached) and return the
    raw log's path. Measures only while holding the cache's measuring lock; a child still
    running at spec.timeout_s() is killed as hung (ChildFailed, one line)."""
    path = spec.path
    if cache.is_cached(path):
        return path
    cache.ensure_writable(path.parent, why=f"{_describe(spec)} is not cached and must be measured there")
    check_runnable(spec)
    with cache.measuring(_describe(spec)):
        if cache.is_cached(path):                 # another process measured it while we waited
            return path
        engine_child("run", "--config-json", json.dumps(spec.config.to_dict()),
                     "--seed", str(spec.seed), "--duration", repr(float(spec.duration)),
                     "--rate", repr(float(spec.rate)), "--rate-info", json.dumps(spec.rate_info),
                     "--workload-json", json.dumps(spec.workload.to_dict()),
                     "--schedule-json", json.dumps(spec.schedule),
                     what=f"{_describe(spec)}", timeout=spec.timeout_s())
    if not cache.is_cached(path):
        raise RuntimeError(f"run {spec.rung!r} seed {spec.seed} exited cleanly but wrote no usable log at {path}")
    return path


def ensure_runs(specs: list[RunSpec], progress: bool = True, label: str = "runs") -> list[Path]:
    """Run what is missing, one at a time in each spec's scheduled order (blocked by seed,
    shuffled within: engine/runs/order.py), with a progress bar and time left; return
    every spec's path, in the order given. Cached logs are verified (a damaged one is
    reported and measured again); while another process measures in the same cache the
    bar says what it waits for, and what that process made is then reused."""
    specs = list(specs)
    cache.sweep_temp_files()
    missing = [s for s in execution_order(specs) if not cache.is_cached(s.path)]
    if missing:
        cache.ensure_writable(cache.runs_dir(), why=f"{len(missing)} of {len(specs)} runs are not cached "
                                                    f"and must be measured there")
        for s in missing:                         # every bad run refused before the first is measured
            check_has_requests(s.seed, s.duration, s.rate, s.workload)
        cache.ensure_space(cache.runs_dir(), sum(s.expected_log_bytes() for s in missing),
                           f"the raw logs of {len(missing)} runs")
        from tqdm.auto import tqdm
        with tqdm(total=0, unit="s", disable=not progress, file=sys.stderr,
                  desc=f"{label}: {len(missing)} of {len(specs)} to run",
                  bar_format="{desc} |{bar}| {n:.0f}/{total:.0f} s est. [{elapsed}<{remaining}]") as bar:
            def waiting(holder):
                bar.set_description_str(f"{label}: waiting for {holder} to finish measuring", refresh=True)
                if not progress:
                    print(f"{label}: waiting for {holder} to finish measuring in {cache.cache_dir()}",
                          file=sys.stderr, flush=True)

            with cache.measuring(f"{label}: {len(missing)} runs", on_wait=waiting):
                missing = [s for s in missing if not cache.is_cached(s.path)]   # made while we waited?
                # whole seconds per run, summed: tqdm drops a total the count passes (then the
                # bar's format fails), which a rounded sum of fractional estimates can allow
                est = [round(s.expected_seconds()) for s in missing]
                bar.total = sum(est)
                bar.set_description_str(f"{label}: {len(missing)} of {len(specs)} to run", refresh=True)
                for i, (s, sec) in enumerate(zip(missing, est), 1):
                    bar.set_postfix_str(f"{i}/{len(missing)} {s.rung} seed {s.seed} @ {s.rate:.2f} req/s")
                    cache.set_measuring(f"{label}: {i}/{len(missing)} {_describe(s)}")
                    execute_spec(s)
                    bar.update(sec)
    return [s.path for s in specs]
