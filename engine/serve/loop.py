"""The engine loop: continuous batching with every stall mechanism real and tagged.

One step = intake (tokenize arrivals, or collect off-loop tokenizations), swap-in of
preempted requests, a KV slot for every decode (evicting the newest running request
when the pool is full), leftover token budget to prefill chunks, then one decode
forward. Every token of a step shares one emission timestamp, taken right after the
decode forward returns; every GC pause is timed by gc.callbacks.

The step's parts live beside it: the KV pool (kvpool.py), the step tags and thread
clocks (tagging.py) and the positive controls' injections (injections.py).
"""
from __future__ import annotations

import bisect
import gc
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from . import segments as S
from .config import Config
from .gctimer import GCTimer
from .history import CompactHistory, ObjectHistory
from .hog import Hog
from .injections import Injector
from .kvpool import KVPool
from .tagging import StepTagger
from .threadclock import ThreadClock
from .tokenizer import get_tokenizer, tokenize
from .workload import Request

clock = time.perf_counter


def tokenize_truncated(text: str, max_len: int) -> list[int]:
    """Worker entry point: tokenize and truncate in the worker, so only max_len ids cross the pipe."""
    return tokenize(text)[:max_len]


class Engine(KVPool, StepTagger, Injector):
    def __init__(self, cfg: Config, model, trace: list[Request]):
        self.cfg, self.model = cfg, model
        self.trace = list(trace)           # not yet arrived, in arrival order
        self.waiting: list[Request] = []   # tokenized, not admitted
        self.running: list[Request] = []   # admitted, holding KV
        self.swapped: list[Request] = []   # preempted, KV on the host
        self.done: list[Request] = []
        self.pending: list = []            # (request, future) off-loop tokenizations
        self.free_blocks = cfg.kv_blocks
        self.steps: list[tuple] = []       # (t0, t1, n_decode, n_prefill_tok, graph, preempted, swapped_in)
        self.segs: list[tuple] = []        # (step, code, detail, start, end)
        self.seg_work: list[int] = []      # per segment: items it processed (0: bookkeeping only)
        self.seg_clocks: list[tuple] = []  # per segment: (cpu, runq) right after it closed, or NaN
        self.step_clocks: list[tuple] = [] # per step: (cpu start, cpu end, runq start, runq end)
        self.injected: list[list] = []     # (kind code, step, start, end, injected ms, request)
        self._inject_at = {}
        for inj in cfg.injections:
            self._inject_at.setdefault(inj.step, []).append(inj)
        self._inject_heap = [[i] for inj in cfg.injections if inj.kind == "gc"
                             for i in range(int(inj.amount))]
        self.hog = None
        self._mark = (0.0, 0.0, math.nan)  # (wall, cpu, runq) at the latest run-queue read
        self.thread = ThreadClock()
        self.gc = GCTimer()
        self.history = CompactHistory() if cfg.compact_history else ObjectHistory()
        self.pool = None
        self.origin = 0.0

    # ------------------------------------------------------------------ one step
    def step(self, opened_step: tuple) -> None:
        cfg, idx = self.cfg, len(self.steps)
        t_start = opened_step[0]
        did_work = False

        # 1. intake: arrivals become waiting requests
        while self.trace and self.trace[0].arrival <= t_start:
            r = self.trace.pop(0)
            if self.pool is not None:
                self.pending.append((r, self.pool.submit(tokenize_truncated, r.text, cfg.max_model_len)))
            else:
                opened = clock()
                r.prompt = tokenize(r.text)[:cfg.max_model_len]
                self._close(idx, S.TOK, S.D_TOK, opened, 1)
                self.waiting.append(r)
            did_work = True
        if self.pending:
            ready = [p for p in self.pending if p[1].done()]
            for p in ready:
                p[0].prompt = p[1].result()
                self.waiting.append(p[0])
                self.pending.remove(p)
        for inj in self._inject_at.pop(idx, ()):  # popped: an idle spin reuses the index
            if inj.kind == "preempt":
                self._inject_at.setdefault(("reserve", idx), []).append(inj)
            else:
                self._inject(idx, inj)
            did_work = True

        # 2. swap-in: preempted requests come back first, when they fit with headroom
        opened = clock()
        n_in = 0
        while self.swapped and len(self.running) < cfg.max_num_seqs:
            r = self.swapped[0]
            if self._blocks(r.computed + 1) + cfg.swap_in_headroom > self.free_blocks:
                break
            if r.held_until > clock():
                break
            self.swapped.pop(0)
            self._readmit(r)
            self.running.append(r)
            n_in += 1
        self._close(idx, S.SWAP, S.D_SWAP_IN, opened, n_in)

        # 3. a KV slot for every decode; evict the newest running request when the pool is full
        decodes = [] if self._holding() else [r for r in self.running if r.computed >= len(r.prompt)]
        opened = clock()
        n_out = 0
        for inj in self._inject_at.pop(("reserve", idx), ()):
            n_out += self._forced_preemption(idx, decodes, inj.amount)
        for r in list(decodes):
            if r not in decodes:                 # already evicted as someone's victim
                continue
            while not self._grow(r, r.computed + 1) and self.running:
                victim = self.running[-1]
                self._preempt(victim)
                n_out += 1
                if victim in decodes:
                    decodes.remove(victim)
                if victim is r:
                    break
        self._close(idx, S.SWAP, S.D_RESERVE, opened, n_out)

        # 4. leftover token budget: running partial prefills first, then admission (FCFS)
        budget = cfg.token_budget - len(decodes)
        chunks = []
        for r in self.running:
            if r.computed < len(r.prompt) and budget > 0:
                n = min(budget, len(r.prompt) - r.computed)
                if self._grow(r, r.computed + n):
                    chunks.append((r, n))
                    budget -= n
        reserve = cfg.admit_watermark * cfg.kv_blocks
        while self.waiting and budget > 0 and len(self.running) < cfg.max_num_seqs:
            r = self.waiting[0]
            if self.free_blocks - self._blocks(len(r.prompt)) < reserve:
                break
            n = min(budget, len(r.prompt))
            if not self._grow(r, n):
                break
            self.waiting.pop(0)
            self.running.append(r)
            chunks.append((r, n))
            budget -= n

        # 5. prefill chunks
        opened = clock()
        n_prefill = 0
        for r, n in chunks:
            self.model.prefill_chunk(r.prompt[r.computed:r.computed + n], r.kv, r.computed)
            r.computed += n
            n_prefill += n
        self._close(idx, S.PREFILL, S.D_PREFILL, opened, n_prefill)

        # 6. one decode forward: padded to a captured size, or eager above the largest
        graph = S.NO_DECODE
        if decodes:
            B = len(decodes)
            i = bisect.bisect_left(cfg.capture_sizes, B)
            tokens = [r.out[-1] if r.out else r.prompt[-1] for r in decodes]
            kvs = [r.kv for r in decodes]
            pos = [r.computed for r in decodes]
            opened = clock()
            if i < len(cfg.capture_sizes):
                graph = cfg.capture_sizes[i]
                pad = graph - B                  # padded rows are real work, then discarded
                out = self.model.decode_batched(tokens + tokens[:1] * pad, kvs + kvs[:1] * pad,
                                                pos + pos[:1] * pad)[:B]
            else:
                graph = S.EAGER
                out = self.model.decode_eager(tokens, kvs, pos)
            end = self._stamp()
            now = end[0]                         # the emission timestamp of every token of this step
            self._close(idx, S.DECODE, S.D_DECODE, opened, B, end=end)
            for r, tok in zip(decodes, out.tolist()):
                r.computed += 1
                r.out.append(tok)
                r.emit_t.append(now)
                r.emit_step.append(idx)
                if r.first_token_t is None:
                    r.first_token_t = now
                self.history.add(r.rid, tok, now)
                if len(r.out) >= r.max_new:
                    self.running.remove(r)
                    self._release(r)
                    self.done.append(r)

        if did_work or decodes or chunks or n_in or n_out:
            t_end, cpu = self._stamp()
            runq = self._runq_at(t_end, cpu) if cfg.thread_clocks else math.nan
            self.steps.append((t_start, t_end, len(decodes), n_prefill, graph, n_out, n_in))
            self.step_clocks.append((opened_step[1], cpu, opened_step[2], runq))
        else:                                    # an idle spin: drop its empty segments
            self._drop_segments(idx)

    def _holding(self) -> bool:
        """hold_decode (a control): decode waits while any prompt is still being prefilled."""
        if not self.cfg.hold_decode:
            return False
        mid_prefill = any(r.computed < len(r.prompt) for r in self.running)
        return mid_prefill or bool(self.waiting and len(self.running) < self.cfg.max_num_seqs)

    # ------------------------------------------------------------------ the loop
    def start_tokenizer_worker(self) -> None:
        """Start and warm the off-loop tokenizer before the clock starts (like a running frontend)."""
        if self.cfg.async_tokenize and self.pool is None:
            ctx = multiprocessing.get_context("spawn")
            self.pool = ProcessPoolExecutor(1, mp_context=ctx, initializer=get_tokenizer)
            self.pool.submit(tokenize_truncated, "warm up", 8).result()

    def start_hog(self) -> None:
        """Pin this process to one core and start the hog there, before the clock starts."""
        if any(i.kind == "hog" for i in self.cfg.injections) and self.hog is None:
            cpu = max(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpu})
            self.hog = Hog(cpu)

    def run(self, deadline_s: float | None = None) -> float:
        """Serve the whole trace (or until deadline_s after start). Returns the start time."""
        self.start_tokenizer_worker()
        self.start_hog()
        self.thread.open()
        self.cpu_origin = self.thread.cpu_s()
        self.runq_origin = self.thread.runq_s()
        self.origin = start = clock()
        self._mark = (start, self.cpu_origin, self.runq_origin)
        for r in self.trace:
            r.arrival += start
        busy = lambda: self.waiting or self.running or self.swapped
        with self.gc:
            if self.cfg.gc_freeze:
                gc.collect()
                gc.freeze()
            if self.cfg.gc_disable:
                gc.disable()
            try:
                while self.trace or busy() or self.pending:
                    now = clock()
                    if deadline_s is not None and now - start > deadline_s:
                        break
                    if not busy():
                        if self.pending:         # only waiting on the tokenizer worker
                            time.sleep(0.0005)
                        elif self.trace and self.trace[0].arrival > now:
                            time.sleep(self.trace[0].arrival - now)
                            continue
                    self.step(self._open_step())
            finally:
                if self.cfg.gc_disable:
                    gc.enable()
                if self.cfg.gc_freeze:
                    gc.unfreeze()
                if self.pool is not None:
                    self.pool.shutdown()
                self.thread.close()
        self._finish_injections()
        return start
