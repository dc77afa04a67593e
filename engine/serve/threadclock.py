"""The engine thread's own clocks, read next to every segment's wall clock.

Wall time minus thread CPU time inside a segment is time the thread was off the CPU;
Linux also tells how much of that it spent runnable but waiting on the run queue
(/proc/thread-self/schedstat, second field, ns). On this project's machine the CPU
clock costs 0.6-0.9 us a read and the run-queue file 1.3-1.9 us, so both are read
outside each segment's wall window, and only where they can have moved (engine/loop.py).
"""
from __future__ import annotations

import math
import os
import time

SCHEDSTAT = "/proc/thread-self/schedstat"


class ThreadClock:
    def __init__(self):
        self._fd = None
        self.runq_reads = 0     # the raw log reports it: the run queue is read on demand

    def open(self) -> None:
        """Open from the thread being measured (the path names the calling thread)."""
        try:
            self._fd = os.open(SCHEDSTAT, os.O_RDONLY)
        except OSError:
            self._fd = None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def runq_s(self) -> float:
        """Cumulative seconds this thread has waited runnable on a run queue (NaN if unknown)."""
        if self._fd is None:
            return math.nan
        self.runq_reads += 1
        return int(os.pread(self._fd, 64, 0).split()[1]) * 1e-9

    cpu_s = staticmethod(time.thread_time)   # the builtin itself: one call, nothing around it
