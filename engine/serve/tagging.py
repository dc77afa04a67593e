"""Step tags and the thread clocks read beside them.

Every segment of a step is recorded as (step, code, detail, start, end) with what it
processed. The thread-clock reads are what the refined scheme costs the engine, so
each is made only where it can say something: the CPU clock at a step's start and end
and after a segment that did work (an empty segment's instant shares the next
reading's interval), the run queue only when the thread has been off the CPU.
"""
from __future__ import annotations

import math
import time

clock = time.perf_counter
OFFCPU_READ_S = 1e-6     # off-CPU time since the last run-queue read that makes it worth a new one
NO_CLOCKS = (math.nan, math.nan)


class StepTagger:
    def __init__(self, cfg, thread):
        self.cfg, self.thread = cfg, thread
        self.mark = (0.0, 0.0, math.nan)   # (wall, cpu, runq) at the latest run-queue read
        self.segs: list[tuple] = []        # (step, code, detail, start, end)
        self.seg_work: list[int] = []      # per segment: items it processed (0: bookkeeping only)
        self.seg_clocks: list[tuple] = []  # per segment: (cpu, runq) right after it closed, or NaN

    def runq_at(self, wall: float, cpu: float) -> float:
        """The run-queue clock now: read afresh only when the thread lost more than
        OFFCPU_READ_S of CPU time since the last read (waiting runnable is time off the
        CPU, so otherwise it cannot have moved by more than that)."""
        w, c, rq = self.mark
        if (wall - w) - (cpu - c) > OFFCPU_READ_S:
            rq = self.thread.runq_s()
            self.mark = (wall, cpu, rq)
        return rq

    def open_step(self) -> tuple:
        """(wall, cpu, runq) at a step's start; the CPU clock is read before the wall clock
        so that read stays outside the step (a run-queue read, needed mostly after an idle
        sleep, falls inside it)."""
        if not self.cfg.thread_clocks:
            return clock(), math.nan, math.nan
        cpu = self.thread.cpu_s()
        wall = clock()
        return wall, cpu, self.runq_at(wall, cpu)

    def stamp(self, read: bool = True) -> tuple:
        """(wall, cpu) at a segment's or step's end: the CPU clock right after the wall
        clock, so the read stays outside the span and nothing else runs between them."""
        b = clock()
        return b, (self.thread.cpu_s() if read and self.cfg.thread_clocks else math.nan)

    def close(self, idx: int, code: int, detail: int, opened: float, work: int,
              end: tuple | None = None) -> None:
        b, cpu = self.stamp(work > 0) if end is None else end
        self.segs.append((idx, code, detail, opened, b))
        self.seg_work.append(work)
        self.seg_clocks.append(NO_CLOCKS if cpu != cpu else (cpu, self.runq_at(b, cpu)))

    def drop(self, idx: int) -> None:
        """An idle spin: forget the empty segments it opened."""
        while self.segs and self.segs[-1][0] == idx:
            self.segs.pop()
            self.seg_work.pop()
            self.seg_clocks.pop()
