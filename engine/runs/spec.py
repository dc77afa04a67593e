"""A run as data: which config, seed, duration, rate and workload, and where its log lives."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..serve.config import Config, rung_config
from ..serve.workload import Workload
from . import cache
from .executors import default_concurrency

STARTUP_S = 4.0          # per-run start-up (tokenizer, heap, model) for the time-left estimate
MAX_RATE = 1000.0        # req/s: far past any capacity this engine has; above it, a typo
MAX_DURATION = 24 * 3600.0


def resolve_config(rung_or_config) -> Config:
    return rung_or_config if isinstance(rung_or_config, Config) else rung_config(rung_or_config)


@dataclass(frozen=True)
class RunSpec:
    config: Config
    seed: int
    duration: float
    rate: float
    rate_info: dict = field(default_factory=dict, compare=False, hash=False)
    group: str = "ladder"            # which part of the book: "ladder", "overload", "controls", ...
    workload: Workload = Workload()
    schedule: dict = field(default_factory=dict, compare=False, hash=False)   # position in its build order
    # runs measured at once while it runs (1: alone); in its key. Default: the level the
    # environment's executor uses (ITL_JOBS / ITL_EXECUTOR), so a chapter's specs name the
    # very runs its build made
    concurrency: int = field(default_factory=default_concurrency)

    @property
    def rung(self) -> str:
        return self.config.name

    @property
    def path(self) -> Path:
        return cache.run_path(self.config, self.seed, self.duration, self.rate, self.workload, self.concurrency)

    def expected_seconds(self) -> float:
        if self.workload.burst:             # a burst runs until its requests finish
            return 3.0 + STARTUP_S
        return self.duration * (1.6 if self.group == "overload" else 1.15) + STARTUP_S


def check_seeds(seeds) -> tuple:
    """Seeds as a chapter or caller gives them, checked: a non-empty list of integers >= 0.
    A string (papermill's -p passes '[6, 7]' as text) or a single number gets an error
    that shows the -y form."""
    hint = 'pass a list, with papermill\'s -y: papermill book/<chapter>.ipynb out.ipynb -y "seeds: [6, 7]"'
    if isinstance(seeds, (str, bytes)):
        raise ValueError(f"seeds must be a list of integers, got the text {seeds!r}; {hint}")
    if isinstance(seeds, (int, float)) or not hasattr(seeds, "__iter__"):
        raise ValueError(f"seeds must be a list of integers, got {seeds!r}; {hint}")
    seeds = tuple(seeds)
    if not seeds:
        raise ValueError(f"seeds must name at least one seed, got an empty list; {hint}")
    for s in seeds:
        validate(s, 1.0, None)
    return seeds


def validate(seed, duration, rate) -> None:
    """A clear ValueError naming the bad input, before any work starts."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r} (papermill: -y \"seeds: [6, 7]\")")
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) \
            or not (0 < duration <= MAX_DURATION):
        raise ValueError(f"duration must be a number of seconds in (0, {MAX_DURATION:g}], got {duration!r} "
                         f"(papermill: -y \"duration: 20\")")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float))
                             or not math.isfinite(rate) or not 0 < rate <= MAX_RATE):
        raise ValueError(f"rate must be a number of req/s in (0, {MAX_RATE:g}], got {rate!r} "
                         f"(papermill: -y \"rate: 8.5\")")
