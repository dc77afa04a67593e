"""Positive controls: stalls of known size injected at chosen steps (engine/controls.py).

Each injection lands in exactly one place (a segment, a GC pause, an eviction, or a
process competing for the engine's core) and is recorded with its ground truth, so
book/checking can score where the partition put it.
"""
from __future__ import annotations

import gc
import math
import os
import time

from . import segments as S
from .config import INJECTION_KINDS
from .hog import Hog

clock = time.perf_counter
INJECTION_CODES = tuple(INJECTION_KINDS)   # the raw log's kind code is the position here


class Injector:
    """The controls' injections of one run, placed through the tagger's and the
    scheduler's public methods."""

    def __init__(self, cfg, model, tagger, scheduler):
        self.model, self.tagger, self.scheduler = model, tagger, scheduler
        self.injected: list[list] = []     # (kind code, step, start, end, injected ms, request)
        self.at: dict = {}
        for inj in cfg.injections:
            self.at.setdefault(inj.step, []).append(inj)
        self.heap = [[i] for inj in cfg.injections if inj.kind == "gc" for i in range(int(inj.amount))]
        self.wants_hog = any(i.kind == "hog" for i in cfg.injections)
        self.hog = None

    def start_hog(self) -> None:
        """Pin this process to one core and start the hog there, before the clock starts."""
        if self.wants_hog and self.hog is None:
            cpu = max(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpu})
            self.hog = Hog(cpu)

    def at_step(self, idx: int) -> bool:
        """The injections of step idx (a forced preemption waits for the KV reservation).
        Popped: an idle spin reuses the index. True if there were any."""
        todo = self.at.pop(idx, ())
        for inj in todo:
            if inj.kind == "preempt":
                self.at.setdefault(("reserve", idx), []).append(inj)
            else:
                self._inject(idx, inj)
        return bool(todo)

    def at_reserve(self, idx: int, decodes: list) -> int:
        """Forced preemptions due at this step's KV reservation; how many evicted."""
        return sum(self._forced_preemption(idx, decodes, inj.amount)
                   for inj in self.at.pop(("reserve", idx), ()))

    def _record(self, kind: str, idx: int, a: float, b: float, ms: float, rid: int = -1) -> list:
        row = [INJECTION_CODES.index(kind), idx, a, b, ms, rid]
        self.injected.append(row)
        return row

    def _inject(self, idx: int, inj) -> None:
        """Known stalls outside every segment but the one they are meant to land in."""
        if inj.kind == "gc":
            a = clock()
            gc.collect()
            b = clock()
            self._record("gc", idx, a, b, (b - a) * 1e3)
        elif inj.kind == "pause":
            opened = clock()
            while clock() - opened < inj.amount / 1e3:
                pass
            self.tagger.close(idx, S.TOK, S.D_TOK, opened, 1)
            a, b = self.tagger.segs[-1][3:]
            self._record("pause", idx, a, b, (b - a) * 1e3)
        elif inj.kind == "prefill":
            n = int(inj.amount)
            kv = self.model.new_kv(max(n, 1))
            opened = clock()
            self.model.prefill_chunk(list(range(n)), kv, 0)
            self.tagger.close(idx, S.PREFILL, S.D_PREFILL, opened, n)
            a, b = self.tagger.segs[-1][3:]
            self._record("prefill", idx, a, b, (b - a) * 1e3)
        elif inj.kind == "hog":
            self.hog.go(inj.amount)
            self._record("hog", idx, math.nan, math.nan, math.nan)   # filled in when it reports

    def _forced_preemption(self, idx: int, decodes: list, amount_ms: float) -> int:
        """Evict the oldest request that has emitted, and keep it out for amount_ms."""
        victim = next((r for r in decodes if r.out), None)
        if victim is None:
            return 0
        self.scheduler.preempt(victim)
        decodes.remove(victim)
        victim.held_until = clock() + amount_ms / 1e3
        self._record("preempt", idx, victim.evictions[-1][0], math.nan, math.nan, victim.rid)
        return 1

    def finish(self) -> None:
        """Fill in what is known only later: a forced eviction's readmission, the hog's report."""
        sch = self.scheduler
        everyone = sch.done + sch.running + sch.swapped + sch.waiting
        for row in self.injected:
            kind = INJECTION_CODES[row[0]]
            if kind == "preempt":
                r = next(r for r in everyone if r.rid == row[5])
                start = [e for e in r.evictions if e[0] == row[2]][0]
                row[3] = start[1] if start[1] is not None else math.nan
                row[4] = (row[3] - row[2]) * 1e3
            elif kind == "hog" and self.hog is not None:
                a, b, cpu_s = self.hog.result()
                row[2], row[3], row[4] = a, b, cpu_s * 1e3
        if self.hog is not None and self.hog.proc.is_alive():   # never told to go
            self.hog.proc.terminate()
