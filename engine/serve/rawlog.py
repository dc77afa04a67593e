"""Write one run as a raw log: the article's arrays (same names, columns, codes and
units: seconds since engine start) plus a schema version, the full config and
provenance. Written atomically: a temp file, then os.replace.

The steps' `swapped_in` column counts readmissions: swap-ins, and under
Config.preempt_mode "recompute" the victims whose re-prefill completed in the step.
Extra arrays, one row per row of `segs`:
  seg_detail  finer segment kind (engine.segments.DETAIL_NAMES): 0 tok, 1 swap_in,
              2 kv_reserve, 3 prefill, 4 decode, 5 reprefill (a recompute victim's KV
              rebuilt by prefill: code PREFILL, apart from first-time prefill)
  seg_work    items the segment processed (requests tokenized, swapped in or evicted,
              prefill tokens, decode rows); 0 means it only did bookkeeping
  seg_cpu_end   the engine thread's CPU clock read right after the segment closed (s
              since start); NaN for a segment that processed nothing, whose instant
              belongs to the interval up to the next reading
  seg_runq_end  its cumulative run-queue wait at that reading (s since start; NaN if
              the OS does not say). Read afresh only when the thread lost more than
              engine.serve.tagging.OFFCPU_READ_S of CPU time since the last read; otherwise
              the last read, which it cannot differ from by more than that
One row per row of `steps`:
  step_cpu, step_runq   (start, end): the same clocks at the step's start and end
So the readings of a step cut it into intervals, each with a wall, CPU and run-queue
time (analysis/threadtime.py).
And one row per injected stall (positive controls, engine.config.INJECTION_KINDS):
  injections  (kind, step, start, end, injected ms, request or -1)
runq_reads: how many times the run-queue clock was read (0-d).
gc_tracked: objects the cyclic collector tracked just before and just after serving
(read outside the timed run: the start-up heap, and what serving added to it).
Clocks are NaN when the run tagged wall time only (Config.thread_clocks False).
Schema 3 (schema 2 had no gc_tracked; schema 1 had seg_cpu and seg_runq with a start
and end per segment). The config records the forward pass (`forward`).
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

SCHEMA_VERSION = 3


def arrays_from_engine(eng, trace_rows) -> dict[str, np.ndarray]:
    o = eng.origin
    steps = np.array([(a - o, b - o, nd, npf, g, pre, sin) for a, b, nd, npf, g, pre, sin in eng.steps],
                     dtype=np.float64).reshape(-1, 7)
    segs = np.array([(i, c, a - o, b - o) for i, c, _, a, b in eng.segs], dtype=np.float64).reshape(-1, 4)
    detail = np.array([d for _, _, d, _, _ in eng.segs], dtype=np.int8)
    clocks = np.array(eng.seg_clocks, dtype=np.float64).reshape(-1, 2)
    seg_cpu = clocks[:, 0] - eng.cpu_origin           # thread CPU seconds since start
    seg_runq = clocks[:, 1] - eng.runq_origin         # run-queue wait seconds since start
    sclocks = np.array(eng.step_clocks, dtype=np.float64).reshape(-1, 4)
    inj = np.array(eng.injected, dtype=np.float64).reshape(-1, 6)
    inj[:, 2:4] -= o
    gcs = np.array([(a - o, b - o, g) for a, b, g in eng.gc.pauses], dtype=np.float64).reshape(-1, 3)
    emis = np.array([(r.rid, t - o, k) for r in eng.done for t, k in zip(r.emit_t, r.emit_step)],
                    dtype=np.float64).reshape(-1, 3)
    evs = np.array([(r.rid, a - o, np.nan if b is None else b - o) for r in eng.done for a, b in r.evictions],
                   dtype=np.float64).reshape(-1, 3)
    reqs = np.array([(r.rid, r.arrival - o, len(r.prompt), r.max_new, r.first_token_t - o) for r in eng.done],
                    dtype=np.float64).reshape(-1, 5)
    return {"steps": steps, "segs": segs, "gcs": gcs, "emissions": emis, "evictions": evs,
            "requests": reqs, "trace": np.asarray(trace_rows, dtype=np.float64).reshape(-1, 4),
            "seg_detail": detail, "seg_cpu_end": seg_cpu, "seg_runq_end": seg_runq,
            "seg_work": np.array(eng.seg_work, dtype=np.int64),
            "step_cpu": sclocks[:, :2] - eng.cpu_origin, "step_runq": sclocks[:, 2:] - eng.runq_origin,
            "injections": inj, "runq_reads": np.array(eng.thread.runq_reads, dtype=np.int64)}


def write_atomic(path: Path, arrays: dict, wall: float, config: dict, provenance: dict) -> Path:
    """Serialise in memory, write a temp file beside the target, fsync, then rename."""
    path = Path(path)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays, wall=np.float64(wall), config=np.array(json.dumps(config)),
                        provenance=np.array(json.dumps(provenance)),
                        schema_version=np.array(SCHEMA_VERSION))
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        with open(tmp, "wb") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
