"""A run as data: which config, seed, duration, rate and workload, and where its log lives."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

from ..serve.config import Config, rung_config
from ..serve.workload import Workload
from . import cache
from .executors import default_concurrency

STARTUP_S = 4.0          # per-run start-up (tokenizer, heap, model) for the time-left estimate
MAX_RATE = 1000.0        # req/s: far past any capacity this engine has; above it, a typo
MAX_DURATION = 24 * 3600.0
MAX_SEED = 2**32 - 1     # a seed names a traffic pattern and a file; past this, a typo
# A child run is killed if it is still going after this multiple of its expected time plus
# this slack: a run's length is set by its arrivals (a burst's by its request count), so
# only a hang (a runaway injection, a deadlock) gets anywhere near it, even on a machine
# several times slower than the estimate or shared with other work.
RUN_TIMEOUT_FACTOR = 5.0
RUN_TIMEOUT_SLACK_S = 300.0
# Raw log size, for the free-space check before measuring: about 3-6 KB per request on the
# article's and this engine's logs; this bound is several times that.
LOG_BYTES_FIXED = 1 << 20
LOG_BYTES_PER_REQUEST = 32 << 10


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

    def timeout_s(self) -> float:
        """How long its child may run before it is killed as hung (see RUN_TIMEOUT_FACTOR)."""
        return RUN_TIMEOUT_FACTOR * self.expected_seconds() + RUN_TIMEOUT_SLACK_S

    def expected_log_bytes(self) -> int:
        return expected_log_bytes(self.duration, self.rate, self.workload)


def expected_requests(duration: float, rate: float, workload: Workload = Workload()) -> float:
    """The mean number of requests a run's arrivals hold (a burst: exactly its count)."""
    return float(workload.burst) if workload.burst else duration * rate


def expected_log_bytes(duration: float, rate: float, workload: Workload = Workload()) -> int:
    return int(LOG_BYTES_FIXED + LOG_BYTES_PER_REQUEST * expected_requests(duration, rate, workload))


def check_has_requests(seed: int, duration: float, rate: float, workload: Workload = Workload()) -> None:
    """A run must serve at least one request (a log without one cannot be summarized):
    with few expected arrivals, draw them (cheap, and exactly what the run will draw)."""
    if workload.burst or duration * rate >= 100:     # P(no arrival) < e^-40 with the swell
        return
    from ..serve.workload import arrival_times
    if len(arrival_times(seed, duration, rate, workload)) == 0:
        raise ValueError(f"duration {duration:g} s at {rate:g} req/s gives seed {seed} no request at all; "
                         f"a run must serve at least one: give a longer duration or a higher rate")


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
    seeds = tuple(int(s) for s in seeds)         # NumPy integers too
    if len(set(seeds)) != len(seeds):
        twice = sorted({s for s in seeds if seeds.count(s) > 1})
        raise ValueError(f"seeds must be distinct, got {list(seeds)} (repeated: {twice}); a seed's run "
                         f"is one experiment, measured once; {hint}")
    return seeds


def check_duration(duration) -> float:
    """A duration as a caller or chapter gives it, checked, as a float."""
    validate(0, duration, None)
    return float(duration)


def _real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def validate(seed, duration, rate) -> None:
    """A clear ValueError naming the bad input, before any work starts."""
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer in [0, {MAX_SEED}], got {seed!r} "
                         f"(papermill: -y \"seeds: [6, 7]\")")
    if not _real(duration) or not (0 < duration <= MAX_DURATION):
        raise ValueError(f"duration must be a number of seconds in (0, {MAX_DURATION:g}], got {duration!r} "
                         f"(papermill: -y \"duration: 20\")")
    if rate is not None and (not _real(rate) or not math.isfinite(rate) or not 0 < rate <= MAX_RATE):
        raise ValueError(f"rate must be a number of req/s in (0, {MAX_RATE:g}], got {rate!r} "
                         f"(papermill: -y \"rate: 8.5\")")
