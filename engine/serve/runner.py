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

    def prefill(self, idx: int, chunks: list) -> tuple[int, int]:
        """Run each (request, n) chunk: first-time prompts in one segment, recompute
        victims' re-prefills (only when there are any) in a segment of their own. Returns
        the tokens processed and how many re-prefills completed (readmissions)."""
        opened = clock()
        n_prefill = 0
        again = []
        for r, n in chunks:
            if r.refill is not None:
                again.append((r, n))
                continue
            self.model.prefill_chunk(r.prompt[r.computed:r.computed + n], r.kv, r.computed)
            r.computed += n
            n_prefill += n
        self.tagger.close(idx, S.PREFILL, S.D_PREFILL, opened, n_prefill)
        if not again:
            return n_prefill, 0
        opened = clock()
        n_again = n_back = 0
        for r, n in again:
            self.model.prefill_chunk(r.refill[r.computed:r.computed + n], r.kv, r.computed)
            r.computed += n
            n_again += n
            if r.computed == len(r.refill):      # KV rebuilt: readmitted now, decodes next step
                r.evictions[-1][1] = clock()
                r.refill = None
                n_back += 1
        self.tagger.close(idx, S.PREFILL, S.D_REPREFILL, opened, n_again)
        return n_prefill + n_again, n_back

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
