"""The knobs of one real-engine run, and the rungs of its short ladder.

The model is a random-weight Llama small enough for a CPU step of a few milliseconds; its
vocabulary is the book's tokenizer's, so the book's prompts feed it as they are. The cache
and batch sizes mirror the book's engine (engine/serve/config.py): a KV pool of 1,000
blocks of 16 tokens, a 2,048-token step budget, prompts cut at 2,048 tokens.
"""
from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass

from ..serve.tokenizer import VOCAB_SIZE

PREEMPT = ("recompute", "swap")
TOKENIZE = ("frontend", "ahead")


@dataclass(frozen=True)
class RealConfig:
    name: str = "baseline"
    # the model (random weights, seeded: no download)
    hidden_size: int = 128
    intermediate_size: int = 384
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    model_seed: int = 0
    # the engine's knobs (ContinuousBatchingConfig)
    page_size: int = 16               # tokens per KV page
    num_blocks: int = 1000            # KV pool size
    max_batch_tokens: int = 2048      # tokens per step: the token budget
    max_requests_per_batch: int = 48
    preempt: str = "recompute"        # "swap": victims' KV copied to a CPU pool and back
    swap_gib: float = 1.0             # that pool's size, under "swap"
    max_model_len: int = 2048         # prompts are cut to this many tokens
    # what this book adds around it
    gc_freeze: bool = False           # gc.freeze() after start-up, before serving
    tokenize: str = "frontend"        # "frontend": in the request thread at arrival; "ahead": before the run

    def __post_init__(self):
        if self.preempt not in PREEMPT:
            raise ValueError(f"preempt must be one of {', '.join(PREEMPT)}, got {self.preempt!r}")
        if self.tokenize not in TOKENIZE:
            raise ValueError(f"tokenize must be one of {', '.join(TOKENIZE)}, got {self.tokenize!r}")
        for knob in ("hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads", "num_blocks",
                     "max_batch_tokens", "max_requests_per_batch", "max_model_len"):
            v = getattr(self, knob)
            if int(v) != v or v < 1:
                raise ValueError(f"{knob} must be a whole number >= 1, got {v!r}")
        if self.page_size < 4:
            raise ValueError(f"page_size must be at least 4 tokens (transformers' floor), got {self.page_size!r}")
        if self.hidden_size % self.num_heads or self.num_heads % self.num_kv_heads:
            raise ValueError("hidden_size must divide by num_heads, and num_heads by num_kv_heads")

    @property
    def vocab_size(self) -> int:
        return VOCAB_SIZE

    def to_dict(self) -> dict:
        return {**asdict(self), "vocab_size": self.vocab_size}

    @classmethod
    def from_dict(cls, d: dict) -> "RealConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known - {"vocab_size"}
        if unknown:
            raise ValueError(f"unknown RealConfig fields: {sorted(unknown)}")
        return cls(**{k: v for k, v in d.items() if k in known})


# the fixes that exist as knobs on this engine, one at a time from the baseline
RUNGS = {
    "baseline": {},
    "+gc.freeze": {"gc_freeze": True},
    "+budget 256": {"max_batch_tokens": 256},
    "+tokenize ahead": {"tokenize": "ahead"},
    "swap": {"preempt": "swap"},
}


def rung_config(name: str, **over) -> RealConfig:
    if name not in RUNGS:
        raise ValueError(f"unknown real-engine rung {name!r}; the rungs are {', '.join(RUNGS)}")
    return RealConfig(name=name, **{**RUNGS[name], **over})
