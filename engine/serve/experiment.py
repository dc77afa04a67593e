"""One run, in this process: build the workload, serve it, write the raw log.

Called by `python -m engine run` in a fresh subprocess, so the GC heap and the
allocator state of one run never leak into the next.
"""
from __future__ import annotations

import gc
import time
from pathlib import Path

import numpy as np

from . import rawlog
from .config import Config
from .loop import Engine
from .model import make_model
from .provenance import cpu_ticks, cpu_time_during, provenance
from .tokenizer import get_tokenizer
from .workload import Workload, make_trace, startup_heap


def execute(cfg: Config, seed: int, duration: float, rate: float, out: Path,
            workload: Workload = Workload(), rate_info: dict | None = None,
            schedule: dict | None = None) -> Path:
    get_tokenizer()
    heap = startup_heap(workload)          # alive for the whole run, like a real server's
    trace = make_trace(seed, duration, rate, workload)
    trace_rows = [(r.rid, r.arrival, len(r.text), r.max_new) for r in trace]
    eng = Engine(cfg, make_model(cfg.forward), trace)
    tracked_before = len(gc.get_objects())  # the collector's tracked heap, read outside the timed run
    started = time.time()
    ticks = cpu_ticks()
    w0 = time.perf_counter()
    eng.run()
    wall = time.perf_counter() - w0
    tracked_after = len(gc.get_objects())
    during = cpu_time_during(ticks, cpu_ticks())
    config = {"rung": cfg.name, "seed": seed, "duration": duration, "rate": rate,
              **cfg.to_dict(), "workload": workload.to_dict()}
    prov = {**provenance(), "rate": rate_info or {"rate": rate, "source": "given"},
            "machine_cpu_s_during_run": during, "started_unix": round(started, 3), "schedule": schedule or {}}
    arrays = rawlog.arrays_from_engine(eng, trace_rows)
    arrays["gc_tracked"] = np.array([tracked_before, tracked_after], dtype=np.int64)
    path = rawlog.write_atomic(out, arrays, wall, config, prov)
    del heap
    return path
