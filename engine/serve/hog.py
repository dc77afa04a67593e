"""A CPU hog for the `os` positive control: a process pinned to the engine's core that
spins for a known window when told to, and reports the window and its own CPU time.

Both processes on one core means every millisecond the hog runs is a millisecond the
engine thread, runnable, could not: the hog's CPU time is the stall it injected.
"""
from __future__ import annotations

import multiprocessing
import os
import time


def _serve(conn, cpu: int) -> None:
    os.sched_setaffinity(0, {cpu})
    conn.send("ready")
    ms = conn.recv()
    t0, c0 = time.perf_counter(), time.thread_time()
    while time.perf_counter() - t0 < ms / 1e3:
        pass
    conn.send((t0, time.perf_counter(), time.thread_time() - c0))


class Hog:
    def __init__(self, cpu: int):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, cpu), daemon=True)
        self.proc.start()
        if self.conn.recv() != "ready":
            raise RuntimeError("the CPU hog did not start")

    def go(self, ms: float) -> None:
        self.conn.send(ms)

    def result(self) -> tuple[float, float, float]:
        """(start, end) on the perf_counter clock, and the hog's CPU seconds."""
        out = self.conn.recv()
        self.proc.join()
        return out
