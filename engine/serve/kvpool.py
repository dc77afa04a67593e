"""The KV pool: blocks held per request, growth, release, and the host copies of an
eviction (copy out) and a readmission (copy in).

Storage follows the article's engine: a request's KV array is (re)allocated at twice
its length (at least 256 positions, at most max_model_len + 1024) when it outgrows
the one it has, an evicted request's prefix is copied out to the host, and on
readmission it gets a fresh array of twice that prefix and the prefix is copied back.
"""
from __future__ import annotations

GROW_MIN, GROW_SLACK = 256, 1024


class KVPool:
    def __init__(self, cfg, model):
        self.cfg, self.model = cfg, model
        self.free_blocks = cfg.kv_blocks

    def blocks(self, n_tokens: int) -> int:
        """Blocks that n_tokens of KV occupy."""
        return -(-n_tokens // self.cfg.block_size)

    def grow(self, r, n_tokens: int) -> bool:
        """Hold enough blocks for n_tokens of r's KV; False if the pool cannot supply them."""
        need = self.blocks(n_tokens) - r.blocks
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

    def release(self, r) -> None:
        """Give r's blocks back and drop its KV."""
        self.free_blocks += r.blocks
        r.blocks = 0
        r.kv = None

    def copy_out(self, r) -> None:
        """An eviction's swap out: r's computed prefix copied to the host, its blocks freed."""
        r.host_kv = self.model.take_prefix(r.kv, r.computed)
        self.release(r)

    def fits_back(self, r, headroom: int) -> bool:
        """Would r's swapped prefix (and its next token) fit with `headroom` blocks to spare?"""
        return self.blocks(r.computed + 1) + headroom <= self.free_blocks

    def copy_in(self, r) -> None:
        """A readmission's swap in: r's blocks back, fresh storage for twice its prefix,
        the prefix copied into it."""
        n = self.blocks(r.computed)
        self.free_blocks -= n
        r.blocks = n
        r.kv = self.model.new_kv(2 * r.computed)
        self.model.put_prefix(r.kv, r.host_kv, r.computed)
        r.host_kv = None
