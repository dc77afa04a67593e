"""The request trace: who arrives when, with what prompt and how many tokens to generate.

Two independent random streams per seed: one for arrival times, one for request
contents. The i-th request of a seed has the same text and output length at any
rate; only arrival times depend on the rate, so runs at different rates serve the
same requests.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from .text import make_text

_ARRIVALS, _CONTENTS = 0, 1     # stream ids mixed into the seed


@dataclass(frozen=True)
class Workload:
    swell: float = 0.6                  # arrival rate swings +-60% ...
    period_s: float = 15.0              # ... on a 15 s cycle
    prompt_log_mu: float = 6.9          # log-normal prompt length: median ~1,000 characters
    prompt_log_sigma: float = 0.6
    doc_probability: float = 0.01       # a request pastes a whole document
    doc_chars: tuple = (150_000, 400_000)
    out_mean: float = 280.0             # output tokens: 16 + exponential, capped
    out_min: int = 16
    out_cap: int = 1000
    startup_objects: int = 400_000      # long-lived heap a real server drags around
    burst: int = 0                      # > 0: exactly this many requests, all at t = 0 (a control)

    def __post_init__(self):
        if int(self.burst) != self.burst or self.burst < 0:
            raise ValueError(f"burst must be a request count >= 0, got {self.burst!r}")

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        known = set(cls.__dataclass_fields__)
        if set(d) - known:
            raise ValueError(f"unknown Workload fields: {sorted(set(d) - known)}")
        return cls(**{**d, **({"doc_chars": tuple(d["doc_chars"])} if "doc_chars" in d else {})})

    def to_dict(self) -> dict:
        d = asdict(self)
        d["doc_chars"] = list(self.doc_chars)
        return d

    def mean_output_tokens(self) -> float:
        """E[min(cap, out_min + floor(Exp(mean)))], for capacity planning."""
        k = np.arange(self.out_cap + 1)
        q = math.exp(-1.0 / self.out_mean)
        p_floor = (1 - q) * q ** k            # P(floor(Exp) = k)
        vals = np.minimum(self.out_cap, self.out_min + k)
        return float((p_floor * vals).sum() + q ** (self.out_cap + 1) * self.out_cap)


@dataclass(eq=False)
class Request:
    rid: int
    arrival: float                      # seconds after engine start
    text: str
    max_new: int
    is_document: bool = False
    prompt: list | None = None          # token ids, set by the tokenizer
    computed: int = 0                   # tokens whose KV is materialised
    out: list = field(default_factory=list)
    emit_t: list = field(default_factory=list)
    emit_step: list = field(default_factory=list)
    kv: np.ndarray | None = None
    host_kv: np.ndarray | None = None   # KV copied out while preempted
    blocks: int = 0                     # KV blocks held in the pool
    first_token_t: float | None = None
    evictions: list = field(default_factory=list)   # [evicted_t, readmitted_t or None]
    held_until: float = 0.0             # a forced preemption keeps it out until then
    refill: list | None = None          # recompute victim: the tokens its KV held, to prefill again


def arrival_times(seed: int, duration: float, rate: float, wl: Workload = Workload()) -> np.ndarray:
    """Non-homogeneous Poisson arrivals in [0, duration) by thinning."""
    rng = np.random.default_rng([seed, _ARRIVALS])
    peak = rate * (1 + wl.swell)
    out, t = [], 0.0
    while True:
        t += rng.exponential(1.0 / peak)
        if t >= duration:
            return np.array(out)
        intensity = rate * (1 + wl.swell * math.sin(2 * math.pi * t / wl.period_s))
        if rng.random() < intensity / peak:
            out.append(t)


def request_contents(seed: int, n: int, wl: Workload = Workload()):
    """(text, max_new, is_document) for the first n requests of a seed; independent of rate."""
    rng = np.random.default_rng([seed, _CONTENTS])
    for _ in range(n):
        is_doc = bool(rng.random() < wl.doc_probability)
        if is_doc:
            n_chars = int(rng.integers(wl.doc_chars[0], wl.doc_chars[1] + 1))
        else:
            n_chars = max(1, int(rng.lognormal(wl.prompt_log_mu, wl.prompt_log_sigma)))
        max_new = min(wl.out_cap, wl.out_min + int(rng.exponential(wl.out_mean)))
        yield make_text(rng, n_chars), max_new, is_doc


def make_trace(seed: int, duration: float, rate: float, wl: Workload = Workload()) -> list[Request]:
    times = np.zeros(wl.burst) if wl.burst else arrival_times(seed, duration, rate, wl)
    return [Request(rid=i, arrival=float(t), text=text, max_new=max_new, is_document=doc)
            for i, (t, (text, max_new, doc)) in enumerate(zip(times, request_contents(seed, len(times), wl)))]


def startup_heap(wl: Workload = Workload()) -> list:
    """Long-lived objects (configs, registries, vocab maps) the collector must walk."""
    return [{"key": i, "label": f"entry-{i}", "tags": [i, str(i)]} for i in range(wl.startup_objects)]
