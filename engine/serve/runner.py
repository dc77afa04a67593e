"""The model runner: prefill chunks, and one decode forward per step, padded to the
smallest captured size that holds the batch, or eager (one call per sequence) above the
largest. Each call is tagged as a segment of the step."""
from __future__ import annotations

import bisect
import time

from . import segments as S

clock = time.perf_counter


class ModelRunner:
    def __init__(self, cfg, model, tagger):
        self.cfg, self.model, self.tagger = cfg, model, tagger

    def prefill(self, idx: int, chunks: list) -> int:
        """Run each (request, n) chunk of its prompt; the prompt tokens processed."""
        opened = clock()
        n_prefill = 0
        for r, n in chunks:
            self.model.prefill_chunk(r.prompt[r.computed:r.computed + n], r.kv, r.computed)
            r.computed += n
            n_prefill += n
        self.tagger.close(idx, S.PREFILL, S.D_PREFILL, opened, n_prefill)
        return n_prefill

    def decode(self, idx: int, decodes: list) -> tuple:
        """(graph code, tokens, emission time) of one decode forward over `decodes`."""
        cfg = self.cfg
        B = len(decodes)
        i = bisect.bisect_left(cfg.capture_sizes, B)
        tokens = [r.out[-1] if r.out else r.prompt[-1] for r in decodes]
        kvs = [r.kv for r in decodes]
        pos = [r.computed for r in decodes]
        opened = clock()
        if i < len(cfg.capture_sizes):
            graph = cfg.capture_sizes[i]
            pad = graph - B                      # padded rows are real work, then discarded
            out = self.model.decode_batched(tokens + tokens[:1] * pad, kvs + kvs[:1] * pad,
                                            pos + pos[:1] * pad)[:B]
        else:
            graph = S.EAGER
            out = self.model.decode_eager(tokens, kvs, pos)
        end = self.tagger.stamp()
        self.tagger.close(idx, S.DECODE, S.D_DECODE, opened, B, end=end)
        return graph, out.tolist(), end[0]       # every token of this step shares end[0]
