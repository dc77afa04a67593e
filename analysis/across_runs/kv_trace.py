"""The model's requests (kv_demand.py): the engine's own arrival times, with prompt and
output lengths drawn from the workload's distributions on a stream of the model's own."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine_link import arrival_times

_LENGTHS = 7                  # the model's own stream for lengths, apart from the engine's two


@dataclass(frozen=True)
class Trace:
    arrival: np.ndarray      # s
    prompt: np.ndarray       # tokens, truncated
    max_new: np.ndarray      # output tokens


def sample_lengths(wl, n: int, seed: int, tokens_per_char: float, max_model_len: int):
    """(prompt tokens, output tokens) of n requests from the workload's distributions."""
    rng = np.random.default_rng([int(seed), _LENGTHS])
    doc = rng.random(n) < wl.doc_probability
    chars = np.maximum(1, rng.lognormal(wl.prompt_log_mu, wl.prompt_log_sigma, n).astype(np.int64))
    chars = np.where(doc, rng.integers(wl.doc_chars[0], wl.doc_chars[1] + 1, n), chars)
    prompt = np.clip(np.round(chars * tokens_per_char).astype(np.int64), 1, max_model_len)
    out = np.minimum(wl.out_cap, wl.out_min + rng.exponential(wl.out_mean, n).astype(np.int64))
    return prompt, out


def workload_trace(wl, seed: int, duration: float, rate: float, tokens_per_char: float,
                   max_model_len: int) -> Trace:
    """The engine's arrival times for (seed, duration, rate) with lengths from sample_lengths."""
    t = np.asarray(arrival_times(int(seed), float(duration), float(rate), wl), float)
    prompt, out = sample_lengths(wl, len(t), seed, tokens_per_char, max_model_len)
    return Trace(t, prompt, out)
