"""One run, in this process: build the workload, serve it, write the raw log.

Called by `python -m engine run` in a fresh subprocess, so the GC heap and the
allocator state of one run never leak into the next.
"""
from __future__ import annotations

import time
from pathlib import Path

from . import rawlog
from .config import Config
from .loop import Engine
from .model import Model
from .provenance import cpu_ticks, cpu_time_during, provenance
from .tokenizer import get_tokenizer
from .workload import Workload, make_trace, startup_heap


def execute(cfg: Config, seed: int, duration: float, rate: float, out: Path,
            workload: Workload = Workload(), rate_info: dict | None = None) -> Path:
    get_tokenizer()
    heap = startup_heap(workload)          # alive for the whole run, like a real server's
    trace = make_trace(seed, duration, rate, workload)
    trace_rows = [(r.rid, r.arrival, len(r.text), r.max_new) for r in trace]
    eng = Engine(cfg, Model(), trace)
    ticks = cpu_ticks()
    w0 = time.perf_counter()
    eng.run()
    wall = time.perf_counter() - w0
    during = cpu_time_during(ticks, cpu_ticks())
    config = {"rung": cfg.name, "seed": seed, "duration": duration, "rate": rate,
              **cfg.to_dict(), "workload": workload.to_dict()}
    prov = {**provenance(), "rate": rate_info or {"rate": rate, "source": "given"},
            "machine_cpu_s_during_run": during}
    path = rawlog.write_atomic(out, rawlog.arrays_from_engine(eng, trace_rows), wall, config, prov)
    del heap
    return path
