"""The article forward (`Config.forward = "article"`, the default): the article engine's cost.

The article's engine builds float32 random weights and scales them by a NumPy float64
scalar (1/sqrt(fan-in)). Under NumPy 2's promotion rules that product is float64, so
its projections, and every hidden state after the embedding, are float64, while the KV
cache stays float32. Each decode row therefore casts its whole K and V slice to float64
for its two attention products, and a step's cost grows with the context in flight.
There is no vocabulary projection: a token is read off the first hidden dimensions.
Prefill adds a precomputed float32 causal mask to float64 scores.

This module reproduces that arithmetic and data movement (dtypes, casts, array shapes,
KV stored as separate K and V planes) in this project's own code, so the default
engine costs what the article's costs, mechanism by mechanism
(benchmarks/bench_fidelity.py checks it side by side).
"""
from __future__ import annotations

import numpy as np

D_MODEL, N_LAYERS, D_FF, VOCAB = 128, 2, 512, 4096
MASK_LEN = 2048 + 640               # prefill positions the causal mask covers
READOUT_DIMS = 8                    # hidden dims summed into a token id (no output head)
_SCALE = 1 / np.sqrt(D_MODEL)       # a NumPy float64 scalar: promotes what it multiplies


class ArticleModel:
    layout = "(K, V), each [layer, position, d]"

    def __init__(self, seed: int = 0):
        rng = np.random.default_rng(seed)

        def w(rows, cols):           # float32 draws times a float64 scale -> float64 weights
            return rng.standard_normal((rows, cols), dtype=np.float32) * (1 / np.sqrt(rows))

        self.w_qkv = [w(D_MODEL, 3 * D_MODEL) for _ in range(N_LAYERS)]
        self.w_out = [w(D_MODEL, D_MODEL) for _ in range(N_LAYERS)]
        self.w_up = [w(D_MODEL, D_FF) for _ in range(N_LAYERS)]
        self.w_down = [w(D_FF, D_MODEL) for _ in range(N_LAYERS)]
        self.embed = rng.standard_normal((VOCAB, D_MODEL), dtype=np.float32) * 0.1   # stays float32
        # additive causal mask, float32, built once: row r may see columns <= r
        self.causal = np.triu(np.full((MASK_LEN, MASK_LEN), -1e9, np.float32), k=1)

    @staticmethod
    def new_kv(capacity: int) -> tuple:
        """KV storage for one sequence, as the article's engine allocates it: two separate
        float32 arrays K and V, each [layer, position, d] (two allocations, not one: the
        allocator treats two 4 MB arrays differently from one 8 MB array). K comes from
        np.zeros, whose fresh pages stay unmapped until written; V from np.zeros_like(K),
        which writes zeros over its whole capacity at once. That asymmetry is the
        article's, and it shows in what a readmission or a growing cache costs."""
        k = np.zeros((N_LAYERS, capacity, D_MODEL), np.float32)
        return k, np.zeros_like(k)

    @staticmethod
    def capacity(kv) -> int:
        return kv[0].shape[1]

    @staticmethod
    def take_prefix(kv, n: int) -> tuple:
        """A copy of the first n positions (an eviction's copy-out to the host)."""
        return kv[0][:, :n].copy(), kv[1][:, :n].copy()

    @staticmethod
    def put_prefix(kv, prefix, n: int) -> None:
        kv[0][:, :n] = prefix[0][:, :n]
        kv[1][:, :n] = prefix[1][:, :n]

    def _mlp(self, layer, x):
        return x + np.maximum(x @ self.w_up[layer], 0) @ self.w_down[layer]

    def decode_batched(self, tokens, kvs, positions):
        """One new token per row. Row i attends over positions 0..positions[i] of kvs[i]."""
        x = self.embed[np.asarray(tokens) % VOCAB]
        for layer in range(N_LAYERS):
            qkv = x @ self.w_qkv[layer]                       # float64
            q, k, v = qkv[:, :D_MODEL], qkv[:, D_MODEL:2 * D_MODEL], qkv[:, 2 * D_MODEL:]
            mixed = np.empty_like(q)
            for i, (kv, pos) in enumerate(zip(kvs, positions)):
                keys, values = kv[0][layer], kv[1][layer]
                keys[pos] = k[i]                              # stored as float32
                values[pos] = v[i]
                scores = keys[:pos + 1] @ q[i] * _SCALE      # casts the K slice to float64
                scores = np.exp(scores - scores.max())
                mixed[i] = (scores / scores.sum()) @ values[:pos + 1]   # and the V slice
            x = self._mlp(layer, x + mixed @ self.w_out[layer])
        return (np.abs(x[:, :READOUT_DIMS].sum(axis=1) * 1000)).astype(np.int64) % VOCAB

    def decode_eager(self, tokens, kvs, positions):
        """No captured graph: every sequence is its own forward call."""
        return np.concatenate([self.decode_batched([t], [kv], [p])
                               for t, kv, p in zip(tokens, kvs, positions)])

    def prefill_chunk(self, tokens, kv, start: int) -> None:
        """Prompt tokens [start, start + n): dense causal attention over the prefix."""
        x = self.embed[np.asarray(tokens) % VOCAB]
        end = start + len(tokens)
        mask = self.causal[start:end, :end]
        for layer in range(N_LAYERS):
            keys, values = kv[0][layer], kv[1][layer]
            qkv = x @ self.w_qkv[layer]
            keys[start:end] = qkv[:, D_MODEL:2 * D_MODEL]
            values[start:end] = qkv[:, 2 * D_MODEL:]
            scores = qkv[:, :D_MODEL] @ keys[:end].T
            scores *= _SCALE
            scores += mask
            scores -= scores.max(axis=1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=1, keepdims=True)
            x = x + (scores @ values[:end]) @ self.w_out[layer]
            x = self._mlp(layer, x)
