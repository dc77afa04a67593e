"""Runs as experiments: each run in a fresh subprocess, one at a time, through the cache."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import cache
from .config import Config, rung_config
from .profiles import OVERLOAD_FACTOR, Profile, get_profile
from .workload import Workload

REPO = cache.REPO
STARTUP_S = 4.0          # per-run start-up (tokenizer, heap, model) for the time-left estimate


def child_env() -> dict:
    """Environment of a run: single-threaded BLAS and tokenizer, this repository importable."""
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def resolve_config(rung_or_config) -> Config:
    return rung_or_config if isinstance(rung_or_config, Config) else rung_config(rung_or_config)


@dataclass(frozen=True)
class RunSpec:
    config: Config
    seed: int
    duration: float
    rate: float
    rate_info: dict = field(default_factory=dict, compare=False, hash=False)
    group: str = "ladder"            # "ladder", "overload" or "controls": which part of the book
    workload: Workload = Workload()

    @property
    def rung(self) -> str:
        return self.config.name

    @property
    def path(self) -> Path:
        return cache.run_path(self.config, self.seed, self.duration, self.rate, self.workload)

    def expected_seconds(self) -> float:
        if self.workload.burst:             # a burst runs until its requests finish
            return 3.0 + STARTUP_S
        return self.duration * (1.6 if self.group == "overload" else 1.15) + STARTUP_S


def validate(seed, duration, rate) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not duration > 0:
        raise ValueError(f"duration must be positive, got {duration!r}")
    if rate is not None and not rate > 0:
        raise ValueError(f"rate must be positive, got {rate!r}")


def execute_spec(spec: RunSpec) -> Path:
    """Run one spec in a fresh subprocess (unless cached) and return the raw log's path."""
    path = spec.path
    if path.exists():
        return path
    cache.ensure_writable(path.parent)
    cmd = [sys.executable, "-m", "engine", "run", "--config-json", json.dumps(spec.config.to_dict()),
           "--seed", str(spec.seed), "--duration", repr(float(spec.duration)),
           "--rate", repr(float(spec.rate)), "--rate-info", json.dumps(spec.rate_info),
           "--workload-json", json.dumps(spec.workload.to_dict())]
    proc = subprocess.run(cmd, env=child_env(), cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0 or not path.exists():
        raise RuntimeError(f"run {spec.rung!r} seed {spec.seed} failed (exit {proc.returncode}):\n"
                           f"{proc.stderr.strip()[-2000:]}")
    return path


def run(rung_or_config, seed: int, duration: float, rate: float | None = None) -> Path:
    """One run in a fresh subprocess, via the cache. rate=None uses this machine's calibrated rate."""
    validate(seed, duration, rate)
    cfg = resolve_config(rung_or_config)
    if rate is None:
        from .calibrate import calibrated_rate
        rate, info = calibrated_rate("capacity")
    else:
        info = {"rate": rate, "source": "given"}
    return execute_spec(RunSpec(cfg, seed, float(duration), float(rate), info))


def ensure_runs(specs: list[RunSpec], progress: bool = True, label: str = "runs") -> list[Path]:
    """Run what is missing, one at a time, with a progress bar and time left; return all paths."""
    specs = list(specs)
    missing = [s for s in specs if not s.path.exists()]
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


def _checked_rate(prof: Profile, seeds, duration: float, rate: float | None) -> tuple[float, dict]:
    """Validate a run protocol, then its rate: the one given, or the profile's calibrated one."""
    for s in seeds:
        validate(s, duration, rate)
    if rate is None:
        from .calibrate import calibrated_rate
        return calibrated_rate(prof.calibration)
    return float(rate), {"rate": float(rate), "source": "given"}


def profile_specs(profile: str | Profile | None = None, overload: bool = False, rungs=None, seeds=None,
                  duration: float | None = None, rate: float | None = None) -> list[RunSpec]:
    """The runs of a profile's main ladder (or its overload sidebar), overridable per argument."""
    prof = get_profile(profile)
    seeds = tuple(seeds) if seeds is not None else (prof.overload_seeds if overload else prof.seeds)
    duration = float(duration if duration is not None else prof.duration)
    base, info = _checked_rate(prof, seeds, duration, rate)
    factor = OVERLOAD_FACTOR if overload else 1.0
    info = {**info, "factor": factor}
    configs = [resolve_config(r) for r in (rungs if rungs is not None else prof.rungs)]
    return [RunSpec(c, int(s), duration, round(base * factor, 6), info, "overload" if overload else "ladder")
            for c in configs for s in seeds]


def control_specs(profile: str | Profile | None = None, seeds=None, duration: float | None = None,
                  rate: float | None = None) -> list[RunSpec]:
    """The instrument's control runs (engine/controls.py) at the profile's rate, plus the
    tagging-overhead pair, for each control seed."""
    from .controls import CONTROLS, overhead_configs
    prof = get_profile(profile)
    seeds = tuple(seeds) if seeds is not None else prof.control_seeds
    duration = float(duration if duration is not None else prof.control_duration)
    rate, info = _checked_rate(prof, seeds, duration, rate)
    runs = [(c.config, c.workload) for c in CONTROLS] + [(c, Workload()) for c in overhead_configs()]
    return [RunSpec(cfg, int(s), duration, round(float(rate), 6), info, "controls", wl)
            for s in seeds for cfg, wl in runs]


def ensure_profile(profile: str | Profile | None = None, progress: bool = True) -> dict:
    """Every run a profile's book needs (main ladder, overload sidebar, then the controls)."""
    prof = get_profile(profile)
    specs = profile_specs(prof) + profile_specs(prof, overload=True) + control_specs(prof)
    ensure_runs(specs, progress=progress, label=f"profile {prof.name}")
    return {group: [s for s in specs if s.group == group] for group in ("ladder", "overload", "controls")}
