"""Runs as experiments: each in a fresh subprocess, through the cache, one at a time or
(engine/runs/executors.py) several at once on pinned cores, blocked by seed."""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from . import cache, executors, topology
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
    if _level(spec) != 1 and not os.environ.get("ITL_WORKER"):
        raise ValueError(f"{_describe(spec)} is a run measured beside {spec.concurrency - 1} other(s); "
                         f"make it with ensure_runs (which starts the workers), not alone")
    if "host" not in spec.schedule:
        spec = _stamped(spec, **serial_where())
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
                     "--concurrency", str(spec.concurrency),
                     what=f"{_describe(spec)}", timeout=spec.timeout_s())
    if not cache.is_cached(path):
        raise RuntimeError(f"run {spec.rung!r} seed {spec.seed} exited cleanly but wrote no usable log at {path}")
    return path


def _level(spec) -> int:
    return getattr(spec, "concurrency", 1)


def _stamped(spec, **where):
    """The spec with where it runs added to its schedule (stored in its log's provenance)."""
    if not dataclasses.is_dataclass(spec):          # a stand-in (tests): nothing to record into
        return spec
    return dataclasses.replace(spec, schedule={**spec.schedule, **where})


def serial_where() -> dict:
    """What a run measured alone by this process records about where it ran."""
    from ..serve.provenance import cpu_model
    return {"host": topology.host(), "cpu_model": cpu_model(), "cpus_allowed": topology.cpus_allowed_list(),
            "concurrency": 1, "executor": "serial", "worker": 0, "workers": 1}


def _plan_for(level: int, plan: executors.Plan) -> executors.Plan:
    """The executor that measures runs of concurrency `level`: the build's own plan at its
    level, else one at a time (1) or local workers (the interference control's arms)."""
    if level == plan.concurrency:
        return plan
    return executors.Plan("serial", 1) if level == 1 else executors.resolve(level, "local")


_warned_full: set = set()


def _measure_parallel(specs: list, plan: executors.Plan, bar, label: str, est: dict) -> None:
    from .workers import deal_blocks, map_pinned, run_worker
    if plan.on_this_machine and plan.jobs >= len(topology.measuring_cpus()) and plan.jobs not in _warned_full:
        _warned_full.add(plan.jobs)
        print(f"{label}: note: {plan.jobs} workers use every physical core here, so the build itself "
              f"shares a core with a measuring worker (--jobs auto leaves one free)", file=sys.stderr, flush=True)
    lists = [w for w in deal_blocks(specs, plan.jobs) if w]
    # Paths once, here: a spec's path hashes the measured package (about 1 ms), and this poll
    # runs every 0.5 s beside the measuring workers. Asking each of a quick profile's 76 specs
    # again took 68 ms a poll, 14% of a core.
    waiting = {s.path for s in specs}

    def poll():
        for p in [p for p in waiting if p.exists()]:
            waiting.discard(p)
            bar.update(est[p])
        flight = sum(1 for p in cache.cache_dir().glob(cache.WORKER_LOCKS) if _nonempty(p))
        bar.set_description_str(f"{label}: {len(lists)} workers ({plan.executor}, k={plan.concurrency}), "
                                f"{flight} in flight, {len(specs) - len(waiting)}/{len(specs)} done", refresh=True)

    map_pinned(plan, run_worker, [(w,) for w in lists], poll=poll,
               minutes=int(max(sum(est[s.path] for s in w) for w in lists) * 2 / 60) + 30)
    poll()


def _nonempty(p: Path) -> bool:
    try:
        return p.stat().st_size > 0
    except OSError:
        return False


def ensure_runs(specs: list[RunSpec], progress: bool = True, label: str = "runs", jobs=None,
                executor: str | None = None) -> list[Path]:
    """Run what is missing in each spec's scheduled order (blocked by seed, shuffled
    within: engine/runs/order.py), with a progress bar (workers, runs in flight, done,
    time left); return every spec's path, in the order given. Each spec is measured at its
    own concurrency (one at a time, or beside k-1 others by the environment's executor);
    with `jobs` or `executor` given, every spec is measured at that plan's level instead
    (and the paths returned are those runs'). Cached logs are verified (a damaged one is
    reported and measured again); while another process measures in the same cache the
    bar says what it waits for, and what that process made is then reused."""
    specs = list(specs)
    if jobs is not None or executor is not None:
        plan = executors.resolve(jobs, executor)
        specs = [dataclasses.replace(s, concurrency=plan.concurrency) for s in specs]
    else:
        plan = executors.current()
    cache.sweep_temp_files()
    cache.sweep_worker_locks()
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
                est = {s.path: round(s.expected_seconds()) for s in missing}
                bar.total = sum(est.values())
                bar.set_description_str(f"{label}: {len(missing)} of {len(specs)} to run", refresh=True)
                levels = list(dict.fromkeys(_level(s) for s in missing))
                for level in levels:
                    part = [s for s in missing if _level(s) == level]
                    run_plan = _plan_for(level, plan)
                    if run_plan.concurrency > 1:
                        _measure_parallel(part, run_plan, bar, label, est)
                        continue
                    for i, s in enumerate(part, 1):
                        bar.set_postfix_str(f"{i}/{len(part)} {s.rung} seed {s.seed} @ {s.rate:.2f} req/s")
                        cache.set_measuring(f"{label}: {i}/{len(part)} {_describe(s)}")
                        execute_spec(_stamped(s, **serial_where(), worker_position=i - 1,
                                              worker_runs=len(part)))
                        bar.update(est[s.path])
    return [s.path for s in specs]
