"""How a build measures its runs: one at a time, on pinned cores of this machine, or on a
Slurm cluster through submitit, and at what concurrency.

A run measured beside k-1 others is another measurement than one measured alone, so
the level k is part of every run's cache key (engine/runs/cache.py): a serial build never
reads a parallel build's runs, nor the reverse. The choice comes from `--jobs` /
`--executor` (or ITL_JOBS / ITL_EXECUTOR for the book); `configure` writes it into the
environment so that everything the build does afterwards (its specs, its calibration,
the chapters' kernels) sees the same level.

    serial          today's behaviour, one run at a time; the default below MIN_CORES
                    usable logical CPUs
    local           N worker processes, each pinned to its own physical core; `auto`
                    leaves one core to the build itself (the parent, the notebook kernel)
    submitit-local  the cluster path (submitit's job arrays) run by submitit's LocalExecutor
                    on this machine's cores: to try or test the cluster path anywhere
    slurm           one Slurm job array through submitit; `--jobs` array tasks at once
"""
from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from dataclasses import dataclass

from . import topology

EXECUTORS = ("serial", "local", "submitit-local", "slurm")
JOBS_ENV, EXECUTOR_ENV = "ITL_JOBS", "ITL_EXECUTOR"
MIN_CORES = 4           # below this many usable logical CPUs, auto stays serial


@dataclass(frozen=True)
class Plan:
    executor: str
    jobs: int                   # workers measuring at once

    @property
    def concurrency(self) -> int:
        """How many runs measure at once: part of each run's key and record."""
        return 1 if self.executor == "serial" else self.jobs

    @property
    def on_this_machine(self) -> bool:
        return self.executor != "slurm"


def parse_jobs(value) -> int | str:
    """`auto` or a whole number >= 1; one clear ValueError otherwise."""
    if value is None or value == "auto":
        return "auto"
    try:
        n = int(str(value).strip())
    except ValueError:
        n = None
    if n is None or n < 1 or str(n) != str(value).strip():
        raise ValueError(f"--jobs must be a whole number >= 1 or 'auto', got {value!r}")
    return n


def auto_jobs(cpus=None) -> int:
    """Workers for `--jobs auto`: one per physical core, less one for the build itself;
    1 (serial) where fewer than MIN_CORES logical CPUs are usable."""
    cpus = topology.allowed_cpus() if cpus is None else list(cpus)
    if len(cpus) < MIN_CORES:
        return 1
    return max(1, len(topology.physical_cores(cpus)) - 1)


def _need_submitit(name: str) -> None:
    if importlib.util.find_spec("submitit") is None:
        raise ValueError(f"executor {name!r} needs the submitit package, which is not installed "
                         f"(pip install -r requirements.txt)")


def resolve(jobs=None, executor: str | None = None) -> Plan:
    """The plan for these options (None: ITL_JOBS / ITL_EXECUTOR, then the defaults).
    Bad input raises one ValueError naming it and what is allowed."""
    jobs = parse_jobs(jobs if jobs is not None else os.environ.get(JOBS_ENV) or None)
    name = executor or os.environ.get(EXECUTOR_ENV) or None
    if name is not None and name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; valid executors: {', '.join(EXECUTORS)}")
    if name == "slurm":
        _need_submitit(name)
        if shutil.which("sbatch") is None:
            raise ValueError("executor 'slurm' needs a Slurm scheduler, but sbatch is not on PATH here; "
                             "submit from a Slurm login node, or use --executor local / submitit-local")
        if jobs == "auto":
            raise ValueError("executor 'slurm' needs --jobs N: how many array tasks measure at once")
        return Plan("slurm", jobs)
    cores = topology.measuring_cpus()
    if jobs == "auto":
        jobs = auto_jobs()
    if jobs > len(cores):
        raise ValueError(f"--jobs {jobs} is more than the {len(cores)} physical core(s) this process may use "
                         f"(CPUs {topology.cpus_allowed_list()}); use at most {len(cores)}, or auto")
    if name == "serial":
        if jobs != 1:
            raise ValueError(f"executor 'serial' measures one run at a time; --jobs must be 1 or auto, got {jobs}")
        return Plan("serial", 1)
    if name == "submitit-local":
        _need_submitit(name)
        return Plan(name, jobs)
    if name is None:
        name = "serial" if jobs == 1 else "local"
    return Plan(name, jobs)


def configure(jobs=None, executor: str | None = None) -> Plan:
    """Resolve the options and write them into the environment, so that the build's specs,
    its calibration and the chapters' kernels all see the same plan."""
    plan = resolve(jobs, executor)
    os.environ[JOBS_ENV] = str(plan.jobs)
    os.environ[EXECUTOR_ENV] = plan.executor
    return plan


@functools.lru_cache(maxsize=8)
def _current(jobs_env, executor_env) -> Plan:
    return resolve(jobs_env, executor_env)


def current() -> Plan:
    """The plan the environment asks for (ITL_JOBS / ITL_EXECUTOR, or the defaults)."""
    return _current(os.environ.get(JOBS_ENV) or None, os.environ.get(EXECUTOR_ENV) or None)


def default_concurrency() -> int:
    return current().concurrency
