"""Runs as experiments: each in a fresh subprocess, one at a time, through the cache."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import cache
from .child import engine_child
from .order import execution_order
from .spec import RunSpec


def execute_spec(spec: RunSpec) -> Path:
    """Run one spec in a fresh subprocess (unless cached) and return the raw log's path."""
    path = spec.path
    if path.exists():
        return path
    cache.ensure_writable(path.parent)
    engine_child("run", "--config-json", json.dumps(spec.config.to_dict()),
                 "--seed", str(spec.seed), "--duration", repr(float(spec.duration)),
                 "--rate", repr(float(spec.rate)), "--rate-info", json.dumps(spec.rate_info),
                 "--workload-json", json.dumps(spec.workload.to_dict()),
                 "--schedule-json", json.dumps(spec.schedule),
                 what=f"run {spec.rung!r} seed {spec.seed}")
    if not path.exists():
        raise RuntimeError(f"run {spec.rung!r} seed {spec.seed} exited cleanly but wrote no log at {path}")
    return path


def ensure_runs(specs: list[RunSpec], progress: bool = True, label: str = "runs") -> list[Path]:
    """Run what is missing, one at a time in each spec's scheduled order (blocked by seed,
    shuffled within: engine/runs/order.py), with a progress bar and time left; return
    every spec's path, in the order given."""
    specs = list(specs)
    missing = [s for s in execution_order(specs) if not s.path.exists()]
    if missing:
        cache.ensure_writable(cache.runs_dir())
        cache.sweep_temp_files(cache.runs_dir())
        from tqdm.auto import tqdm
        # whole seconds per run, summed: tqdm drops a total the count passes (then the
        # bar's format fails), which a rounded sum of fractional estimates can allow
        est = [round(s.expected_seconds()) for s in missing]
        with tqdm(total=sum(est), unit="s", disable=not progress, file=sys.stderr,
                  desc=f"{label}: {len(missing)} of {len(specs)} to run",
                  bar_format="{desc} |{bar}| {n:.0f}/{total:.0f} s est. [{elapsed}<{remaining}]") as bar:
            for i, (s, sec) in enumerate(zip(missing, est), 1):
                bar.set_postfix_str(f"{i}/{len(missing)} {s.rung} seed {s.seed} @ {s.rate:.2f} req/s")
                execute_spec(s)
                bar.update(sec)
    return [s.path for s in specs]
