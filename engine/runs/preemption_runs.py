"""The preemption chapter's runs (book/preemption): swap against recompute.

At the operating point: the baseline and the last rung (with the admission watermark),
the profile's seeds and duration, once per preemption mode. Across loads: the sweep's
article-forward runs of the same two rungs, once per mode. The swap runs are the very
runs the ladder and the sweep already make (swap is every rung's default), so only the
recompute runs are new. An engine without the recompute mode (its Config has no
`preempt_mode` knob) gets the swap runs only; the chapter says so.
"""
from __future__ import annotations

import dataclasses

from ..serve.config import Config, RUNGS, rung_config
from .profiles import Profile, get_profile
from .protocol import profile_specs
from .spec import RunSpec
from .sweep import sweep_specs

MODES = ("swap", "recompute")
PREEMPTION_RUNGS = (RUNGS[0], RUNGS[-1])       # baseline, +admit watermark
MODE_KNOB = "preempt_mode"


def recompute_available() -> bool:
    """Whether this engine version has the recompute preemption mode."""
    return MODE_KNOB in Config.__dataclass_fields__


def available_modes() -> tuple:
    return MODES if recompute_available() else MODES[:1]


def mode_of(config) -> str:
    """A config's preemption mode (engines before the knob only swap)."""
    return getattr(config, MODE_KNOB, "swap")


def with_mode(config: Config, mode: str) -> Config:
    """The config preempting by `mode`; swap leaves it as it is, so swap runs share the
    ladder's and the sweep's cache entries."""
    if mode not in MODES:
        raise ValueError(f"preemption mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == mode_of(config):
        return config
    if not recompute_available():
        raise ValueError(f"this engine version has no {MODE_KNOB!r} knob, so it cannot preempt by {mode!r}")
    return dataclasses.replace(config, **{MODE_KNOB: mode})


def _moded(specs, modes, group) -> list[RunSpec]:
    return [dataclasses.replace(s, config=with_mode(s.config, m), group=group) for m in modes for s in specs]


def preemption_specs(profile: str | Profile | None = None, seeds=None, duration: float | None = None,
                     rate: float | None = None, modes=None) -> list[RunSpec]:
    """The operating point's runs: both rungs x each available mode x the profile's seeds."""
    prof = get_profile(profile)
    base = profile_specs(prof, rungs=[rung_config(r) for r in PREEMPTION_RUNGS], seeds=seeds,
                         duration=duration, rate=rate)
    return _moded(base, modes or available_modes(), "preemption")


def preemption_sweep_specs(profile: str | Profile | None = None, seeds=None, duration: float | None = None,
                           rate: float | None = None, modes=None) -> list[RunSpec]:
    """The sweep's article-forward runs of both rungs, once per available mode; every spec
    carries its load level in rate_info, as the sweep's do."""
    prof = get_profile(profile)
    base = sweep_specs(prof, seeds=seeds, duration=duration, rate=rate, rungs=PREEMPTION_RUNGS,
                       forwards=("article",))
    return _moded(base, modes or available_modes(), "preemption-sweep")
