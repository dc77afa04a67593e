"""What the raw log's extra arrays say about each segment and step (schema 2 and later).

The engine reads its thread's CPU clock at each step's start and end and right after
every segment that processed something (`step_cpu`, `seg_cpu_end`), next to a wall
clock. Those readings cut a step into *clock intervals*; in each, wall time minus CPU
time is time the thread was off the CPU (preempted by another thread, or blocked) and
the run-queue clock says how much of it the thread spent runnable. Where inside an
interval that happened the log does not say, so it is spread evenly over the
interval's GC-free time: a segment and the untagged moments around it that share an
interval share its off-CPU rate. Every CPU reading sits just outside its wall reading,
so an interval errs by about a read (well under a microsecond) towards "on the CPU";
a negative difference is that error and counts as zero.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .columns import SEG, STEP
from .schemes import DETAIL_KINDS
from .runlog import RunLog
from .coverage import gc_within_s

# the steps column that counts what each finer kind of segment processed
_STEP_WORK = {"swap_in": STEP.swapped_in, "kv_reserve": STEP.preempted, "prefill": STEP.n_prefill_tok,
              "decode": STEP.n_decode}


def require(log: RunLog, *names: str) -> None:
    missing = [n for n in names if n not in log.extras]
    if missing:
        raise ValueError(f"{log.path}: the refined scheme needs the extra arrays {', '.join(missing)} "
                         f"(raw logs of schema 2 or later from this project's engine); this log has "
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
    step = log.segs[:, SEG.step].astype(np.intp)
    work = np.ones(len(fine))                 # a tokenize segment tokenized one request
    for name, col in _STEP_WORK.items():
        sel = fine == DETAIL_KINDS.index(name)
        work[sel] = log.steps[step[sel], col]
    return work


def _clocks(log: RunLog, name: str, shape: tuple) -> np.ndarray:
    x = np.asarray(log.extras[name], dtype=float)
    if x.shape != shape:
        raise ValueError(f"{log.path}: {name} must have shape {shape}, got {x.shape}")
    return x


def step_clock_ms(log: RunLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per step: wall ms, ms off the CPU (wall minus thread CPU) and ms waited on the
    run queue, unclipped (NaN where the run did not record them)."""
    require(log, "step_cpu", "step_runq")
    n = (len(log.steps), 2)
    cpu, rq = _clocks(log, "step_cpu", n), _clocks(log, "step_runq", n)
    wall = (log.steps[:, STEP.t1] - log.steps[:, STEP.t0]) * 1e3
    return wall, wall - (cpu[:, 1] - cpu[:, 0]) * 1e3, (rq[:, 1] - rq[:, 0]) * 1e3


@dataclass(frozen=True)
class ClockIntervals:
    """The steps cut at every clock reading: [start, end) in wall seconds, sorted and
    disjoint, each with the thread's CPU seconds, its seconds waited on the run queue
    and the seconds of GC inside it."""

    start: np.ndarray
    end: np.ndarray
    cpu_s: np.ndarray      # NaN where the run did not read the clocks
    runq_s: np.ndarray     # NaN where the OS does not say
    gc_s: np.ndarray

    @property
    def offcpu_s(self) -> np.ndarray:
        """Wall minus CPU seconds, clipped at 0 (0 where the run did not read the clocks)."""
        return np.clip(np.nan_to_num(self.end - self.start - self.cpu_s, nan=0.0), 0.0, None)

    def offcpu_share(self) -> np.ndarray:
        """Share of each interval's GC-free time the thread was off the CPU, in [0, 1]."""
        return _share(self.offcpu_s, self.end - self.start - self.gc_s)

    def runq_share(self) -> np.ndarray:
        """Share of each interval's GC-free time the thread waited runnable, in [0, 1]."""
        return _share(np.nan_to_num(self.runq_s, nan=0.0), self.end - self.start - self.gc_s)

    def of(self, t_end: np.ndarray) -> np.ndarray:
        """Index of the interval holding the span that ends at each t_end (a segment's end)."""
        return np.searchsorted(self.end, t_end, side="left")


def clock_intervals(log: RunLog) -> ClockIntervals:
    """Every step's readings in time order (start, each read segment's end, end), and
    the intervals between consecutive readings of the same step."""
    require(log, "seg_cpu_end", "seg_runq_end", "step_cpu", "step_runq")
    steps, segs, gcs = log.steps, log.segs, log.gcs
    n = len(steps)
    s_cpu, s_rq = _clocks(log, "step_cpu", (n, 2)), _clocks(log, "step_runq", (n, 2))
    g_cpu = _clocks(log, "seg_cpu_end", (len(segs),))
    g_rq = _clocks(log, "seg_runq_end", (len(segs),))
    read = np.isfinite(g_cpu)
    idx = np.arange(n)
    step = np.concatenate([idx, segs[read, SEG.step].astype(np.intp), idx])
    wall = np.concatenate([steps[:, STEP.t0], segs[read, SEG.t1], steps[:, STEP.t1]])
    cpu = np.concatenate([s_cpu[:, 0], g_cpu[read], s_cpu[:, 1]])
    rq = np.concatenate([s_rq[:, 0], g_rq[read], s_rq[:, 1]])
    where = np.concatenate([np.zeros(n), np.ones(read.sum()), np.full(n, 2.0)])
    order = np.lexsort((where, wall, step))      # by step, then time; a step's start first
    step, wall, cpu, rq = step[order], wall[order], cpu[order], rq[order]
    pair = step[1:] == step[:-1]                 # consecutive readings of one step
    a, b = wall[:-1][pair], wall[1:][pair]
    return ClockIntervals(a, b, (cpu[1:] - cpu[:-1])[pair], (rq[1:] - rq[:-1])[pair],
                          gc_within_s(gcs, a, b))


def segment_gcfree_s(log: RunLog) -> np.ndarray:
    a, b = log.segs[:, SEG.t0], log.segs[:, SEG.t1]
    return (b - a) - gc_within_s(log.gcs, a, b)


def segment_clock_s(log: RunLog) -> tuple[np.ndarray, np.ndarray]:
    """(off the CPU, waited on the run queue) seconds of each segment: its GC-free time
    times its interval's shares (0 where the run did not read the clocks)."""
    iv = clock_intervals(log)
    k = iv.of(log.segs[:, SEG.t1])
    span = segment_gcfree_s(log)
    return iv.offcpu_share()[k] * span, iv.runq_share()[k] * span


def _share(off_s: np.ndarray, span_s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(span_s > 0, off_s / span_s, 0.0)
    return np.clip(np.nan_to_num(share, nan=0.0), 0.0, 1.0)
