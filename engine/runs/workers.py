"""Workers that measure runs side by side, each pinned to its own physical core.

A build's runs are dealt to workers by block (a seed: every rung of it, in the shuffled
order engine/runs/order.py gives), so the two runs of every pair are measured on one
core of one host. A worker pins itself (its engine children inherit the mask), measures
under a lock of its own core (`.measuring-<host>-cpu<N>.lock` in the cache folder, so
two builds never measure on one core at once), and stamps every run's schedule with
where and beside how many others it ran; engine/serve/experiment.py stores that in the
raw log's provenance.

The same worker function runs in local processes (`map_local`) and in submitit's job
arrays (`map_submitit`, on Slurm or with submitit's LocalExecutor); nothing here
queues work across hosts.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import cache, topology
from .order import ordering_unit

WORKER_ENV = "ITL_WORKER"        # set in a worker: its engine children die with it


@dataclass(frozen=True)
class Pin:
    """Where a worker measures: its index among `workers`, and the CPU to pin to (None:
    the index-th physical core of what the worker's own process may use, as on Slurm,
    where each array task is given its own cores)."""
    index: int
    workers: int
    cpu: int | None = None
    executor: str = "local"
    concurrency: int = 1


_where: dict = {}               # set by pin_here: what each run of this worker records


def pin_here(pin: Pin) -> dict:
    """Pin this process to one logical CPU of its own physical core, take that core's lock
    name, and return what each run's schedule records about where it ran."""
    cpus = topology.measuring_cpus()
    cpu = pin.cpu if pin.cpu is not None else cpus[pin.index % len(cpus)]
    os.sched_setaffinity(0, {cpu})
    os.environ[cache.LOCK_NAME_ENV] = f".measuring-{topology.host()}-cpu{cpu}.lock"
    os.environ.pop(cache.HELD_ENV, None)
    os.environ[WORKER_ENV] = str(pin.index)
    from ..serve.provenance import cpu_model
    _where.clear()
    _where.update({"host": topology.host(), "cpu_model": cpu_model(), "cpus_allowed": topology.cpus_allowed_list(),
            "concurrency": pin.concurrency, "executor": pin.executor, "worker": pin.index,
            "workers": pin.workers})
    return dict(_where)


def deal_blocks(specs: list, workers: int) -> list[list]:
    """Specs (in execution order) dealt to `workers` lists by block (ordering unit and seed),
    each block whole to the worker with the fewest expected seconds so far (ties: the
    lowest index), blocks in order. Deterministic: the same specs give the same deal."""
    blocks: dict = {}
    for s in specs:
        blocks.setdefault((ordering_unit(s.group), s.schedule.get("block", s.seed)), []).append(s)
    lists, load = [[] for _ in range(workers)], [0.0] * workers
    for block in blocks.values():
        w = min(range(workers), key=lambda i: (load[i], i))
        lists[w].extend(block)
        load[w] += sum(s.expected_seconds() for s in block)
    return lists


def run_worker(specs: list) -> list[str]:
    """Measure `specs` in order on this worker's core (pinned by map_pinned; cached ones
    are only verified); return their raw logs' paths."""
    from .execute import execute_spec
    where = dict(_where)
    cache.sweep_temp_files()
    out = []
    for i, s in enumerate(specs):
        s = dataclasses.replace(s, schedule={**s.schedule, **where, "worker_position": i,
                                             "worker_runs": len(specs)})
        out.append(str(execute_spec(s)))
    return out


def _call_pinned(fn: Callable, pin: Pin, args: tuple, cache_dir: str):
    """fn(*args) in this process, pinned as `pin` says (for measurements other than runs)."""
    os.environ[cache.CACHE_ENV] = cache_dir
    pin_here(pin)
    return fn(*args)


# ---------------------------------------------------------------- local processes
def _local_main(task: str, result: str) -> None:
    """`python -m engine.runs.workers <task.pkl> <result.pkl>`: run a pickled (fn, args),
    pickle ("ok", value) or ("error", message)."""
    with open(task, "rb") as f:
        fn, args = pickle.load(f)
    try:
        out = ("ok", fn(*args))
    except BaseException as e:                   # noqa: BLE001 - every failure goes back to the parent
        out = ("error", f"{type(e).__name__}: {e}")
    with open(result + ".part", "wb") as f:
        pickle.dump(out, f)
    os.replace(result + ".part", result)


def map_local(calls: list[tuple[Callable, tuple]], poll: Callable[[], None] = lambda: None,
              poll_s: float = 0.5) -> list:
    """Run each (fn, args) in its own fresh interpreter at once (its own session, so the
    parent stops it and its engine child together); return their results in order.
    `poll()` is called while they run. A failure is raised after every worker has stopped
    (what the others measured is kept); on Ctrl-C every worker is stopped."""
    from .child import child_env
    procs = []
    with tempfile.TemporaryDirectory(prefix="itl-workers-") as tmp:
        try:
            for i, call in enumerate(calls):
                task, result = Path(tmp) / f"task{i}.pkl", Path(tmp) / f"result{i}.pkl"
                task.write_bytes(pickle.dumps(call))
                p = subprocess.Popen([sys.executable, "-m", "engine.runs.workers", str(task), str(result)],
                                     env=child_env(), start_new_session=True, stdin=subprocess.DEVNULL)
                procs.append((p, result))
            while any(p.poll() is None for p, _ in procs):
                poll()
                time.sleep(poll_s)
        except BaseException:
            for p, _ in procs:
                if p.poll() is None:
                    with contextlib.suppress(OSError):
                        os.killpg(p.pid, signal.SIGTERM)
            for p, _ in procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=10)
            raise
        results, errors = [], []
        for i, (p, result) in enumerate(procs):
            try:
                status, value = pickle.loads(result.read_bytes())
            except (OSError, EOFError, pickle.UnpicklingError):
                status, value = "error", f"died (exit {p.returncode}) before reporting"
            results.append(value)
            if status == "error":
                errors.append(f"worker {i}: {value}")
    if errors:
        raise RuntimeError("; ".join(errors))
    return results


# ---------------------------------------------------------------- submitit (Slurm, or its local backend)
SLURM_ENV = {"partition": "ITL_SLURM_PARTITION", "cpus_per_task": "ITL_SLURM_CPUS_PER_TASK"}


def submitit_executor(backend: str, folder: Path, parallelism: int, minutes: int):
    """A submitit executor: Slurm (job arrays of `parallelism` tasks at once, each on its
    own cores: ITL_SLURM_CPUS_PER_TASK, default 2, a physical core with its SMT sibling;
    ITL_SLURM_PARTITION), or submitit's LocalExecutor."""
    import submitit
    if backend == "local":
        ex = submitit.LocalExecutor(folder=str(folder))
        ex.update_parameters(timeout_min=minutes)
        return ex
    ex = submitit.AutoExecutor(folder=str(folder), cluster="slurm")
    params = {"timeout_min": minutes, "slurm_array_parallelism": parallelism,
              "cpus_per_task": int(os.environ.get(SLURM_ENV["cpus_per_task"], "2")),
              "name": "itl-runs"}
    if part := os.environ.get(SLURM_ENV["partition"]):
        params["slurm_partition"] = part
    ex.update_parameters(**params)
    return ex


def map_submitit(backend: str, calls: list[tuple[Callable, tuple]], folder: Path, minutes: int,
                 poll: Callable[[], None] = lambda: None, poll_s: float = 1.0) -> list:
    """Run each (fn, args) as one task of one submitit job array; results in order."""
    folder.mkdir(parents=True, exist_ok=True)
    ex = submitit_executor(backend, folder, len(calls), minutes)
    jobs = []
    with ex.batch():
        for fn, args in calls:
            jobs.append(ex.submit(fn, *args))
    try:
        while not all(j.done() for j in jobs):
            poll()
            time.sleep(poll_s)
    except BaseException:
        for j in jobs:
            j.cancel(check=False)
        raise
    errors, out = [], []
    for i, j in enumerate(jobs):
        try:
            out.append(j.result())
        except Exception as e:                   # noqa: BLE001 - reported together below
            errors.append(f"task {i}: {str(e).strip().splitlines()[-1] if str(e).strip() else e!r}")
    if errors:
        raise RuntimeError("; ".join(errors))
    return out


def map_pinned(plan, fn: Callable, items: list[tuple], poll: Callable[[], None] = lambda: None,
               minutes: int = 24 * 60) -> list:
    """fn(*items[i]) on worker i (len(items) <= plan.jobs workers at once), each pinned to
    its own physical core, by the plan's executor; results in order."""
    cpus = topology.measuring_cpus()
    # the build keeps the first cores (where the kernel's and the notebook's work lands)
    chosen = cpus[len(cpus) - plan.jobs:] if plan.on_this_machine else [None] * plan.jobs
    calls = [(_call_pinned, (fn, Pin(i, plan.jobs, chosen[i], plan.executor, plan.concurrency), tuple(args),
                             str(cache.cache_dir())))
             for i, args in enumerate(items)]
    if plan.executor == "local":
        return map_local(calls, poll)
    backend = "local" if plan.executor == "submitit-local" else "slurm"
    return map_submitit(backend, calls, cache.cache_dir() / "submitit", minutes, poll)


if __name__ == "__main__":
    _local_main(*sys.argv[1:3])
