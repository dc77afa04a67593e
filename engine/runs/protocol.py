"""A build's runs: the profile's ladder and overload sidebar in blocked random order,
the instrument's controls, and single runs, each at its calibrated or given rate."""
from __future__ import annotations

from pathlib import Path

from ..serve.workload import Workload
from .calibrate import calibrated_rate, checked_rate
from .execute import ensure_runs, execute_spec
from .order import blocked_order
from .profiles import OVERLOAD_FACTOR, Profile, get_profile
from .spec import check_duration, check_seeds, RunSpec, resolve_config, validate
from .sweep import sweep_specs


def run(rung_or_config, seed: int, duration: float, rate: float | None = None) -> Path:
    """One run in a fresh subprocess, via the cache. rate=None uses this machine's calibrated rate."""
    validate(seed, duration, rate)
    cfg = resolve_config(rung_or_config)
    if rate is None:
        rate, info = calibrated_rate("capacity", cfg.forward, concurrency=1)
    else:
        info = {"rate": rate, "source": "given"}
    return execute_spec(RunSpec(cfg, seed, float(duration), float(rate), info, concurrency=1))


def profile_specs(profile: str | Profile | None = None, overload: bool = False, rungs=None, seeds=None,
                  duration: float | None = None, rate: float | None = None,
                  check_length: float | None = None) -> list[RunSpec]:
    """The runs of a profile's main ladder (or its overload sidebar), overridable per
    argument, listed rung by rung, each carrying its place in the blocked random order
    it is run in (engine/runs/order.py). check_length: the calibration checks the rate
    comes from (default: the profile's own), for runs of another length than the ladder's."""
    prof = get_profile(profile)
    seeds = check_seeds(seeds) if seeds is not None else (prof.overload_seeds if overload else prof.seeds)
    duration = check_duration(duration) if duration is not None else prof.duration
    base, info = checked_rate(prof, seeds, duration, rate, check_duration=check_length)
    factor = OVERLOAD_FACTOR if overload else 1.0
    info = {**info, "factor": factor}
    configs = [resolve_config(r) for r in (rungs if rungs is not None else prof.rungs)]
    group = "overload" if overload else "ladder"
    return blocked_order([RunSpec(c, int(s), duration, round(base * factor, 6), info, group)
                          for c in configs for s in seeds])


def control_specs(profile: str | Profile | None = None, seeds=None, duration: float | None = None,
                  rate: float | None = None) -> list[RunSpec]:
    """The instrument's control runs (engine/controls.py) at the profile's rate, plus the
    tagging-overhead pair, for each control seed, in blocked random order."""
    from ..controls import CONTROLS, overhead_configs
    prof = get_profile(profile)
    seeds = check_seeds(seeds) if seeds is not None else prof.control_seeds
    duration = check_duration(duration) if duration is not None else prof.control_duration
    rate, info = checked_rate(prof, seeds, duration, rate)
    runs = [(c.config, c.workload) for c in CONTROLS] + [(c, Workload()) for c in overhead_configs()]
    return blocked_order([RunSpec(cfg, int(s), duration, round(float(rate), 6), info, "controls", wl)
                          for s in seeds for cfg, wl in runs])


def _profile_runs(prof: Profile) -> tuple[dict, list[RunSpec]]:
    """The interference control's arms, and every run of the profile (those arms last)."""
    from .interference import interference_specs
    from .preemption_runs import preemption_specs, preemption_sweep_specs
    control = interference_specs(prof)
    return control, (profile_specs(prof) + profile_specs(prof, overload=True) + control_specs(prof)
                     + sweep_specs(prof) + preemption_specs(prof) + preemption_sweep_specs(prof)
                     + control["alone"] + control["beside"])


def ensure_profile(profile: str | Profile | None = None, progress: bool = True) -> dict:
    """Every run a profile's book needs (main ladder, overload sidebar, the controls, the
    load sweep, the preemption chapter's runs (its swap runs are the ladder's and the sweep's
    own, so each log is listed once), then the interference control's two arms and capacities).
    Before any is measured on an older calibration, that calibration is confirmed (and, if
    the machine has changed, made again: engine/runs/freshness.py)."""
    from . import cache
    from .freshness import planned_on_confirmed, specs_in
    from .interference import interference_capacity
    prof = get_profile(profile)
    control, specs = planned_on_confirmed(prof, lambda: _profile_runs(prof),
                                          lambda runs: any(not cache.is_cached(s.path) for s in runs[1]), progress)
    main = specs_in([s for s in specs if s.group != "interference"])
    ensure_runs(main, progress=progress, label=f"profile {prof.name}")
    # the control's arms in rounds of k seeds, alone then beside, so that the machine's drift
    # over a build falls on both arms alike
    k = control["k"] or 1
    for r in range(0, len(control["alone"]), k):
        ensure_runs(control["alone"][r:r + k] + control["beside"][r:r + k], progress=progress,
                    label=f"profile {prof.name}: interference control")
    interference_capacity(control["k"])
    return {group: [s for s in specs if s.group == group]
            for group in ("ladder", "overload", "controls", "sweep", "preemption", "preemption-sweep",
                          "interference")}
