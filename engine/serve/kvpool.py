"""The KV pool: blocks held per request, growth, eviction (swap out) and readmission.

Storage follows the article's engine: a request's KV array is (re)allocated at twice
its length (at least 256 positions, at most max_model_len + 1024) when it outgrows
the one it has, an evicted request's prefix is copied out to the host, and on
readmission it gets a fresh array of twice that prefix and the prefix is copied back.
"""
from __future__ import annotations

import time

clock = time.perf_counter
GROW_MIN, GROW_SLACK = 256, 1024


def copy_in(model, host_kv, n: int):
    """A readmitted request's KV: fresh storage for twice its prefix, the prefix copied back."""
    kv = model.new_kv(2 * n)
    model.put_prefix(kv, host_kv, n)
    return kv


class KVPool:
    """Mixin for the Engine: needs self.cfg, self.model, self.free_blocks, self.running,
    self.waiting, self.swapped."""

    def _blocks(self, n_tokens: int) -> int:
        return -(-n_tokens // self.cfg.block_size)

    def _grow(self, r, n_tokens: int) -> bool:
        """Hold enough blocks for n_tokens of r's KV; False if the pool cannot supply them."""
        need = self._blocks(n_tokens) - r.blocks
        if need > self.free_blocks:
            return False
        self.free_blocks -= need
        r.blocks += need
        if r.kv is None or self.model.capacity(r.kv) < n_tokens:
            cap = max(n_tokens, min(self.cfg.max_model_len + GROW_SLACK, 2 * max(n_tokens, GROW_MIN)))
            kv = self.model.new_kv(cap)
            if r.kv is not None:
                self.model.put_prefix(kv, r.kv, r.computed)
            r.kv = kv
        return True

    def _release(self, r) -> None:
        self.free_blocks += r.blocks
        r.blocks = 0
        r.kv = None

    def _preempt(self, r) -> None:
        self.running.remove(r)
        if r.computed < len(r.prompt):           # mid-prefill: nothing emitted yet, start over
            self._release(r)
            r.computed = 0
            self.waiting.insert(0, r)
            return
        r.evictions.append([clock(), None])      # stamped before the copy-out
        r.host_kv = self.model.take_prefix(r.kv, r.computed)
        self._release(r)
        self.swapped.append(r)

    def _readmit(self, r) -> None:
        """Bring a swapped request back: its blocks, its KV copied in, the readmission stamped."""
        n = self._blocks(r.computed)
        self.free_blocks -= n
        r.blocks = n
        r.kv = copy_in(self.model, r.host_kv, r.computed)
        r.host_kv = None
        r.evictions[-1][1] = clock()             # readmitted: copy-in done
