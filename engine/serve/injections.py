"""Positive controls: stalls of known size injected at chosen steps (engine/controls.py).

Each injection lands in exactly one place (a segment, a GC pause, an eviction, or a
process competing for the engine's core) and is recorded with its ground truth, so
book/checking can score where the partition put it.
"""
from __future__ import annotations

import gc
import math
import time

from . import segments as S
from .config import INJECTION_KINDS

clock = time.perf_counter
INJECTION_CODES = tuple(INJECTION_KINDS)   # the raw log's kind code is the position here


class Injector:
    """Mixin for the Engine: needs self.model, self.injected, self.hog, self.segs, _close,
    _preempt and the request lists."""

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
            self._close(idx, S.TOK, S.D_TOK, opened, 1)
            a, b = self.segs[-1][3:]
            self._record("pause", idx, a, b, (b - a) * 1e3)
        elif inj.kind == "prefill":
            n = int(inj.amount)
            kv = self.model.new_kv(max(n, 1))
            opened = clock()
            self.model.prefill_chunk(list(range(n)), kv, 0)
            self._close(idx, S.PREFILL, S.D_PREFILL, opened, n)
            a, b = self.segs[-1][3:]
            self._record("prefill", idx, a, b, (b - a) * 1e3)
        elif inj.kind == "hog":
            self.hog.go(inj.amount)
            self._record("hog", idx, math.nan, math.nan, math.nan)   # filled in when it reports

    def _forced_preemption(self, idx: int, decodes: list, amount_ms: float) -> int:
        """Evict the oldest request that has emitted, and keep it out for amount_ms."""
        victim = next((r for r in decodes if r.out), None)
        if victim is None:
            return 0
        self._preempt(victim)
        decodes.remove(victim)
        victim.held_until = clock() + amount_ms / 1e3
        self._record("preempt", idx, victim.evictions[-1][0], math.nan, math.nan, victim.rid)
        return 1

    def _finish_injections(self) -> None:
        """Fill in what is known only later: a forced eviction's readmission, the hog's report."""
        everyone = self.done + self.running + self.swapped
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
