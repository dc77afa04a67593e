"""Time every cyclic-GC pause with gc.callbacks: two clock reads per collection."""
from __future__ import annotations

import gc
import time


class GCTimer:
    def __init__(self):
        self.pauses: list[tuple[float, float, int]] = []   # (start, end, generation), perf_counter
        self._t0 = 0.0

    def _callback(self, phase, info):
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.pauses.append((self._t0, time.perf_counter(), info["generation"]))

    def __enter__(self):
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc):
        gc.callbacks.remove(self._callback)
