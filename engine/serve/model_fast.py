"""The fast forward (`Config.forward = "fast"`): float32 throughout, with an output head.

A random-weight 2-layer transformer in NumPy. Every array stays float32, so a decode
row attends over its K and V slices in place (no cast), and a 128 x 4096 vocabulary
projection picks each token. This is the faster of the two forwards: later chapters
use it to show how the anatomy moves when the forward pass gets cheaper. Three entry
points, shared with the article forward (model_article.py):

  decode_batched  one batched call for a (padded) batch: the emulated captured graph
  decode_eager    one call per sequence: what runs when no captured size fits
  prefill_chunk   one chunk of one prompt, writing its KV
"""
from __future__ import annotations

import numpy as np

D_MODEL, N_LAYERS, D_FF, VOCAB = 128, 2, 512, 4096
_SCALE = np.float32(1.0 / np.sqrt(D_MODEL))


class FastModel:
    layout = "[layer, k/v, position, d]"

    def __init__(self, seed: int = 0):
        rng = np.random.default_rng(seed)

        def w(rows, cols):
            return (rng.standard_normal((rows, cols), dtype=np.float32) / np.sqrt(rows)).astype(np.float32)

        self.embed = rng.standard_normal((VOCAB, D_MODEL), dtype=np.float32) * np.float32(0.1)
        self.w_qkv = [w(D_MODEL, 3 * D_MODEL) for _ in range(N_LAYERS)]
        self.w_out = [w(D_MODEL, D_MODEL) for _ in range(N_LAYERS)]
        self.w_up = [w(D_MODEL, D_FF) for _ in range(N_LAYERS)]
        self.w_down = [w(D_FF, D_MODEL) for _ in range(N_LAYERS)]
        self.lm_head = w(D_MODEL, VOCAB)

    @staticmethod
    def new_kv(capacity: int) -> np.ndarray:
        """KV storage for one sequence: [layer, k/v, position, d]; positions on axis 2."""
        return np.zeros((N_LAYERS, 2, capacity, D_MODEL), np.float32)

    @staticmethod
    def capacity(kv) -> int:
        return kv.shape[2]

    @staticmethod
    def take_prefix(kv, n: int) -> np.ndarray:
        """A copy of the first n positions (an eviction's copy-out to the host)."""
        return kv[:, :, :n].copy()

    @staticmethod
    def put_prefix(kv, prefix, n: int) -> None:
        kv[:, :, :n] = prefix[:, :, :n]

    def _mlp(self, layer, x):
        return x + np.maximum(x @ self.w_up[layer], 0) @ self.w_down[layer]

    def decode_batched(self, tokens, kvs, positions):
        """One new token per row. Row i attends over kvs[i][:, :, :positions[i] + 1]."""
        x = self.embed[np.asarray(tokens) % VOCAB]
        for layer in range(N_LAYERS):
            qkv = x @ self.w_qkv[layer]
            q, k, v = qkv[:, :D_MODEL], qkv[:, D_MODEL:2 * D_MODEL], qkv[:, 2 * D_MODEL:]
            mixed = np.empty_like(q)
            for i, (kv, pos) in enumerate(zip(kvs, positions)):   # ragged: each row its own length
                kv[layer, 0, pos] = k[i]
                kv[layer, 1, pos] = v[i]
                scores = kv[layer, 0, :pos + 1] @ q[i] * _SCALE
                w = np.exp(scores - scores.max())
                mixed[i] = (w / w.sum()) @ kv[layer, 1, :pos + 1]
            x = self._mlp(layer, x + mixed @ self.w_out[layer])
        return (x @ self.lm_head).argmax(axis=1)

    def decode_eager(self, tokens, kvs, positions):
        """No captured graph: every sequence is its own forward call."""
        return np.concatenate([self.decode_batched([t], [kv], [p])
                               for t, kv, p in zip(tokens, kvs, positions)])

    def prefill_chunk(self, tokens, kv, start: int) -> None:
        """Process prompt tokens [start, start + n) with dense causal attention over the prefix."""
        x = self.embed[np.asarray(tokens) % VOCAB]
        n = len(tokens)
        end = start + n
        # row r (absolute position start + r) may see columns 0 .. start + r
        hidden = np.arange(end)[None, :] > (start + np.arange(n))[:, None]
        for layer in range(N_LAYERS):
            qkv = x @ self.w_qkv[layer]
            kv[layer, 0, start:end] = qkv[:, D_MODEL:2 * D_MODEL]
            kv[layer, 1, start:end] = qkv[:, 2 * D_MODEL:]
            scores = qkv[:, :D_MODEL] @ kv[layer, 0, :end].T
            scores *= _SCALE
            scores[hidden] = -np.inf
            scores -= scores.max(axis=1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=1, keepdims=True)
            x = self._mlp(layer, x + (scores @ kv[layer, 1, :end]) @ self.w_out[layer])
