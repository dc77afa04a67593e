"""The frontend: arrivals become waiting requests, tokenized on the loop (a tagged
segment each) or by an off-loop worker process whose results are collected each step."""
from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

from . import segments as S
from .tokenizer import get_tokenizer, tokenize

clock = time.perf_counter


def tokenize_truncated(text: str, max_len: int) -> list[int]:
    """Worker entry point: tokenize and truncate in the worker, so only max_len ids cross the pipe."""
    return tokenize(text)[:max_len]


class Frontend:
    def __init__(self, cfg, trace: list, tagger):
        self.cfg, self.tagger = cfg, tagger
        self.trace = list(trace)           # not yet arrived, in arrival order
        self.pending: list = []            # (request, future) off-loop tokenizations
        self.pool = None

    def start_worker(self) -> None:
        """Start and warm the off-loop tokenizer before the clock starts (like a running frontend)."""
        if self.cfg.async_tokenize and self.pool is None:
            ctx = multiprocessing.get_context("spawn")
            self.pool = ProcessPoolExecutor(1, mp_context=ctx, initializer=get_tokenizer)
            self.pool.submit(tokenize_truncated, "warm up", 8).result()

    def stop_worker(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()

    def intake(self, idx: int, now: float, waiting: list) -> bool:
        """Arrivals up to `now` tokenized (or handed to the worker); finished off-loop
        tokenizations join `waiting`. True if anything arrived."""
        trace, arrived = self.trace, False
        while trace and trace[0].arrival <= now:
            r = trace.pop(0)
            if self.pool is not None:
                self.pending.append((r, self.pool.submit(tokenize_truncated, r.text, self.cfg.max_model_len)))
            else:
                opened = clock()
                r.prompt = tokenize(r.text)[:self.cfg.max_model_len]
                self.tagger.close(idx, S.TOK, S.D_TOK, opened, 1)
                waiting.append(r)
            arrived = True
        if self.pending:
            ready = [p for p in self.pending if p[1].done()]
            for p in ready:
                p[0].prompt = p[1].result()
                waiting.append(p[0])
                self.pending.remove(p)
        return arrived
