"""What the raw log's extra arrays say about each segment and step (schema 1).

`seg_cpu` and `step_cpu` hold the engine thread's CPU clock at each segment's and
step's start and end. Wall time minus CPU time is time the thread was off the CPU:
preempted by another thread, or blocked. The CPU clock is read just outside the wall
window, so the estimate errs by the read itself (well under a microsecond) towards
"on the CPU"; a negative difference is that error and counts as zero.
"""
from __future__ import annotations

import numpy as np

from .labels import DETAIL_KINDS
from .rawlog import RunLog
from .timeline import coverage_s

_STEP_WORK = {"swap_in": 6, "kv_reserve": 5, "prefill": 3, "decode": 2}   # steps column per kind


def require(log: RunLog, *names: str) -> None:
    missing = [n for n in names if n not in log.extras]
    if missing:
        raise ValueError(f"{log.path}: the refined scheme needs the extra arrays {', '.join(missing)} "
                         f"(raw logs of schema 1 from this project's engine); this log has "
                         f"{sorted(log.extras) or 'none'}")


def segment_detail(log: RunLog) -> np.ndarray:
    """Finer kind of each segment, as an index into DETAIL_KINDS."""
    require(log, "seg_detail")
    fine = np.asarray(log.extras["seg_detail"]).astype(np.intp)
    if fine.shape != (len(log.segs),) or (len(fine) and (fine.min() < 0 or fine.max() >= len(DETAIL_KINDS))):
        raise ValueError(f"{log.path}: seg_detail must hold one code in 0..{len(DETAIL_KINDS) - 1} per segment")
    return fine


def segment_work(log: RunLog) -> np.ndarray:
    """Items each segment processed; logs that predate seg_work get it from the steps
    array (one segment per finer kind per step, so the step's count is the segment's)."""
    if "seg_work" in log.extras:
        work = np.asarray(log.extras["seg_work"], dtype=float)
        if work.shape != (len(log.segs),):
            raise ValueError(f"{log.path}: seg_work must have one entry per segment")
        return work
    fine = segment_detail(log)
    step = log.segs[:, 0].astype(np.intp)
    work = np.ones(len(fine))                 # a tokenize segment tokenized one request
    for name, col in _STEP_WORK.items():
        sel = fine == DETAIL_KINDS.index(name)
        work[sel] = log.steps[step[sel], col]
    return work


def _clock_pairs(log: RunLog, name: str, rows: int) -> np.ndarray | None:
    if name not in log.extras:
        return None
    x = np.asarray(log.extras[name], dtype=float)
    if x.shape != (rows, 2):
        raise ValueError(f"{log.path}: {name} must be ({rows}, 2), got {x.shape}")
    return x


def step_clock_ms(log: RunLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per step: wall ms, ms off the CPU (wall minus thread CPU) and ms waited on the
    run queue, unclipped (NaN where the run did not record them)."""
    require(log, "step_cpu", "step_runq")
    cpu = _clock_pairs(log, "step_cpu", len(log.steps))
    rq = _clock_pairs(log, "step_runq", len(log.steps))
    wall = (log.steps[:, 1] - log.steps[:, 0]) * 1e3
    return wall, wall - (cpu[:, 1] - cpu[:, 0]) * 1e3, (rq[:, 1] - rq[:, 0]) * 1e3


def segment_offcpu_s(log: RunLog) -> np.ndarray:
    """Seconds each segment's thread spent off the CPU (0 where clocks are missing)."""
    require(log, "seg_cpu")
    cpu = _clock_pairs(log, "seg_cpu", len(log.segs))
    off = (log.segs[:, 3] - log.segs[:, 2]) - (cpu[:, 1] - cpu[:, 0])
    return np.nan_to_num(off, nan=0.0)


def offcpu_shares(log: RunLog) -> tuple[np.ndarray, np.ndarray]:
    """(per segment, per step) share of GC-free time the thread was off the CPU, in [0, 1].

    A segment's off-CPU time is spread evenly over its GC-free part (the log does not
    say when inside the segment it happened); a step's share applies to its untagged
    part, the time between its segments. Steps without step_cpu get zero.
    """
    segs, steps, gcs = log.segs, log.steps, log.gcs
    a, b = segs[:, 2], segs[:, 3]
    gc_in_seg = coverage_s(gcs[:, 0], gcs[:, 1], b) - coverage_s(gcs[:, 0], gcs[:, 1], a)
    off = segment_offcpu_s(log)
    seg_share = _share(off, (b - a) - gc_in_seg)

    step_share = np.zeros(len(steps))
    cpu = _clock_pairs(log, "step_cpu", len(steps))
    if cpu is not None:
        step_of = segs[:, 0].astype(np.intp)
        n = len(steps)
        wall = steps[:, 1] - steps[:, 0]
        gc_in_step = coverage_s(gcs[:, 0], gcs[:, 1], steps[:, 1]) - coverage_s(gcs[:, 0], gcs[:, 1], steps[:, 0])
        untagged = wall - np.bincount(step_of, weights=b - a, minlength=n)
        untagged_gc = gc_in_step - np.bincount(step_of, weights=gc_in_seg, minlength=n)
        untagged_off = (wall - (cpu[:, 1] - cpu[:, 0])) - np.bincount(step_of, weights=off, minlength=n)
        step_share = _share(np.nan_to_num(untagged_off, nan=0.0), untagged - untagged_gc)
    return seg_share, step_share


def _share(off_s: np.ndarray, span_s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(span_s > 0, off_s / span_s, 0.0)
    return np.clip(np.nan_to_num(share, nan=0.0), 0.0, 1.0)
