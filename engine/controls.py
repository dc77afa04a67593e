"""The instrument's controls: runs in which a cause cannot happen (negative) and runs
with stalls of known size injected at known steps (positive). book/checking runs them
through the real engine and partitions them like every other run.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .serve.config import LADDER, Config, Injection
from .serve.workload import Workload

ALL_SIZES = (1, 2, 4, 8, 16, 24, 32, 40, 48)      # every batch the engine can form (max_num_seqs 48)
NO_EVICTION_BLOCKS = 1_000_000                     # more KV than any run can ask for
BURST = Workload(burst=48)                         # one batch of prompts, nothing arrives later


@dataclass(frozen=True)
class Control:
    cause: str
    what: str               # the control, in words
    config: Config
    workload: Workload = Workload()
    expected: str = "none"  # "none": the cause cannot happen; else the label injections must land in


def _from(base: Config, name: str, **knobs) -> Config:
    return dataclasses.replace(base, name=name, **knobs)


BASE = LADDER["baseline"]
NEGATIVE = (
    Control("preempt", "KV pool too large to ever evict", _from(BASE, "control: pool never full",
                                                               kv_blocks=NO_EVICTION_BLOCKS)),
    Control("graph", "captured sizes cover every batch", _from(BASE, "control: all sizes captured",
                                                               capture_sizes=ALL_SIZES)),
    Control("gc", "automatic collection disabled", _from(BASE, "control: gc disabled", gc_disable=True)),
    Control("tok", "tokenization off the loop", _from(BASE, "control: tokenize off-loop",
                                                      async_tokenize=True)),
    Control("prefill", "48 prompts at t=0, decoding held until all are prefilled",
            _from(BASE, "control: prefill before decode", hold_decode=True), BURST),
)

# Positive controls run where every cause is otherwise absent, so whatever lands in a
# label is the injection's.
QUIET = _from(BASE, "control: quiet", kv_blocks=NO_EVICTION_BLOCKS, capture_sizes=ALL_SIZES,
              gc_disable=True, async_tokenize=True, hold_decode=True)
INJECTIONS = (
    Injection("gc", 60, 100_000),      # a full collection of the startup heap plus 100k lists
    Injection("pause", 90, 30.0),      # 30 ms busy-wait in a tokenize segment
    Injection("prefill", 120, 1024),   # an extra 1,024-token prefill chunk
    Injection("preempt", 150, 40.0),   # evict the oldest emitting request, hold it out 40 ms
)
HOG_MS = 200.0
POSITIVE = (
    Control("injected", "a known stall of each kind at its own step",
            _from(QUIET, "control: injected", injections=INJECTIONS), BURST, expected="injected"),
    Control("os", f"a CPU-bound process pinned to the engine's core for {HOG_MS:g} ms",
            _from(QUIET, "control: cpu hog", injections=(Injection("hog", 200, HOG_MS),)), BURST,
            expected="injected"),
)
CONTROLS = NEGATIVE + POSITIVE

# Overhead: the same runs with thread clocks on (refined tagging) and off (the article's).
def overhead_configs(base: Config = BASE) -> tuple[Config, Config]:
    return (_from(base, "overhead: article tagging", thread_clocks=False),
            _from(base, "overhead: full tagging", thread_clocks=True))
