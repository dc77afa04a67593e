"""The instrumented CPU continuous-batching engine and the machinery that runs it.

  engine/serve   the measured code (the loop, KV pool, step tags, forwards, workload,
                 raw log): hashed whole into every run's cache key
  engine/runs    specs, run order, cache, child processes, calibration, profiles
  controls.py    the instrument's control configs; microbench.py; cli.py

Runs happen in fresh subprocesses (`python -m engine run ...`), never in the caller's
process: the caller's own heap would change every GC pause the run measures.
"""
import os

# Single-threaded BLAS, set before numpy is imported anywhere in a run.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from .runs.execute import ensure_runs  # noqa: E402
from .runs.profiles import OVERLOAD_FACTOR, PROFILES, Profile, get_profile  # noqa: E402
from .runs.protocol import control_specs, ensure_profile, profile_specs, run  # noqa: E402
from .runs.spec import RunSpec  # noqa: E402
from .serve.config import FIXES, FORWARDS, LADDER, RUNGS, Config, rung_config, slug  # noqa: E402
from .serve.workload import Workload  # noqa: E402

__all__ = ["Config", "LADDER", "RUNGS", "FIXES", "FORWARDS", "rung_config", "slug", "run", "ensure_runs",
           "ensure_profile", "profile_specs", "control_specs", "RunSpec", "PROFILES", "Profile", "get_profile",
           "OVERLOAD_FACTOR", "Workload"]
