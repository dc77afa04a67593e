"""The one module of the analysis that imports ``engine``: everything the runs,
instrument and render layers need from it, under one roof, so that a change in the
engine's layout is a change here only.  ``core`` never imports it (the method reads
raw logs, whichever engine wrote them).  Top-level ``engine.X`` names are preferred;
the rest are the engine's submodules, named once below.
"""
from __future__ import annotations

from engine import (FORWARDS, LADDER, OVERLOAD_FACTOR, RUNGS, Workload, control_specs, ensure_runs, get_profile,
                    profile_specs, slug)
from engine.controls import CONTROLS, HOG_MS, POSITIVE, overhead_configs
from engine.fidelity import cached_compare
from engine.fidelity_runs import run_article
from engine.microbench import forward_ms_subprocess
from engine.runs import regime, target
from engine.runs.cache import CACHE_ENV, CacheWarning, cache_dir, raw_log_problem, run_path, runs_dir, write_atomic_text
from engine.runs.executors import default_concurrency
from engine.runs.calibrate import carried_rate, load_calibration, median_signature
from engine.runs.freshness import confirmed_specs, made_on_confirmed, planned_on_confirmed, replacement_sentence
from engine.runs.interference import interference_capacity, interference_specs
from engine.runs.preemption_runs import (MODES, PREEMPTION_RUNGS, mode_of, preemption_specs,
                                         preemption_sweep_specs, recompute_available)
from engine.runs.sweep import sweep_specs
from engine.serve.segments import DETAIL_NAMES
from engine.serve.workload import arrival_times
from engine.runs.target import BAND, REGIME, Band, Regime
from engine.serve.config import INJECTION_KINDS
from engine.serve.threadclock import ThreadClock
from engine.real import config as real_config, internals as real_internals, operating as real_operating, runs as real_runs


def real_engine():
    """The real-engine probe's modules (engine/real). They import torch and transformers
    only when a run is made, so importing them here costs the rest of the book nothing."""
    return {"config": real_config, "internals": real_internals, "operating": real_operating, "runs": real_runs}


__all__ = ["real_engine", "FORWARDS", "LADDER", "OVERLOAD_FACTOR", "RUNGS", "Workload", "control_specs",
           "ensure_runs", "get_profile", "profile_specs", "slug", "CACHE_ENV", "CacheWarning", "cache_dir",
           "run_path", "runs_dir", "default_concurrency",
           "write_atomic_text", "raw_log_problem", "load_calibration", "median_signature", "carried_rate", "confirmed_specs", "made_on_confirmed", "planned_on_confirmed", "replacement_sentence", "regime", "target", "BAND", "Band", "REGIME", "Regime",
           "INJECTION_KINDS", "CONTROLS", "HOG_MS", "POSITIVE", "overhead_configs", "cached_compare", "run_article", "sweep_specs",
           "forward_ms_subprocess", "ThreadClock",
           "MODES", "PREEMPTION_RUNGS", "mode_of", "preemption_specs", "preemption_sweep_specs",
           "recompute_available", "DETAIL_NAMES", "arrival_times",
           "interference_specs", "interference_capacity"]
