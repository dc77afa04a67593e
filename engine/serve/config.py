"""Engine knobs and the fix ladder.

`Config` holds every knob of the demonstrator with the article's defaults.
`LADDER` is the article's seven cumulative rungs: each rung is the rung above it
plus exactly one fix, so any difference between adjacent rungs is that fix.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

# Positive controls: what an Injection does at its step, and what its `amount` means.
INJECTION_KINDS = {
    "gc": "extra heap objects kept alive; at the step, a forced full collection",
    "pause": "ms of busy-waiting inside a tokenize-tagged segment",
    "prefill": "tokens of an extra prefill chunk (a scratch request, discarded)",
    "preempt": "ms the oldest emitting request is held out after a forced eviction",
    "hog": "ms a CPU-bound process pinned to the engine's core spins",
}
# The largest amount of each kind: a control's stall is milliseconds to seconds; past
# these, a typo (a pause of Infinity ms would busy-wait forever).
INJECTION_MAX = {"gc": 10_000_000, "pause": 60_000.0, "prefill": 16_384, "preempt": 60_000.0, "hog": 60_000.0}
# Upper bounds of the integer knobs, far past any run of this engine; past them, a typo.
KNOB_MAX = {"max_num_seqs": 4096, "token_budget": 1 << 20, "kv_blocks": 10_000_000, "block_size": 4096,
            "max_model_len": 1 << 20}


@dataclass(frozen=True)
class Injection:
    """A stall of known size at a chosen step: the ground truth of a positive control."""
    kind: str
    step: int
    amount: float

    def __post_init__(self):
        if self.kind not in INJECTION_KINDS:
            raise ValueError(f"unknown injection kind {self.kind!r}; valid kinds: {', '.join(INJECTION_KINDS)}")
        if isinstance(self.step, bool) or not isinstance(self.step, (int, float)) or not math.isfinite(self.step) \
                or int(self.step) != self.step or self.step < 0:
            raise ValueError(f"injection step must be a step index >= 0, got {self.step!r}")
        top = INJECTION_MAX[self.kind]
        if isinstance(self.amount, bool) or not isinstance(self.amount, (int, float)) \
                or not (math.isfinite(self.amount) and 0 <= self.amount <= top):
            raise ValueError(f"injection amount of a {self.kind!r} injection must be a number in "
                             f"[0, {top:g}] ({INJECTION_KINDS[self.kind]}), got {self.amount!r}")
        object.__setattr__(self, "step", int(self.step))
        object.__setattr__(self, "amount", float(self.amount))

    @classmethod
    def coerce(cls, x) -> "Injection":
        if isinstance(x, Injection):
            return x
        if isinstance(x, dict) and set(x) == {"kind", "step", "amount"}:
            return cls(**x)
        if isinstance(x, (list, tuple)) and len(x) == 3:
            return cls(*x)
        raise ValueError(f"an injection must be {{\"kind\": ..., \"step\": ..., \"amount\": ...}} "
                         f"or (kind, step, amount), got {x!r}")


FORWARDS = ("article", "fast")           # engine/serve/model.py
PREEMPT_MODES = ("swap", "recompute")    # what an eviction does with the victim's KV (scheduler.py)


@dataclass(frozen=True)
class Config:
    name: str = "baseline"
    forward: str = "article"               # the model's numerics: the article's, or "fast" (float32)
    max_num_seqs: int = 48                 # max running requests (vLLM max_num_seqs)
    token_budget: int = 2048               # tokens per step (vLLM max_num_batched_tokens)
    capture_sizes: tuple = (1, 2, 4, 8, 16, 24, 32)   # emulated captured batch sizes
    kv_blocks: int = 1000                  # KV pool size in blocks
    block_size: int = 16                   # tokens per KV block
    max_model_len: int = 2048              # prompts are truncated to this many tokens
    admit_watermark: float = 0.0           # fraction of the pool kept free when admitting
    swap_in_headroom: int = 8              # free blocks required beyond a readmitted request's own
    preempt_mode: str = "swap"             # "swap": KV copied to the host and back (the article's);
                                           # "recompute": KV dropped, rebuilt by prefill (vLLM V1's)
    gc_freeze: bool = False                # gc.collect(); gc.freeze() once before serving
    async_tokenize: bool = False           # tokenize in a worker process, off the engine loop
    compact_history: bool = False          # per-token records in a flat array, not objects
    # controls and instrumentation (not fixes): see book/checking
    gc_disable: bool = False               # no automatic collection while serving
    hold_decode: bool = False              # no decode while a prompt waits or is mid-prefill
    thread_clocks: bool = True             # False: tag wall time only, as the article does
    injections: tuple = ()                 # Injection(kind, step, amount), positive controls

    def __post_init__(self):
        if self.preempt_mode not in PREEMPT_MODES:
            raise ValueError(f"preempt_mode must be one of {', '.join(PREEMPT_MODES)}, got {self.preempt_mode!r}")
        if self.forward not in FORWARDS:
            raise ValueError(f"forward must be one of {', '.join(FORWARDS)}, got {self.forward!r}")
        top = KNOB_MAX["max_num_seqs"]
        if any(isinstance(s, bool) or not isinstance(s, (int, float)) or s != int(s) or not 1 <= s <= top
               for s in self.capture_sizes):
            raise ValueError(f"capture_sizes must be whole batch sizes in [1, {top}], "
                             f"got {list(self.capture_sizes)!r}")
        sizes = tuple(int(s) for s in self.capture_sizes)
        object.__setattr__(self, "capture_sizes", sizes)
        if list(sizes) != sorted(set(sizes)) or (sizes and sizes[0] < 1):
            raise ValueError(f"capture_sizes must be increasing positive sizes, got {sizes}")
        for knob in ("max_num_seqs", "token_budget", "kv_blocks", "block_size", "max_model_len"):
            if not 1 <= getattr(self, knob) <= KNOB_MAX[knob]:
                raise ValueError(f"{knob} must be in [1, {KNOB_MAX[knob]}], got {getattr(self, knob)}")
        if not 0 <= self.swap_in_headroom <= self.kv_blocks:
            raise ValueError(f"swap_in_headroom must be a block count in [0, kv_blocks = {self.kv_blocks}], "
                             f"got {self.swap_in_headroom}")
        object.__setattr__(self, "injections", tuple(Injection.coerce(i) for i in self.injections))
        if not 0.0 <= self.admit_watermark < 1.0:
            raise ValueError(f"admit_watermark must be in [0, 1), got {self.admit_watermark}")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["capture_sizes"] = list(self.capture_sizes)
        d["injections"] = [dataclasses.asdict(i) for i in self.injections]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Config":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown Config fields: {sorted(unknown)}")
        defaults = cls()
        for k, v in d.items():             # JSON types against each knob's default's type
            want = type(getattr(defaults, k))
            ok = {bool: isinstance(v, bool), int: isinstance(v, int) and not isinstance(v, bool),
                  float: isinstance(v, (int, float)) and not isinstance(v, bool),
                  str: isinstance(v, str), tuple: isinstance(v, (list, tuple))}[want]
            if not ok:
                raise ValueError(f"Config field {k!r} must be {want.__name__}, got {v!r}")
        # JSON has no tuples: a list's items are checked here, not coerced later
        if any(isinstance(s, bool) or not isinstance(s, int) for s in d.get("capture_sizes", ())):
            raise ValueError(f"Config field 'capture_sizes' must be a list of integers, got {d['capture_sizes']!r}")
        if any(not isinstance(i, dict) for i in d.get("injections", ())):
            raise ValueError(f"Config field 'injections' must be a list of objects "
                             f"{{\"kind\": ..., \"step\": ..., \"amount\": ...}}, got {d['injections']!r}")
        return cls(**d)


# Each fix, in the article's order; a rung keeps every fix above it.
FIXES: list[tuple[str, dict]] = [
    ("baseline", {}),
    ("+gc.freeze", {"gc_freeze": True}),
    ("+compact history", {"compact_history": True}),
    ("+graphs to 48", {"capture_sizes": (1, 2, 4, 8, 16, 24, 32, 40, 48)}),
    ("+budget 256", {"token_budget": 256}),
    ("+tokenize off-loop", {"async_tokenize": True}),
    ("+admit watermark", {"admit_watermark": 0.10}),
]


def _build_ladder() -> dict[str, Config]:
    ladder, cfg = {}, Config()
    for name, fix in FIXES:
        cfg = dataclasses.replace(cfg, name=name, **fix)
        ladder[name] = cfg
    return ladder


LADDER: dict[str, Config] = _build_ladder()
RUNGS: list[str] = list(LADDER)


def slug(name: str) -> str:
    """File-name form of a rung name: '+tokenize off-loop' -> 'tokenize-off-loop'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def rung_config(name: str) -> Config:
    """The config of a rung, by name or slug; a clear error lists the valid rungs."""
    if name in LADDER:
        return LADDER[name]
    by_slug = {slug(n): n for n in LADDER}
    if name in by_slug:
        return LADDER[by_slug[name]]
    valid = ", ".join(repr(n) for n in LADDER)
    raise ValueError(f"unknown rung {name!r}; valid rungs: {valid}")
