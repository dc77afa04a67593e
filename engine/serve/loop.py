"""The engine loop: continuous batching with every stall mechanism real and tagged.

The engine owns its parts and calls them in the article's order, one call a phase:
the frontend (frontend.py: arrivals and tokenization), the scheduler (scheduler.py:
queues, swap-in, KV slots and eviction, admission), the KV pool (kvpool.py), the model
runner (runner.py: prefill chunks, the decode forward), the step tagger and thread
clocks (tagging.py) and the positive controls' injections (injections.py). Every token
of a step shares one emission timestamp, taken right after the decode forward returns;
every GC pause is timed by gc.callbacks.
"""
from __future__ import annotations

import gc
import math
import time

from . import segments as S
from .config import Config
from .frontend import Frontend
from .gctimer import GCTimer
from .history import CompactHistory, ObjectHistory
from .injections import Injector
from .kvpool import KVPool
from .runner import ModelRunner
from .scheduler import Scheduler
from .tagging import StepTagger
from .threadclock import ThreadClock
from .workload import Request

clock = time.perf_counter


class Engine:
    def __init__(self, cfg: Config, model, trace: list[Request]):
        self.cfg, self.model = cfg, model
        self.thread = ThreadClock()
        self.tagger = StepTagger(cfg, self.thread)
        self.kv = KVPool(cfg, model)
        self.scheduler = Scheduler(cfg, self.kv)
        self.frontend = Frontend(cfg, trace, self.tagger)
        self.runner = ModelRunner(cfg, model, self.tagger)
        self.injector = Injector(cfg, model, self.tagger, self.scheduler)
        self.steps: list[tuple] = []       # (t0, t1, n_decode, n_prefill_tok, graph, preempted, swapped_in)
        self.step_clocks: list[tuple] = [] # per step: (cpu start, cpu end, runq start, runq end)
        self.gc = GCTimer()
        self.history = CompactHistory() if cfg.compact_history else ObjectHistory()
        self.origin = 0.0

    # ------------------------------------------------------------------ one step
    def step(self, opened_step: tuple) -> None:
        idx, sch, tag = len(self.steps), self.scheduler, self.tagger
        # 1. intake: arrivals become waiting requests (and the controls' stalls land)
        did_work = self.frontend.intake(idx, opened_step[0], sch.waiting)
        did_work |= self.injector.at_step(idx)
        # 2. swap-in: preempted requests come back first, when they fit with headroom
        opened = clock()
        n_in = sch.swap_in()
        tag.close(idx, S.SWAP, S.D_SWAP_IN, opened, n_in)
        # 3. a KV slot for every decode; evict the newest running request when the pool is full
        decodes = sch.decodes()
        opened = clock()
        n_out = self.injector.at_reserve(idx, decodes) + sch.reserve(decodes)
        tag.close(idx, S.SWAP, S.D_RESERVE, opened, n_out)
        # 4. leftover token budget: running partial prefills first, then admission (FCFS)
        chunks = sch.plan_prefill(len(decodes))
        # 5. prefill chunks
        n_prefill, n_back = self.runner.prefill(idx, chunks)
        # 6. one decode forward: padded to a captured size, or eager above the largest
        graph = S.NO_DECODE
        if decodes:
            graph, tokens, now = self.runner.decode(idx, decodes)
            sch.emit(idx, decodes, tokens, now, self.history)
        self._close_step(idx, opened_step, did_work or decodes or chunks or n_in or n_out,
                         (len(decodes), n_prefill, graph, n_out, n_in + n_back))

    def _close_step(self, idx: int, opened_step: tuple, worked, counts: tuple) -> None:
        if not worked:                           # an idle spin: drop its empty segments
            self.tagger.drop(idx)
            return
        t_end, cpu = self.tagger.stamp()
        runq = self.tagger.runq_at(t_end, cpu) if self.cfg.thread_clocks else math.nan
        self.steps.append((opened_step[0], t_end, *counts))
        self.step_clocks.append((opened_step[1], cpu, opened_step[2], runq))

    # ------------------------------------------------------------------ what the raw log reads
    segs = property(lambda self: self.tagger.segs)
    seg_work = property(lambda self: self.tagger.seg_work)
    seg_clocks = property(lambda self: self.tagger.seg_clocks)
    injected = property(lambda self: self.injector.injected)
    done = property(lambda self: self.scheduler.done)
    running = property(lambda self: self.scheduler.running)
    swapped = property(lambda self: self.scheduler.swapped)
    waiting = property(lambda self: self.scheduler.waiting)
    free_blocks = property(lambda self: self.kv.free_blocks)

    # ------------------------------------------------------------------ the loop
    def run(self, deadline_s: float | None = None) -> float:
        """Serve the whole trace (or until deadline_s after start). Returns the start time."""
        front, sch = self.frontend, self.scheduler
        front.start_worker()
        self.injector.start_hog()
        self.thread.open()
        self.cpu_origin = self.thread.cpu_s()
        self.runq_origin = self.thread.runq_s()
        self.origin = start = clock()
        self.tagger.mark = (start, self.cpu_origin, self.runq_origin)
        for r in front.trace:
            r.arrival += start
        with self.gc:
            if self.cfg.gc_freeze:
                gc.collect()
                gc.freeze()
            if self.cfg.gc_disable:
                gc.disable()
            try:
                while front.trace or sch.busy() or front.pending:
                    now = clock()
                    if deadline_s is not None and now - start > deadline_s:
                        break
                    if not sch.busy():
                        if front.pending:        # only waiting on the tokenizer worker
                            time.sleep(0.0005)
                        elif front.trace and front.trace[0].arrival > now:
                            time.sleep(front.trace[0].arrival - now)
                            continue
                    self.step(self.tagger.open_step())
            finally:
                if self.cfg.gc_disable:
                    gc.enable()
                if self.cfg.gc_freeze:
                    gc.unfreeze()
                front.stop_worker()
                self.thread.close()
        self.injector.finish()
        return start
