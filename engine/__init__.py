"""The instrumented CPU continuous-batching engine and the machinery that runs it.

Runs happen in fresh subprocesses (`python -m engine run ...`), never in the caller's
process: the caller's own heap would change every GC pause the run measures.
"""
import os

# Single-threaded BLAS, set before numpy is imported anywhere in a run.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from .config import FIXES, LADDER, RUNGS, Config, rung_config, slug  # noqa: E402
from .profiles import OVERLOAD_FACTOR, PROFILES, Profile, get_profile  # noqa: E402
from .runner import RunSpec, control_specs, ensure_profile, ensure_runs, profile_specs, run  # noqa: E402
from .workload import Workload  # noqa: E402

__all__ = ["Config", "LADDER", "RUNGS", "FIXES", "rung_config", "slug", "run", "ensure_runs",
           "ensure_profile", "profile_specs", "control_specs", "RunSpec", "PROFILES", "Profile", "get_profile",
           "OVERLOAD_FACTOR", "Workload"]
